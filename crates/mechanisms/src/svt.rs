//! The sparse vector technique as used by ABCDP (Park, Vinaroz & Jitkrittum 2021,
//! Algorithm 1), run on a grid with exact discrete Laplace noise.
//!
//! # Which broken SVT variants this API cannot express
//!
//! Lyu, Su & Li (2017) list SVT variants that are *not* private. Each is ruled out here by
//! construction (see the tests `svt_broken_variants_*` and the `compile_fail` examples
//! below):
//!
//! 1. **No stop after `c` positives** — [`SparseVector::query`] returns
//!    [`MechanismError::BudgetExhausted`] once `c` positives were released.
//! 2. **No query noise** — the query noise scale is not a parameter: it is always `2b`.
//! 3. **Query noise not scaled with `c`** — the cost is computed by the type from `c` and
//!    `b` (Theorem 1), never supplied by the caller; [`SparseVector::from_epsilon`] derives
//!    `b` from the total budget.
//! 4. **Releasing noisy values** — `query` returns only the indicator bit. The noisy
//!    threshold and noisy query values are private fields with no accessor, and `Debug`
//!    does not print them:
//!
//! ```compile_fail
//! # use dpinfer_mechanisms::{SparseVector, SparseVectorSettings};
//! let svt = SparseVector::from_epsilon(SparseVectorSettings::default(), 1.0).unwrap();
//! let t = svt.noisy_threshold; // private field: does not compile
//! ```
//!
//! ```compile_fail
//! # use dpinfer_mechanisms::{SparseVector, SparseVectorSettings};
//! let s = SparseVectorSettings { query_scale: 0.0, ..SparseVectorSettings::default() };
//! ```

use core::fmt;

use dpinfer_accountants::Event;

use crate::MechanismError;
use crate::error::{finite, positive};
use crate::grid::{Bridge, Grid, LAPLACE_PRECISION_BITS};
use crate::laplace::pure_epsilon;
use crate::rng::NoiseRng;
use crate::sampling::discrete_laplace;

/// Public settings of a sparse-vector run.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SparseVectorSettings {
    /// The public threshold `ε_abc`; a query is *positive* when its noisy value is `≤` the
    /// noisy threshold.
    pub threshold: f64,
    /// Sensitivity Δ of the (clamped) query, `sup |q(D) − q(D′)|`, under the caller's
    /// neighbouring relation.
    pub sensitivity: f64,
    /// Public clamping bounds of the query values (e.g. `[0, C]` for a clipped distance).
    pub lo: f64,
    /// Upper clamping bound.
    pub hi: f64,
    /// Stop after this many positive answers. `c = 0` is a session that answers nothing
    /// (every query is refused without sampling); it is charged the threshold alone, `Δ′/b`,
    /// as the accountants' `Event::SparseVector { c: 0, .. }`.
    pub c: u64,
    /// Redraw the threshold noise after each positive answer (RESAMPLE).
    pub resample: bool,
}

impl Default for SparseVectorSettings {
    /// Threshold 0.5, Δ = 1, bounds `[0, 1]`, `c = 1`, no resampling.
    fn default() -> Self {
        Self {
            threshold: 0.5,
            sensitivity: 1.0,
            lo: 0.0,
            hi: 1.0,
            c: 1,
            resample: false,
        }
    }
}

