//! Shard files of the public simulation step: the library's format and folder checks
//! ([`dpinfer_ledger::shard`]: `DPISHRD2`, CRC-32, `verify_dir`, `merge_dir`), re-exported.

pub use dpinfer_ledger::shard::{
    MAX_SHARDS, ShardHeader, VerifyReport, first_non_finite, merge_dir, read, shard_file_name,
    shard_range, verify_dir, write_atomic,
};
