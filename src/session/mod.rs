//! L3: recordings and exports (trajectory .npz).
