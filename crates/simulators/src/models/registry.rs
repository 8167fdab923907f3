//! The papers' models by name, each with its paper prior, parameter names, true θ and
//! embedded data set: what "run the paper's SIR model with its paper prior" needs.
//!
//! [`Model::builtin`] builds a model from a [`ModelSpec`] (the name and the few settings a
//! user may change, everything else the paper's); [`ModelPrior`] and [`ModelSim`] are its
//! [`Prior`] and [`Simulator`] views. A user's own model joins the same enum as
//! [`Model::User`] (any type implementing [`UserModel`]); [`Model::with_prior`] replaces a
//! model's prior by a [`DeclaredPrior`] over the same parameters.
//!
//! | name | model | paper prior | true θ | embedded data |
//! |---|---|---|---|---|
//! | `gaussian-mean` | [`GaussianMean`] | N(μ₀, τ₀²) (default N(0, 10²)) | μ = 1 | simulated at θ* |
//! | `uniform-mixture` | [`UniformMixture`], k = 5 | Dirichlet(1) (ABCDP §6.1) | ABCDP's θ* | simulated |
//! | `cubic-outbreak` | [`CubicOutbreak`] | i.i.d. N(0, 1) | — (`n` ≠ 18: [`SYNTHETIC_THETA`]) | Netherlands 2020 cases (`n` ≠ 18: simulated at θ*) |
//! | `sir` | [`SirTauLeap`] | log-normal β, γ (Xiong et al. §4.1) | [`sir::theta_star`] | simulated |
//! | `linear-regression` | [`LinearRegression`] with 2 predictors | i.i.d. N(0, 1) | β* of Xiong et al. §4.2 | simulated |
//! | `tuberculosis` | [`Tuberculosis`] | [`TbPrior::reference`] | Lintusaari et al.'s θ | simulated |
//! | `banana` | [`Banana`] (2-D thesis setting) | the thesis prior | (0, 3) | simulated |
//!
//! ```
//! use dpinfer_simulators::models::registry::{Model, ModelName, ModelPrior, ModelSim, ModelSpec};
//! use dpinfer_simulators::{Prior, SimStream, Simulator};
//!
//! let sir: Model = Model::builtin(&ModelSpec::new(ModelName::Sir))?;
//! assert_eq!(sir.names(), ["beta", "gamma"]);
//! let data = sir.default_data(1)?; // one simulation at the true θ
//! let mut theta = [0.0; 2];
//! let mut rng = SimStream::new(7, 0);
//! ModelPrior(&sir).sample(&mut rng, &mut theta)?;
//! let mut out = vec![0.0; ModelSim(&sir).output_dim()];
//! ModelSim(&sir).simulate(&theta, &mut rng, &mut out)?;
//! assert_eq!(out.len(), data.len());
//! # Ok::<(), dpinfer_simulators::models::registry::ModelError>(())
//! ```

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use rand_core::Rng;

use super::banana::{Banana, BananaSettings, THESIS_THETA_1, THESIS_THETA_2};
use super::cubic::{CubicOutbreak, NETHERLANDS_CASES, SYNTHETIC_THETA};
use super::gaussian::GaussianMean;
use super::linreg::{BETA_STAR, LinRegSettings, LinearRegression};
use super::mixture::{PAPER_N, THETA_STAR, UniformMixture};
use super::sir::{self, SirSettings, SirTauLeap};
use super::tb::{TRUE_THETA, TbPrior, Tuberculosis};
use crate::prior::{DeclaredPrior, Dirichlet, IidNormal, LogNormal, Marginal, Product};
use crate::summaries::{DeclaredSummary, SummaryError};
use crate::{Prior, Replicates, SimError, SimStream, Simulator, StreamVersion};

/// Stream domain of the embedded observed data set ([`Model::default_data`]).
pub const OBS_DOMAIN: u64 = 0x4f42_5300; // "OBS"

/// True mean of the embedded gaussian-mean data set.
pub const GAUSSIAN_TRUE_MEAN: f64 = 1.0;

/// The name of a built-in model.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ModelName {
    /// `gaussian-mean`.
    GaussianMean,
    /// `uniform-mixture`.
    UniformMixture,
    /// `cubic-outbreak`.
    CubicOutbreak,
    /// `sir`.
    Sir,
    /// `linear-regression`.
    LinearRegression,
    /// `tuberculosis`.
    Tuberculosis,
    /// `banana`.
    Banana,
}

