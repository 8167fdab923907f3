//! The binomial infection-curve mechanism (Xiong, Ju & Zhang, Proposition 4).

use dpinfer_accountants::{BinomialBound, Event, Neighbouring};

use crate::MechanismError;
use crate::laplace::check_len;
use crate::rng::NoiseRng;
use crate::sampling::{uniform_below, uniform_below_fixed};

/// Releases an infection count `I ∈ {0, …, K}` as `s ~ Binomial(n, (I + m)/(K + 2m))`,
/// independently at each of `L` time points.
///
/// Sampling is exact and fixed-work: `s` is the number of `j < n` with
/// `uniform_below(K + 2m) < I + m`, i.e. `n` exact Bernoulli((I+m)/(K+2m)) draws; the number of
/// draws never depends on `I` (the rejection loop inside [`uniform_below`] depends only on the
/// public `K + 2m`; [`BinomialCurve::with_fixed_trials`] makes it constant). The pseudo-count
/// `m` is an integer so that the success probability is an exact rational.
///
/// The private input `I` is clamped to `[0, K]` (never an error).
///
/// # Privacy
///
/// Neighbouring curves differ in one individual's infection status, so `|I(t) − Ĩ(t)| ≤ 1`
/// at every time point ([`Neighbouring::ReplaceOne`], population `K` fixed). For one release
/// the likelihood ratio is at most `((1+m)/m)^n` (proof of Prop. 4), so the curve of `L`
/// releases is ε-DP with the exact `ε = L·n·ln(1 + 1/m)` ([`BinomialCurve::epsilon_exact`],
/// reported by default) which never exceeds the paper's stated `ε = nL/m`
/// ([`BinomialCurve::epsilon_paper`]).
///
/// # References
///
/// Xiong, Ju, Zhang. *Simulation-based inference for privacy-protected data*, Proposition 4
/// and Appendix B.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::BinomialCurve;
/// // n = 1000 trials, m = 1000, population K = 10_000 (the paper's SIR setting: ε ≤ 10 for L = 10)
/// let mech = BinomialCurve::new(1000, 1000, 10_000).unwrap();
/// let mut noise_rng = ChaCha20Rng::seed_from_u64(1); // a secret seed in practice
/// let mut out = [0u64; 3];
/// mech.release_curve(&[12, 340, 2100], &mut out, &mut noise_rng).unwrap();
/// assert!(out.iter().all(|&s| s <= 1000));
/// assert!(mech.epsilon_exact(10) <= mech.epsilon_paper(10));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BinomialCurve {
    n: u64,
    m: u64,
    population: u64,
    denom: u64,
    bound: BinomialBound,
    trials: Option<u32>,
}

impl BinomialCurve {
    /// `n` trials per release, integer pseudo-count `m ≥ 1`, population size `K`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::NotPositive`] for `m == 0`; [`MechanismError::Overflow`] if
    /// `K + 2m` overflows `u64`; [`MechanismError::OutOfRange`] for `m > 2⁵³` (so that `m`
    /// is exact in the reported event).
    pub fn new(n: u64, m: u64, population: u64) -> Result<Self, MechanismError> {
        if m == 0 {
            return Err(MechanismError::NotPositive { param: "m" });
        }
        if m > 1 << 53 {
            return Err(MechanismError::OutOfRange { param: "m" });
        }
        let denom = m
            .checked_mul(2)
            .and_then(|mm| mm.checked_add(population))
            .ok_or(MechanismError::Overflow)?;
        Ok(Self {
            n,
            m,
            population,
            denom,
            bound: BinomialBound::Exact,
            trials: None,
        })
    }

    /// Report the paper's bound `nL/m` instead of the exact `L·n·ln(1+1/m)` in
    /// [`BinomialCurve::event`].
    #[must_use]
    pub fn with_bound(mut self, bound: BinomialBound) -> Self {
        self.bound = bound;
        self
    }

