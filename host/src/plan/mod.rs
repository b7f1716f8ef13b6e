//! What to run: `rigs.toml` parsed with spans, validated against the rigs' descriptors and expanded into
//! cells with their sampling plans and deadlines; shards of a matrix. No I/O beyond reading `rigs.toml`.

pub(crate) mod config;
pub(crate) mod interleave;
pub(crate) mod matrix;
pub(crate) mod settings;
pub(crate) mod shard;
pub(crate) mod unbuilt;
pub(crate) mod values;