impl ModelName {
    /// Every built-in model, in the order of the docs.
    pub const ALL: [Self; 7] = [
        Self::GaussianMean,
        Self::UniformMixture,
        Self::CubicOutbreak,
        Self::Sir,
        Self::LinearRegression,
        Self::Tuberculosis,
        Self::Banana,
    ];

    /// The name as written in a configuration (`"sir"`, `"gaussian-mean"`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::GaussianMean => "gaussian-mean",
            Self::UniformMixture => "uniform-mixture",
            Self::CubicOutbreak => "cubic-outbreak",
            Self::Sir => "sir",
            Self::LinearRegression => "linear-regression",
            Self::Tuberculosis => "tuberculosis",
            Self::Banana => "banana",
        }
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ModelName {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, ModelError> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| ModelError::UnknownName(s.to_string()))
    }
}

/// Which built-in model and the settings a user may change; everything else is the paper's.
/// A setting of another model, and an `n` the model cannot have, are refused.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    /// The model.
    pub name: ModelName,
    /// Observations per data set (gaussian-mean default 100, uniform-mixture 5000, sir 10,
    /// linear-regression the paper's n, banana 10 000; cubic-outbreak 18, the paper's daily
    /// counts — another `n ≥ 2` spreads as many points over the same 18 days
    /// ([`CubicOutbreak::on_paper_window`]) and simulates the data at [`SYNTHETIC_THETA`];
    /// tuberculosis none).
    pub n: Option<usize>,
    /// gaussian-mean: noise sd σ (default 1).
    pub sigma: Option<f64>,
    /// gaussian-mean: prior mean μ₀ (default 0).
    pub prior_mean: Option<f64>,
    /// gaussian-mean: prior sd τ₀ (default 10).
    pub prior_sd: Option<f64>,
    /// sir: population K (default 10⁶).
    pub population: Option<u64>,
    /// sir: tau-leap step (default 0.5).
    pub tau: Option<f64>,
    /// sir: observation times (default 0, 17, …, 153); `n`, if given, must equal their number.
    pub obs_times: Option<Vec<f64>>,
    /// The normal sampler of the simulations (see [`StreamVersion`]).
    pub stream_version: StreamVersion,
}

impl ModelSpec {
    /// The paper's settings of `name`.
    #[must_use]
    pub const fn new(name: ModelName) -> Self {
        Self {
            name,
            n: None,
            sigma: None,
            prior_mean: None,
            prior_sd: None,
            population: None,
            tau: None,
            obs_times: None,
            stream_version: StreamVersion::V1,
        }
    }
}

/// The model a [`ModelSpec`] setting belongs to.
fn setting_owner(setting: &str) -> ModelName {
    match setting {
        "sigma" | "prior_mean" | "prior_sd" => ModelName::GaussianMean,
        _ => ModelName::Sir,
    }
}