/// A sparse-vector (AboveThreshold-family, "below threshold" form) session: answers
/// queries with indicator bits until `c` positives were released.
///
/// For each query value `q_t` (clamped to `[lo, hi]`) it releases
/// `τ_t = 1[round(q_t) + ν_t ≤ round(T) + μ]` with fresh `ν_t ~ DLap(2b)` per query and
/// `μ ~ DLap(b)`, all in integer grid units (no float is compared or released). After
/// a positive, `μ` is redrawn if `resample` is set. After `c` positives every further
/// query is refused.
///
/// # Privacy
///
/// Pure ε-DP with `ε = (c+1)Δ′/b` (no resampling) or `ε = 2cΔ′/b` (resampling; `Δ′/b` for
/// `c = 0`, the threshold alone, matching the accountants crate), where
/// `Δ′ = g·min(⌈Δ/g⌉, round(hi) − round(lo))` is the sensitivity of the rounded query.
/// The proof of Theorem 1 only shifts the threshold noise by Δ′ and the query noise by
/// 2Δ′; with integer queries and integer shifts it goes through verbatim for the discrete
/// Laplace, whose likelihood ratio under an integer shift `d` is exactly `exp(d/scale)`
/// (ties are handled because the same non-strict comparison is used on both neighbours).
/// Conditions the proof needs and that this type enforces: the threshold is public (a
/// setting), query noise is fresh per query, the run stops at `c`, and Δ bounds the
/// *clamped* query.
///
/// # References
///
/// Park, Vinaroz, Jitkrittum. *ABCDP: Approximate Bayesian Computation with Differential
/// Privacy*, Entropy 2021, Algorithm 1 and Theorem 1; Lyu, Su, Li. *Understanding the
/// Sparse Vector Technique for Differential Privacy*, PVLDB 2017; Dwork & Roth (2014) §3.6.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::{SparseVector, SparseVectorSettings, MechanismError};
/// let settings = SparseVectorSettings { threshold: 0.2, sensitivity: 0.01, c: 2, ..Default::default() };
/// let mut svt = SparseVector::from_epsilon(settings, 1.0).unwrap();
/// assert!(svt.epsilon() <= 1.0);
/// let mut noise_rng = ChaCha20Rng::seed_from_u64(3); // a secret seed in practice
/// let mut accepted = 0;
/// for &d in &[0.9, 0.05, 0.8, 0.01, 0.02, 0.03] {
///     match svt.query(d, &mut noise_rng) {
///         Ok(true) => accepted += 1,
///         Ok(false) => {}
///         Err(MechanismError::BudgetExhausted) => break,
///         Err(e) => panic!("{e}"),
///     }
/// }
/// assert!(accepted <= 2);
/// ```
#[derive(Clone, PartialEq)]
pub struct SparseVector {
    settings: SparseVectorSettings,
    scale: f64,
    bridge: Bridge,
    threshold_int: i64,
    sens_units: u64,
    t: u64,
    s: u64,
    positives: u64,
    noisy_threshold: Option<i64>,
}

impl fmt::Debug for SparseVector {
    /// Prints the public settings and progress only — never the noisy threshold.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparseVector")
            .field("settings", &self.settings)
            .field("scale", &self.scale)
            .field("positives", &self.positives)
            .finish_non_exhaustive()
    }
}

impl SparseVector {
    /// A session with threshold-noise scale `b` (query noise `2b`).
    ///
    /// # Errors
    ///
    /// Non-finite threshold or bounds, non-positive Δ or `b`, `lo ≥ hi`,
    /// or parameters outside the grid's range.
    pub fn new(settings: SparseVectorSettings, scale: f64) -> Result<Self, MechanismError> {
        let scale = positive("scale", scale)?;
        positive("sensitivity", settings.sensitivity)?;
        finite("threshold", settings.threshold)?;
        let grid = Grid::for_scale(scale, settings.lo, settings.hi, LAPLACE_PRECISION_BITS)?;
        Self::on_grid(settings, scale, grid)
    }

    fn on_grid(
        settings: SparseVectorSettings,
        scale: f64,
        grid: Grid,
    ) -> Result<Self, MechanismError> {
        let bridge = Bridge::new(grid, settings.lo, settings.hi)?;
        let threshold_int = grid.round(settings.threshold)?;
        if threshold_int.unsigned_abs() > 1 << 60 {
            return Err(MechanismError::OutOfRange { param: "threshold" });
        }
        let (t, s) = grid.dyadic_units(scale)?;
        // the query noise scale 2t/s must be representable
        if t > u64::MAX / 2 {
            return Err(MechanismError::OutOfRange { param: "scale" });
        }
        let width = grid
            .round(settings.hi)?
            .checked_sub(grid.round(settings.lo)?)
            .and_then(|w| u64::try_from(w).ok())
            .ok_or(MechanismError::Overflow)?;
        let sens_units = grid.ceil_units(settings.sensitivity)?.min(width.max(1));
        Ok(Self {
            settings,
            scale,
            bridge,
            threshold_int,
            sens_units,
            t,
            s,
            positives: 0,
            noisy_threshold: None,
        })
    }