    /// Constant-work sampling: every uniform draw uses exactly `trials` words
    /// ([`uniform_below_fixed`]); a release fails with [`MechanismError::TrialsExhausted`]
    /// with probability at most `n·((2⁶⁴ mod (K+2m))/2⁶⁴)^trials`, which is `≤ n·2^(−32·trials)`
    /// for `K + 2m ≤ 2³²`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::NotPositive`] for `trials == 0`.
    pub fn with_fixed_trials(mut self, trials: u32) -> Result<Self, MechanismError> {
        if trials == 0 {
            return Err(MechanismError::NotPositive { param: "trials" });
        }
        self.trials = Some(trials);
        Ok(self)
    }

    /// Releases one noisy count for the private infection count `infected` (clamped to `K`).
    ///
    /// # Errors
    ///
    /// [`MechanismError::Entropy`] if the noise RNG fails; [`MechanismError::TrialsExhausted`]
    /// in fixed-trials mode (see [`BinomialCurve::with_fixed_trials`]).
    pub fn release_point<R: NoiseRng + ?Sized>(
        &self,
        infected: u64,
        rng: &mut R,
    ) -> Result<u64, MechanismError> {
        // I + m ≤ K + m < K + 2m: no overflow.
        let threshold = infected.min(self.population) + self.m;
        let mut count = 0u64;
        for _ in 0..self.n {
            let u = match self.trials {
                None => uniform_below(rng, self.denom)?,
                Some(t) => uniform_below_fixed(rng, self.denom, t)?,
            };
            count += u64::from(u < threshold);
        }
        Ok(count)
    }

    /// Releases a whole curve: `out[i]` is the release for `infected[i]`. On error `out` is
    /// zeroed: nothing is released.
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] unless the slices have equal length; as
    /// [`BinomialCurve::release_point`].
    pub fn release_curve<R: NoiseRng + ?Sized>(
        &self,
        infected: &[u64],
        out: &mut [u64],
        rng: &mut R,
    ) -> Result<(), MechanismError> {
        check_len(infected.len(), out.len())?;
        for i in 0..infected.len() {
            match self.release_point(infected[i], rng) {
                Ok(v) => out[i] = v,
                Err(e) => {
                    // Wipe what was written so far: nothing is released on error.
                    out.iter_mut().take(i).for_each(|o| *o = 0);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Trials per release `n`.
    #[must_use]
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Pseudo-count `m`.
    #[must_use]
    pub fn m(&self) -> u64 {
        self.m
    }

    /// Population size `K`.
    #[must_use]
    pub fn population(&self) -> u64 {
        self.population
    }

    /// `K + 2m` (checked not to overflow at construction).
    pub(crate) fn denominator(&self) -> u64 {
        self.denom
    }

    /// The neighbouring relation of the guarantee: one individual's status changes
    /// (population size fixed).
    #[must_use]
    pub fn relation(&self) -> Neighbouring {
        Neighbouring::ReplaceOne
    }

    /// The exact cost of `releases` time points, `L·n·ln(1 + 1/m)`, rounded up.
    #[must_use]
    pub fn epsilon_exact(&self, releases: u64) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let (l, n, m) = (releases as f64, self.n as f64, self.m as f64);
        let per = libm::log1p(1.0 / m);
        // libm::log1p is accurate to < 1 ulp; pad generously upward. ln(1 + 1/m) ≤ 1/m, so
        // the paper's bound is also an upper bound: never report more than it.
        (l * n * per * (1.0 + 4.0 * f64::EPSILON))
            .next_up()
            .min(self.epsilon_paper(releases))
    }

    /// The paper's stated cost `nL/m` (Prop. 4), rounded up.
    #[must_use]
    pub fn epsilon_paper(&self, releases: u64) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let (l, n, m) = (releases as f64, self.n as f64, self.m as f64);
        ((l * n).next_up() / m).next_up()
    }

    /// The cost of `releases` time points as an accountants event
    /// ([`Event::BinomialCurve`]; [`Event::PureEpsilon`] with ε = 0 when `n == 0` or
    /// `releases == 0`).
    #[must_use]
    pub fn event(&self, releases: u64) -> Event<'static> {
        if self.n == 0 || releases == 0 {
            return Event::PureEpsilon { epsilon: 0.0 };
        }
        #[allow(clippy::cast_precision_loss)]
        let m = self.m as f64; // ≤ 2^53: exact
        Event::BinomialCurve {
            n: self.n,
            m,
            releases,
            bound: self.bound,
        }
    }
}