/// Why a model could not be built or used.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ModelError {
    /// No built-in model has this name.
    UnknownName(String),
    /// A setting of another model (`sigma`, `prior_mean`, `prior_sd`: gaussian-mean;
    /// `population`, `tau`, `obs_times`: sir).
    NotApplicable {
        /// The setting.
        setting: &'static str,
        /// The model.
        model: ModelName,
    },
    /// `n` given for a model whose size is fixed, or conflicting with another setting.
    Size {
        /// The model.
        model: ModelName,
        /// The `n` given.
        n: usize,
        /// The size the model has (`None`: the model has no `n`).
        expected: Option<usize>,
    },
    /// A declared prior over other parameters than the model's θ.
    PriorNames {
        /// The model's name.
        model: &'static str,
        /// The declared prior's parameter names.
        declared: Vec<String>,
        /// The model's parameter names.
        expected: Vec<String>,
    },
    /// The model has no embedded data set (a user model).
    NoEmbeddedData,
    /// The model has no true θ to simulate its embedded data set at.
    NoTruth,
    /// A model setting or simulation failed.
    Sim(SimError),
    /// The model's declared summary refused the data.
    Summary(SummaryError),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownName(n) => {
                write!(f, "unknown model name {n:?} (expected ")?;
                for (i, m) in ModelName::ALL.iter().enumerate() {
                    write!(f, "{}{m}", if i == 0 { "" } else { ", " })?;
                }
                f.write_str(")")
            }
            Self::NotApplicable { setting, model } => write!(
                f,
                "`{setting}` applies to the {} model only, not to {model}",
                setting_owner(setting)
            ),
            Self::Size { model, n, expected } => match expected {
                Some(e) => write!(f, "n = {n}: the {model} model has {e} observations"),
                None => write!(
                    f,
                    "n = {n}: the {model} model's summaries have a fixed size"
                ),
            },
            Self::PriorNames {
                model,
                declared,
                expected,
            } => write!(
                f,
                "the declared prior has the parameters {declared:?}; the {model} model's θ is \
                 {expected:?} (one block per parameter, in this order)"
            ),
            Self::NoEmbeddedData => f.write_str(
                "a user model has no embedded data set: give the observed data (a config: \
                 [data] path = \"observed.csv\")",
            ),
            Self::NoTruth => f.write_str("the model has no true θ"),
            Self::Sim(e) => write!(f, "{e}"),
            Self::Summary(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Sim(e) => Some(e),
            Self::Summary(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SimError> for ModelError {
    fn from(e: SimError) -> Self {
        Self::Sim(e)
    }
}

impl From<SummaryError> for ModelError {
    fn from(e: SummaryError) -> Self {
        Self::Summary(e)
    }
}

/// A user's own model in the registry: a prior and a simulator over named parameters.
pub trait UserModel: Prior + Simulator {
    /// Parameter names, in θ order (as many as [`Prior::dim`]).
    fn names(&self) -> Vec<String>;
    /// The name shown for the model (default `"user model"`).
    fn label(&self) -> &'static str {
        "user model"
    }
    /// Values per observation row (the data set is `rows × row_dim`, row-major); default 1.
    fn row_dim(&self) -> usize {
        1
    }
    /// The declared summary the simulator's outputs pass through, if any.
    fn declared_summary(&self) -> Option<&DeclaredSummary> {
        None
    }
}

/// A shared user model is a user model.
#[cfg(target_has_atomic = "ptr")]
impl<U: UserModel + ?Sized> UserModel for alloc::sync::Arc<U> {
    fn names(&self) -> Vec<String> {
        (**self).names()
    }
    fn label(&self) -> &'static str {
        (**self).label()
    }
    fn row_dim(&self) -> usize {
        (**self).row_dim()
    }
    fn declared_summary(&self) -> Option<&DeclaredSummary> {
        (**self).declared_summary()
    }
}

/// No user model: the type parameter of a registry holding built-in models only. It has no
/// values, so its trait methods are never called.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NoUser {}

impl Prior for NoUser {
    fn dim(&self) -> usize {
        match *self {}
    }
    fn sample<R: Rng + ?Sized>(&self, _: &mut R, _: &mut [f64]) -> Result<(), SimError> {
        match *self {}
    }
    fn ln_density(&self, _: &[f64]) -> f64 {
        match *self {}
    }
    fn in_support(&self, _: &[f64]) -> bool {
        match *self {}
    }
    fn marginal_ln_density(&self, _: usize, _: f64) -> Option<f64> {
        match *self {}
    }
}

impl Simulator for NoUser {
    fn param_dim(&self) -> usize {
        match *self {}
    }
    fn output_dim(&self) -> usize {
        match *self {}
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        _: &[f64],
        _: &mut R,
        _: &mut [f64],
    ) -> Result<(), SimError> {
        match *self {}
    }
}

impl UserModel for NoUser {
    fn names(&self) -> Vec<String> {
        match *self {}
    }
}

