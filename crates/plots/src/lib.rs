#![doc = include_str!("../README.md")]

mod axes;
mod error;
mod layout;
mod line;
mod marginal;
mod pairs;
mod stats;
mod trace;

pub use axes::CHAR_EM;
pub use error::PlotError;
pub use layout::{Problem, layout_problems};
pub use line::{Chart, Series, line_chart};
pub use marginal::{Marginal, PriorCurve, PriorSource};
pub use pairs::{Column, MAX_PAIR_COLUMNS, PairPlot};
pub use stats::{MAX_RESAMPLED, RankHistograms, rank_histograms, resample};
pub use trace::{rank_plot, trace_plot, trace_rank_plot};

/// Largest magnitude of a plotted value: finite values beyond ±1e300 are refused
/// ([`PlotError::TooLarge`]) so that no axis span, padding or tick computation overflows.
pub const MAX_ABS: f64 = 1e300;

/// Most chains (consecutive parts of the draws) a rank plot splits a sequence into.
pub const MAX_CHAINS: usize = 64;
