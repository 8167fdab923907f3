#![doc = include_str!("../README.md")]
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

mod data;
mod error;
mod flow;
mod maf;
mod net;
mod nsf;
mod settings;
mod spline;

pub use data::{DEFAULT_VALIDATION_FRACTION, RoundRows, TrainingSet};
pub use error::{NeuralError, Result};
pub use flow::{ConditionalFlow, FILE_VERSION, FitReport};
pub use settings::{
    FlowSettings, MAX_BINS, MAX_BLOCKS, MAX_DIM, MAX_HIDDEN, MAX_LAYERS, MAX_PARAMETERS,
    MafSettings, NsfSettings, TrainSettings,
};
