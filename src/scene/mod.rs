//! L3: scene files (TOML) → validated values → a simulation world.
