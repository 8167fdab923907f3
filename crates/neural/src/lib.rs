#![doc = include_str!("../README.md")]
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

mod data;
mod error;
mod flow;
mod fused;
mod maf;
mod net;
mod nsf;
mod sequential;
mod settings;
mod spline;

pub use data::{DEFAULT_VALIDATION_FRACTION, RoundRows, TrainingSet};
pub use error::{NeuralError, Result};
pub use flow::{ConditionalFlow, FILE_VERSION, FitReport, MAX_ATOMS};
pub use sequential::{
    ChainSettings, MAX_CHAINS, MAX_NOISE_DRAWS, MAX_ROUNDS, MAX_SIMULATIONS, MAX_VALUES,
    MCMC_DOMAIN, McmcReport, NOISE_DOMAIN, NeuralPosterior, PROPOSAL_DOMAIN, ProposalReport,
    RoundObserver, RoundReport, SIMULATION_DOMAIN, SequentialSettings, Sple, Sppe, TRAIN_DOMAIN,
    sple, sple_observed, sppe, sppe_observed,
};
pub use settings::{
    FlowSettings, MAX_BINS, MAX_BLOCKS, MAX_DIM, MAX_HIDDEN, MAX_LAYERS, MAX_PARAMETERS,
    MafSettings, NsfSettings, SplineImpl, TrainSettings,
};