/// A built-in model with its prior, a user model, or either with a declared prior.
#[derive(Debug, Clone)]
pub enum Model<U = NoUser> {
    /// y_i ~ N(μ, σ²), μ ~ N(μ₀, τ₀²): conjugate, exact posterior.
    GaussianMean(GaussianMean),
    /// Mixture of uniforms, θ ~ Dirichlet(1) (ABCDP §6.1).
    UniformMixture(UniformMixture, Dirichlet),
    /// Cubic outbreak curve (ABCDP §6.2), data: the Netherlands 2020 case counts (18 points;
    /// another size: simulated at [`SYNTHETIC_THETA`]).
    Cubic(CubicOutbreak, IidNormal),
    /// SIR by tau-leaping (Xiong et al. §4.1).
    Sir(Box<SirTauLeap>, Product<LogNormal, LogNormal>),
    /// Banana (Räisä 2021 §2.3), for MCMC.
    Banana(Banana),
    /// Linear regression through clamped, normalised sufficient statistics (Xiong et al. §4.2),
    /// two predictors.
    LinReg(LinearRegression<2>, IidNormal),
    /// Tuberculosis birth–death–mutation model with 8 genotype summaries (ABCDP §6.3).
    Tuberculosis(Tuberculosis, TbPrior),
    /// A user's model (its own prior and simulator).
    User(U),
    /// A model whose prior is replaced by a declared prior over the same parameters (in θ
    /// order): the simulator, data and truth are the inner model's. Code with a
    /// model-specific prior (an exact MCMC prior, a simplex check) should not recognise it.
    WithPrior(Box<(Self, DeclaredPrior)>),
    /// `n ≥ 2` independent data sets of the inner model per simulation ([`Model::replicated`],
    /// [`Replicates`]): the prior, names and truth are the inner model's, an output is `n`
    /// inner outputs one after the other, and the embedded data set is `n` data sets at the
    /// true θ. The design of ABCDP §6.3 (Park, Vinaroz & Jitkrittum 2021), compared by the
    /// mean of per-data-set clipped distances.
    Replicated(Box<(Self, usize)>),
}

/// [`Prior`] view of a [`Model`].
#[derive(Debug, Clone, Copy)]
pub struct ModelPrior<'a, U = NoUser>(pub &'a Model<U>);

/// [`Simulator`] view of a [`Model`].
#[derive(Debug, Clone, Copy)]
pub struct ModelSim<'a, U = NoUser>(pub &'a Model<U>);

impl<U> Model<U> {
    /// Builds the built-in model of `spec`.
    ///
    /// # Errors
    /// [`ModelError::NotApplicable`] for a setting of another model;
    /// [`ModelError::Size`] for an `n` the model cannot have (any for tuberculosis, sir other
    /// than the number of `obs_times`); [`ModelError::Sim`] for invalid settings (named by the
    /// model's constructor: cubic-outbreak's `n` below 2, …).
    pub fn builtin(spec: &ModelSpec) -> Result<Self, ModelError> {
        let (n, version) = (spec.n, spec.stream_version);
        for (setting, set) in [
            ("sigma", spec.sigma.is_some()),
            ("prior_mean", spec.prior_mean.is_some()),
            ("prior_sd", spec.prior_sd.is_some()),
            ("population", spec.population.is_some()),
            ("tau", spec.tau.is_some()),
            ("obs_times", spec.obs_times.is_some()),
        ] {
            if set && setting_owner(setting) != spec.name {
                return Err(ModelError::NotApplicable {
                    setting,
                    model: spec.name,
                });
            }
        }
        Ok(match spec.name {
            ModelName::GaussianMean => Self::GaussianMean(
                GaussianMean::new(
                    n.unwrap_or(100),
                    spec.sigma.unwrap_or(1.0),
                    spec.prior_mean.unwrap_or(0.0),
                    spec.prior_sd.unwrap_or(10.0),
                )?
                .with_stream_version(version),
            ),
            ModelName::UniformMixture => {
                let m = UniformMixture::new(5, n.unwrap_or(PAPER_N))?;
                let p = m.prior()?;
                Self::UniformMixture(m, p)
            }
            ModelName::CubicOutbreak => {
                let m = match n {
                    // The paper's curve (what `on_paper_window(18)` builds, stated as such).
                    None => CubicOutbreak::paper(),
                    Some(n) if n == NETHERLANDS_CASES.len() => CubicOutbreak::paper(),
                    Some(n) => CubicOutbreak::on_paper_window(n)?,
                }
                .with_stream_version(version);
                let p = m.prior()?;
                Self::Cubic(m, p)
            }
            ModelName::Sir => {
                let mut s = SirSettings::paper();
                if let Some(k) = spec.population {
                    s.population = k;
                }
                if let Some(t) = &spec.obs_times {
                    if let Some(n) = n
                        && n != t.len()
                    {
                        return Err(ModelError::Size {
                            model: spec.name,
                            n,
                            expected: Some(t.len()),
                        });
                    }
                    s = s.with_times(t)?;
                } else if let Some(n) = n {
                    s.n_obs = n;
                }
                let m = SirTauLeap::new(s, spec.tau.unwrap_or(0.5))?;
                Self::Sir(Box::new(m), sir::paper_prior()?)
            }
            ModelName::LinearRegression => {
                let mut s = LinRegSettings::paper();
                if let Some(n) = n {
                    s.n = n;
                }
                let m = LinearRegression::new(s)?.with_stream_version(version);
                let p = m.prior()?;
                Self::LinReg(m, p)
            }
            ModelName::Tuberculosis => {
                if let Some(n) = n {
                    return Err(ModelError::Size {
                        model: spec.name,
                        n,
                        expected: None,
                    });
                }
                Self::Tuberculosis(Tuberculosis::reference(), TbPrior::reference())
            }
            ModelName::Banana => {
                let mut s = BananaSettings::thesis_2d();
                s.n = n.unwrap_or(10_000);
                Self::Banana(Banana::new(s)?.with_stream_version(version))
            }
        })
    }

