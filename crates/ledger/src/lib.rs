#![doc = include_str!("../README.md")]
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

mod error;
pub mod files;
mod fingerprint;
mod ledger;
pub mod mac;
pub mod shard;

pub use error::{Error, Result, ShardFault};
pub use files::{
    DirLock, Replace, check_target, read_bounded, read_input, read_input_text, write_atomic,
    write_atomic_with,
};
pub use fingerprint::{Fingerprint, fingerprint};
pub use ledger::{
    Claimed, LEDGER_FILE, LEDGER_VERSION, Ledger, RELEASE_FILE, guarded, once_done, once_start,
};