    /// The session whose total cost is at most `epsilon_total`: `b = k·Δ′/ε` with
    /// `k = c + 1` (no resampling) or `k = 2c` (resampling), Theorem 1 solved for `b`.
    ///
    /// # Errors
    ///
    /// As [`SparseVector::new`], and for a non-finite or non-positive `epsilon_total`.
    pub fn from_epsilon(
        settings: SparseVectorSettings,
        epsilon_total: f64,
    ) -> Result<Self, MechanismError> {
        let eps = positive("epsilon", epsilon_total)?;
        let delta = positive("sensitivity", settings.sensitivity)?;
        #[allow(clippy::cast_precision_loss)]
        let k = Self::factor(settings.c, settings.resample) as f64;
        let b0 = positive("scale", k * delta / eps)?;
        let grid = Grid::for_scale(b0, settings.lo, settings.hi, LAPLACE_PRECISION_BITS)?;
        let probe = Self::on_grid(settings, b0, grid)?;
        let inflated = crate::laplace::units_to_f64(grid, probe.sens_units)?;
        let mut scale = positive("scale", (k * inflated).next_up() / eps)?.next_up();
        // Grow b until the mechanism's own (grid-rounded, rounded-up) ε meets the budget:
        // 64 single ulps, then geometrically growing relative steps (the grid rounding of Δ′
        // can need more than 64 ulps of b, e.g. Δ = 0.2, c = 10, RESAMPLE at ε = 1).
        let mut step = f64::EPSILON;
        for i in 0..192 {
            let svt = Self::new(settings, scale)?;
            if svt.epsilon() <= eps {
                return Ok(svt);
            }
            scale = if i < 64 {
                scale.next_up()
            } else {
                step *= 2.0;
                positive("scale", (scale * (1.0 + step)).next_up())?
            };
        }
        Err(MechanismError::OutOfRange { param: "epsilon" })
    }

    fn factor(c: u64, resample: bool) -> u64 {
        if c == 0 {
            1
        } else if resample {
            c.saturating_mul(2)
        } else {
            c.saturating_add(1)
        }
    }

    /// Answers one query: `Ok(true)` if the noisy (clamped, rounded) value is at most the
    /// noisy threshold. NaN queries map to `lo`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::BudgetExhausted`] after `c` positives (nothing is sampled);
    /// [`MechanismError::Entropy`] if the noise RNG fails (no answer is released; a threshold
    /// noise drawn before the failure is kept, as if the query had not been asked).
    pub fn query<R: NoiseRng + ?Sized>(
        &mut self,
        value: f64,
        rng: &mut R,
    ) -> Result<bool, MechanismError> {
        if self.positives >= self.settings.c {
            return Err(MechanismError::BudgetExhausted);
        }
        let threshold = match self.noisy_threshold {
            Some(t) => t,
            None => {
                let mu = discrete_laplace(rng, self.t, self.s)?;
                let t = self.threshold_int.saturating_add(mu);
                self.noisy_threshold = Some(t);
                t
            }
        };
        let nu = discrete_laplace(rng, 2 * self.t, self.s)?;
        let q = self.bridge.to_grid(value).saturating_add(nu);
        let positive = q <= threshold;
        if positive {
            self.positives += 1;
            if self.settings.resample {
                self.noisy_threshold = None;
            }
        }
        Ok(positive)
    }

    /// Number of positive answers released so far.
    #[must_use]
    pub fn positives(&self) -> u64 {
        self.positives
    }

    /// Whether the session is finished (`c` positives released).
    #[must_use]
    pub fn is_exhausted(&self) -> bool {
        self.positives >= self.settings.c
    }

    /// The public settings.
    #[must_use]
    pub fn settings(&self) -> SparseVectorSettings {
        self.settings
    }

    /// The threshold-noise scale `b` (query noise is `2b`).
    #[must_use]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The grid-inflated sensitivity Δ′.
    #[must_use]
    pub fn effective_sensitivity(&self) -> f64 {
        crate::laplace::units_to_f64(self.bridge.grid(), self.sens_units).unwrap_or(f64::INFINITY)
    }

    /// The grid.
    #[must_use]
    pub fn grid(&self) -> Grid {
        self.bridge.grid()
    }

    /// The total cost of the whole session (Theorem 1), rounded up: `(c+1)Δ′/b` or `2cΔ′/b`.
    /// It is charged in full whether or not all `c` positives are used.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        let k = Self::factor(self.settings.c, self.settings.resample);
        match self.sens_units.checked_mul(k) {
            Some(units) => pure_epsilon(units, self.t, self.s),
            None => f64::INFINITY,
        }
    }

    /// The cost as an accountants event ([`Event::SparseVector`] with `b` and Δ′).
    #[must_use]
    pub fn event(&self) -> Event<'static> {
        Event::SparseVector {
            c: self.settings.c,
            scale: self.scale,
            sensitivity: self.effective_sensitivity(),
            resample: self.settings.resample,
        }
    }
}