    /// The model behind a declared prior ([`Model::WithPrior`]), otherwise `self`: for
    /// checks that depend on the simulator and its statistic only, never on the prior.
    #[must_use]
    pub fn base(&self) -> &Self {
        match self {
            Self::WithPrior(b) => b.0.base(),
            _ => self,
        }
    }

    /// The number of independent data sets per simulation: `n` of [`Model::Replicated`],
    /// otherwise 1.
    #[must_use]
    pub fn datasets(&self) -> usize {
        match self {
            Self::Replicated(b) => b.1,
            _ => 1,
        }
    }

    /// The built-in model's name, `None` for a user model.
    #[must_use]
    pub fn builtin_name(&self) -> Option<ModelName> {
        Some(match self {
            Self::GaussianMean(_) => ModelName::GaussianMean,
            Self::UniformMixture(..) => ModelName::UniformMixture,
            Self::Cubic(..) => ModelName::CubicOutbreak,
            Self::Sir(..) => ModelName::Sir,
            Self::Banana(_) => ModelName::Banana,
            Self::LinReg(..) => ModelName::LinearRegression,
            Self::Tuberculosis(..) => ModelName::Tuberculosis,
            Self::User(_) => return None,
            Self::WithPrior(b) => return b.0.builtin_name(),
            Self::Replicated(b) => return b.0.builtin_name(),
        })
    }

    /// The true θ of the embedded data set, when there is one.
    #[must_use]
    pub fn truth(&self) -> Option<Vec<f64>> {
        match self {
            Self::GaussianMean(_) => Some(vec![GAUSSIAN_TRUE_MEAN]),
            Self::UniformMixture(..) => Some(THETA_STAR.to_vec()),
            Self::Sir(..) => Some(sir::theta_star().to_vec()),
            Self::Banana(b) => {
                let mut t = vec![0.0; b.settings().dim];
                t[0] = THESIS_THETA_1;
                t[1] = THESIS_THETA_2;
                Some(t)
            }
            Self::LinReg(..) => Some(BETA_STAR.to_vec()),
            Self::Tuberculosis(..) => Some(TRUE_THETA.to_vec()),
            // The real data set has no true θ; another size is simulated at the stated θ*.
            Self::Cubic(m, _) => {
                (m.output_dim() != NETHERLANDS_CASES.len()).then(|| SYNTHETIC_THETA.to_vec())
            }
            Self::User(_) => None,
            Self::WithPrior(b) => b.0.truth(),
            Self::Replicated(b) => b.0.truth(),
        }
    }

    /// Whether the data set is i.i.d. rows, so that its size may follow an observed data
    /// set (gaussian-mean, uniform-mixture, banana; not several data sets).
    #[must_use]
    pub fn iid_rows(&self) -> bool {
        match self {
            Self::WithPrior(b) => b.0.iid_rows(),
            _ => matches!(
                self,
                Self::GaussianMean(_) | Self::UniformMixture(..) | Self::Banana(_)
            ),
        }
    }
}

