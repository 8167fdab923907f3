#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;

/// `with_stream_version` and `stream_version` for a model whose `version: StreamVersion` field
/// selects its normal sampler; the doc lines given first describe what the version changes.
macro_rules! stream_versioned {
    ($(#[$doc:meta])* impl[$($g:tt)*] $t:ty) => {
        impl<$($g)*> $t {
            /// The same model drawing its normals with the sampler of `version` (default
            /// [`StreamVersion::V1`](crate::StreamVersion::V1), the polar method;
            /// [`StreamVersion::V2`](crate::StreamVersion::V2), the ziggurat, is ≈ 6× faster per
            /// normal). Changes the simulated numbers, never their distribution.
            ///
            $(#[$doc])*
            #[must_use]
            pub const fn with_stream_version(mut self, version: crate::StreamVersion) -> Self {
                self.version = version;
                self
            }

            /// The stream version of the simulations (see `with_stream_version`).
            #[must_use]
            pub const fn stream_version(&self) -> crate::StreamVersion {
                self.version
            }
        }
    };
}

mod batch;
pub mod dist;
mod error;
mod fn_sim;
pub mod likelihood;
pub mod prior;
pub mod qmc;
mod simulator;
pub mod stream;
pub mod summaries;
mod ziggurat_normal_tables;
mod ziggurat_tables;

pub use batch::{BatchSimulator, RowSimulator, Rowless, check_batch};
pub use error::SimError;
pub use fn_sim::FnSimulator;
pub use likelihood::{BatchClipSum, ClipSum, RowGradient, RowLikelihood};
pub use prior::Prior;
pub use simulator::{IncrementalSimulator, Replicates, RunEnd, Simulator};
pub use stream::{SimStream, StreamVersion};
pub mod models;
