//! L3: recordings and exports. So far: the trajectory `.npz` of `suture simulate`.

pub mod npz;