impl<U: UserModel> Model<U> {
    /// The name shown to people: the model's name, `"<name> (declared prior)"` with a
    /// declared prior, [`UserModel::label`] for a user model.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::GaussianMean(_) => "gaussian-mean",
            Self::UniformMixture(..) => "uniform-mixture",
            Self::Cubic(..) => "cubic-outbreak",
            Self::Sir(..) => "sir",
            Self::Banana(_) => "banana",
            Self::LinReg(..) => "linear-regression",
            Self::Tuberculosis(..) => "tuberculosis",
            Self::User(m) => m.label(),
            Self::Replicated(b) => b.0.name(),
            Self::WithPrior(b) => match &b.0 {
                Self::GaussianMean(_) => "gaussian-mean (declared prior)",
                Self::UniformMixture(..) => "uniform-mixture (declared prior)",
                Self::Cubic(..) => "cubic-outbreak (declared prior)",
                Self::Sir(..) => "sir (declared prior)",
                Self::Banana(_) => "banana (declared prior)",
                Self::LinReg(..) => "linear-regression (declared prior)",
                Self::Tuberculosis(..) => "tuberculosis (declared prior)",
                Self::User(_) | Self::WithPrior(_) | Self::Replicated(_) => "declared prior",
            },
        }
    }

    /// `n` independent data sets of this model per simulation ([`Model::Replicated`]); `n = 1`
    /// is the model itself (today's outputs, bit for bit), and replicating a replicated model
    /// multiplies the counts.
    ///
    /// # Errors
    /// [`ModelError::Sim`] with [`SimError::InvalidSize`] (name `"datasets"`) for `n = 0` or
    /// an output length that overflows.
    pub fn replicated(self, n: usize) -> Result<Self, ModelError> {
        let (inner, n) = match self {
            Self::Replicated(b) => {
                let (inner, k) = *b;
                let n = k.checked_mul(n).ok_or(SimError::InvalidSize {
                    name: "datasets",
                    value: u64::try_from(n).unwrap_or(u64::MAX),
                })?;
                (inner, n)
            }
            m => (m, n),
        };
        if n == 1 {
            return Ok(inner);
        }
        let len = ModelSim(&inner).output_dim();
        if n == 0 || len.checked_mul(n).is_none() {
            return Err(SimError::InvalidSize {
                name: "datasets",
                value: u64::try_from(n).unwrap_or(u64::MAX),
            }
            .into());
        }
        Ok(Self::Replicated(Box::new((inner, n))))
    }

    /// dim θ.
    #[must_use]
    pub fn dim(&self) -> usize {
        ModelSim(self).param_dim()
    }

    /// Parameter names, in θ order.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect();
        match self {
            Self::GaussianMean(_) => s(&["mu"]),
            Self::UniformMixture(..) => (1..=5).map(|i| alloc::format!("theta{i}")).collect(),
            Self::Cubic(..) => (0..4).map(|i| alloc::format!("a{i}")).collect(),
            Self::Sir(..) => s(&["beta", "gamma"]),
            Self::Banana(b) => (1..=b.settings().dim)
                .map(|i| alloc::format!("theta{i}"))
                .collect(),
            Self::LinReg(..) => s(&["beta0", "beta1", "beta2"]),
            Self::Tuberculosis(..) => s(&["R1", "t1", "R2", "beta"]),
            Self::User(m) => m.names(),
            Self::WithPrior(b) => b.0.names(),
            Self::Replicated(b) => b.0.names(),
        }
    }

    /// Length of one observation row: the data set is `rows × row_dim`, row-major, and the
    /// MMD compares the sets of rows. Curves (cubic, SIR) are sets of 1-D values for the MMD
    /// and one summary vector for the L2 distance.
    #[must_use]
    pub fn row_dim(&self) -> usize {
        match self {
            Self::Banana(b) => b.settings().dim,
            Self::User(m) => m.row_dim(),
            Self::WithPrior(b) => b.0.row_dim(),
            Self::Replicated(b) => b.0.row_dim(),
            _ => 1,
        }
    }

    /// Values in one simulated data set.
    #[must_use]
    pub fn output_len(&self) -> usize {
        ModelSim(self).output_dim()
    }

    /// The paper prior as a [`DeclaredPrior`] with the names of its blocks (one per block: a
    /// Dirichlet block of k parameters `theta1 … thetak` is named `theta`) — the same density,
    /// support and parameter order (tested) — for the models whose prior is a product of
    /// declarable distributions; `None` for tuberculosis (truncated joint constraints),
    /// banana (the thesis prior), user models and declared priors. Edit the blocks to
    /// override the prior with [`Model::with_prior`].
    ///
    /// # Errors
    /// Never for a validated model (kept fallible for the prior constructors).
    pub fn paper_prior(&self) -> Result<Option<(DeclaredPrior, Vec<String>)>, ModelError> {
        let iid = |p: &IidNormal, names: Vec<String>| {
            let one = Marginal::Normal(p.marginal());
            (vec![one; p.dim()], names)
        };
        let (blocks, names) = match self {
            Self::GaussianMean(m) => (vec![Marginal::Normal(m.prior())], vec!["mu".into()]),
            Self::UniformMixture(_, p) => (vec![Marginal::Dirichlet(*p)], vec!["theta".into()]),
            Self::Cubic(_, p) | Self::LinReg(_, p) => iid(p, self.names()),
            Self::Sir(_, p) => (
                vec![Marginal::LogNormal(p.a), Marginal::LogNormal(p.b)],
                vec!["beta".into(), "gamma".into()],
            ),
            Self::Banana(_)
            | Self::Tuberculosis(..)
            | Self::User(_)
            | Self::WithPrior(_)
            | Self::Replicated(_) => {
                return Ok(None);
            }
        };
        Ok(Some((DeclaredPrior::new(blocks)?, names)))
    }

    /// The same model with its prior replaced by `prior`, whose blocks are named `names`
    /// (in θ order; a Dirichlet block of k names `theta1 … thetak`).
    ///
    /// # Errors
    /// [`ModelError::PriorNames`] unless `names` are this model's parameter names in order
    /// and `prior` has that dimension.
    pub fn with_prior(self, prior: DeclaredPrior, names: &[String]) -> Result<Self, ModelError> {
        let expected = self.names();
        if names != expected.as_slice() || prior.dim() != expected.len() {
            return Err(ModelError::PriorNames {
                model: self.name(),
                declared: names.to_vec(),
                expected,
            });
        }
        Ok(match self {
            Self::WithPrior(b) => Self::WithPrior(Box::new((b.0, prior))),
            // The prior goes inside: the replicates stay the outer layer.
            Self::Replicated(b) => {
                let (inner, n) = *b;
                Self::Replicated(Box::new((inner.with_prior(prior, names)?, n)))
            }
            m => Self::WithPrior(Box::new((m, prior))),
        })
    }

    /// The declared summary of a user model, if any (none for several data sets: its
    /// sensitivity is derived for one).
    #[must_use]
    pub fn declared_summary(&self) -> Option<&DeclaredSummary> {
        match self {
            Self::User(m) => m.declared_summary(),
            Self::WithPrior(b) => b.0.declared_summary(),
            _ => None,
        }
    }

    /// The observed data as the distance sees them: a user model's declared library summary
    /// of the raw observations, otherwise `data` unchanged.
    ///
    /// # Errors
    /// [`ModelError::Summary`] for data of the wrong length or NaN values.
    pub fn summarise_observed(&self, data: Vec<f64>) -> Result<Vec<f64>, ModelError> {
        match self.declared_summary() {
            Some(s) if s.summarises_data() => Ok(s.compute(&data)?),
            _ => Ok(data),
        }
    }

    /// The sensitivity of the clipped weighted L2 distance to the observed summary that a
    /// declared summary justifies, carrying its neighbouring relation and whether it is the
    /// user's word ([`DeclaredSummary::distance_sensitivity`]); `None` when only the clip C
    /// bounds it.
    ///
    /// # Errors
    /// [`ModelError::Summary`] for invalid weights or clip.
    pub fn summary_sensitivity(
        &self,
        weights: &[f64],
        clip: f64,
    ) -> Result<Option<dpinfer_distances::Sensitivity>, ModelError> {
        match self.declared_summary() {
            Some(s) => Ok(s.distance_sensitivity(weights, clip)?),
            None => Ok(None),
        }
    }

    /// The embedded observed data set: the paper's data (cubic-outbreak with its 18 points),
    /// or one simulation at the true θ from `SimStream::with_domain(seed, OBS_DOMAIN, 0)`
    /// (cubic-outbreak with another `n`: the noise-free curve at [`SYNTHETIC_THETA`]) — for
    /// [`Model::Replicated`], `n` data sets in a row from that stream, the first of them the
    /// inner model's embedded data set (the 18-point cubic-outbreak has one real data set and
    /// no true θ: [`ModelError::NoTruth`]).
    ///
    /// # Errors
    /// [`ModelError::NoEmbeddedData`] for a user model; simulator failures.
    pub fn default_data(&self, seed: u64) -> Result<Vec<f64>, ModelError> {
        match self {
            Self::Cubic(m, _) if m.output_dim() == NETHERLANDS_CASES.len() => {
                return Ok(NETHERLANDS_CASES.to_vec());
            }
            // The embedded data set does not depend on the prior.
            Self::WithPrior(b) => return b.0.default_data(seed),
            Self::User(_) => return Err(ModelError::NoEmbeddedData),
            _ => {}
        }
        let truth = self.truth().ok_or(ModelError::NoTruth)?;
        let mut out = vec![0.0; ModelSim(self).output_dim()];
        let mut rng = SimStream::with_domain(seed, OBS_DOMAIN, 0);
        ModelSim(self).simulate(&truth, &mut rng, &mut out)?;
        Ok(out)
    }
}

/// One arm per variant: `$p` is the variant's prior, `$s` its simulator.
macro_rules! each_prior {
    ($model:expr, $p:ident => $e:expr, $b:ident => $w:expr) => {
        match $model {
            Model::GaussianMean(m) => {
                let $p = m.prior();
                $e
            }
            Model::UniformMixture(_, $p) => $e,
            Model::Cubic(_, $p) => $e,
            Model::Sir(_, $p) => $e,
            Model::Banana(m) => {
                let $p = m.prior();
                $e
            }
            Model::LinReg(_, $p) => $e,
            Model::Tuberculosis(_, $p) => $e,
            Model::User($p) => $e,
            Model::Replicated(r) => {
                let $p = &ModelPrior(&r.0);
                $e
            }
            Model::WithPrior($b) => $w,
        }
    };
}

macro_rules! each_sim {
    ($model:expr, $s:ident => $e:expr) => {
        match $model {
            Model::GaussianMean($s) => $e,
            Model::UniformMixture($s, _) => $e,
            Model::Cubic($s, _) => $e,
            Model::Sir($s, _) => $e,
            Model::Banana($s) => $e,
            Model::LinReg($s, _) => $e,
            Model::Tuberculosis($s, _) => $e,
            Model::User($s) => $e,
            Model::WithPrior(b) => {
                let $s = &ModelSim(&b.0);
                $e
            }
            Model::Replicated(r) => {
                // `n` and the output length were checked by `Model::replicated`.
                let $s = &Replicates::checked_before(ModelSim(&r.0), r.1);
                $e
            }
        }
    };
}

impl<U: UserModel> Prior for ModelPrior<'_, U> {
    fn dim(&self) -> usize {
        each_prior!(self.0, p => p.dim(), b => b.1.dim())
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        each_prior!(self.0, p => p.sample(rng, out), b => b.1.sample(rng, out))
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        each_prior!(self.0, p => p.ln_density(theta), b => b.1.ln_density(theta))
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        each_prior!(self.0, p => p.in_support(theta), b => b.1.in_support(theta))
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        each_prior!(
            self.0,
            p => p.marginal_ln_density(j, x),
            b => b.1.marginal_ln_density(j, x)
        )
    }
}

impl<U: UserModel> Simulator for ModelSim<'_, U> {
    fn param_dim(&self) -> usize {
        each_sim!(self.0, s => s.param_dim())
    }
    fn output_dim(&self) -> usize {
        each_sim!(self.0, s => s.output_dim())
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        each_sim!(self.0, s => s.simulate(theta, rng, out))
    }
}
