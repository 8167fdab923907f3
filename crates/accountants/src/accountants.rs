//! Accountant implementations, one per notion. All keep O(1) (or O(grid)) memory, use
//! compensated sums, and compose `count` repetitions by multiplication.

use dpinfer_math::NeumaierSum;

use crate::composition::{KOV_MAX_K, advanced, optimal, optimal_delta};
use crate::convert::{
    rdp_to_approx_with, rdp_to_delta_with, zcdp_to_approx_with, zcdp_to_delta_with,
};
use crate::curves::{Approx, GaussianMu, Pure, Rdp, Zcdp, count_up, fold};
use crate::error::{finite, non_negative, open_unit};
use crate::{
    Accountant, AccountantError, ApproxDp, Conversion, ConversionRule, Event, Neighbouring,
    POSITIVE_FLOOR, Report, round_up, round_up_positive,
};

fn add_scaled(s: &mut NeumaierSum, count: u64, x: f64) -> Result<(), AccountantError> {
    let v = round_up(count_up(count) * x);
    let mut t = *s;
    t.add(v);
    finite("composition overflow", t.sum())?;
    *s = t;
    Ok(())
}

/// Pure ε-DP accountant: ε adds (Dwork–Roth 2014 Thm 3.14).
///
/// Accepts Laplace, pure ε, sparse vector, binomial curve and their subsampled/composed forms.
///
/// ```
/// use dpinfer_accountants::{Accountant, Event, Neighbouring, PureAccountant};
/// let mut acc = PureAccountant::new(Neighbouring::ReplaceOne);
/// acc.compose_n(&Event::Laplace { scale: 10.0, sensitivity: 1.0 }, 5)?;
/// assert!((acc.epsilon(0.0)?.epsilon - 0.5).abs() < 1e-12);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
#[derive(Clone, Debug)]
pub struct PureAccountant {
    relation: Neighbouring,
    eps: NeumaierSum,
    /// The total while every composition step was exact in `f64` (each event's ε is already
    /// rounded up by its curve): no margin is needed on top, so a mechanism calibrated to
    /// spend exactly its budget is claimed at its budget, not a few ulps above.
    exact: Option<f64>,
}

impl PureAccountant {
    /// An empty accountant for `relation`.
    #[must_use]
    pub fn new(relation: Neighbouring) -> Self {
        Self {
            relation,
            eps: NeumaierSum::new(),
            exact: Some(0.0),
        }
    }
    /// The total ε so far (rounded up): the exact sum of the events' (rounded-up) costs when
    /// every step was exact, else the compensated sum plus the rounding margin.
    #[must_use]
    pub fn total(&self) -> f64 {
        self.exact.unwrap_or_else(|| round_up(self.eps.sum()))
    }
}

/// `acc + count·x` if both the product and the sum are exact in `f64` (error-free
/// transformations: Dekker's product, Knuth's two-sum), else `None`.
fn exact_add_scaled(acc: f64, count: u64, x: f64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let c = count as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let c_exact = c < 9_007_199_254_740_992.0 && c as u64 == count;
    if !c_exact {
        return None;
    }
    let (p, pe) = dpinfer_math::two_product(c, x);
    if pe != 0.0 || !p.is_finite() {
        return None;
    }
    let s = acc + p;
    let bb = s - acc;
    let err = (acc - (s - bb)) + (p - bb);
    (err == 0.0 && s.is_finite()).then_some(s)
}

impl Accountant for PureAccountant {
    fn relation(&self) -> Neighbouring {
        self.relation
    }
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
        event.validate(self.relation)?;
        let e = fold(&Pure, event, self.relation, 0)?;
        add_scaled(&mut self.eps, count, e)?;
        self.exact = self.exact.and_then(|acc| exact_add_scaled(acc, count, e));
        Ok(())
    }
    /// Pure DP: ε is the same for every δ ∈ [0, 1).
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        if !(0.0..1.0).contains(&delta) {
            return Err(AccountantError::InvalidParameter {
                name: "delta",
                value: delta,
            });
        }
        Ok(Report {
            epsilon: self.total(),
            delta,
            conversion: Conversion::Pure,
        })
    }
    /// ε_T-DP implies (ε, δ)-DP with `δ = (e^{ε_T} − e^{ε})/(1 + e^{ε_T})` for ε < ε_T
    /// (the randomized-response bound, Kairouz–Oh–Viswanath 2015), δ = 0 otherwise.
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
        let eps = non_negative("epsilon", epsilon)?;
        let t = self.total();
        let delta = if eps >= t {
            0.0
        } else {
            // −expm1(ε − ε_T) · e^{ε_T}/(1 + e^{ε_T})
            let sig = 1.0 / (1.0 + libm::exp(-t));
            // ε < ε_T: the exact δ is positive, never reported as an underflowed 0.
            round_up_positive(-libm::expm1(eps - t) * sig, true).min(1.0)
        };
        Ok(Report {
            epsilon: eps,
            delta,
            conversion: Conversion::Pure,
        })
    }
}

/// Approximate (ε, δ)-DP accountant: basic composition always; while every composed event
/// has the same (ε₀, δ₀) it also offers the advanced (DRV) and optimal (KOV) homogeneous
/// bounds and reports the smallest.
///
/// # Privacy
/// The homogeneous bounds assume the number of repetitions and (ε₀, δ₀) were fixed in
/// advance; [`crate::BudgetFilter`] therefore uses only basic composition for this
/// accountant (see [`Accountant`] docs on filters).
#[derive(Clone, Debug)]
pub struct ApproxAccountant {
    relation: Neighbouring,
    eps: NeumaierSum,
    delta: NeumaierSum,
    homogeneous: Option<(f64, f64)>,
    k: u64,
    mixed: bool,
}

impl ApproxAccountant {
    /// An empty accountant for `relation`.
    #[must_use]
    pub fn new(relation: Neighbouring) -> Self {
        Self {
            relation,
            eps: NeumaierSum::new(),
            delta: NeumaierSum::new(),
            homogeneous: None,
            k: 0,
            mixed: false,
        }
    }
    /// Basic composition only: `(Σε, Σδ)` (always valid, also under fully adaptive choice).
    #[must_use]
    pub fn basic(&self) -> Report {
        Report {
            epsilon: round_up(self.eps.sum()),
            delta: round_up(self.delta.sum()).min(1.0),
            conversion: Conversion::BasicComposition,
        }
    }
}

impl Accountant for ApproxAccountant {
    fn relation(&self) -> Neighbouring {
        self.relation
    }
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
        event.validate(self.relation)?;
        if let Event::SelfComposed {
            event: inner,
            count: c,
        } = *event
        {
            let total = c.checked_mul(count).ok_or(AccountantError::InvalidCount {
                name: "count",
                value: count,
            })?;
            return self.compose_n(inner, total);
        }
        if count == 0 {
            return Ok(());
        }
        let (e, d) = fold(&Approx, event, self.relation, 0)?;
        let mut eps = self.eps;
        let mut del = self.delta;
        add_scaled(&mut eps, count, e)?;
        add_scaled(&mut del, count, d)?;
        self.eps = eps;
        self.delta = del;
        match self.homogeneous {
            None if !self.mixed => {
                self.homogeneous = Some((e, d));
                self.k = count;
            }
            Some(h) if h == (e, d) => match self.k.checked_add(count) {
                Some(k) => self.k = k,
                None => {
                    self.mixed = true;
                    self.homogeneous = None;
                }
            },
            _ => {
                self.mixed = true;
                self.homogeneous = None;
            }
        }
        Ok(())
    }
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        let delta = open_unit("delta", delta)?;
        let basic = self.basic();
        if self.k == 0 && !self.mixed {
            return Ok(Report {
                epsilon: 0.0,
                delta,
                conversion: Conversion::BasicComposition,
            });
        }
        let mut best: Option<Report> = (basic.delta <= delta).then_some(Report { delta, ..basic });
        if let Some((e0, d0)) = self.homogeneous {
            let each = ApproxDp::new(e0, d0)?;
            let mut consider = |r: Result<Report, AccountantError>| {
                if let Ok(r) = r
                    && best.is_none_or(|b| r.epsilon < b.epsilon)
                {
                    best = Some(r);
                }
            };
            consider(advanced(each, self.k, delta));
            if self.k <= KOV_MAX_K {
                consider(optimal(each, self.k, delta));
            }
        }
        best.ok_or(AccountantError::DeltaTooSmall {
            requested: delta,
            spent: basic.delta,
        })
    }
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
        let eps = non_negative("epsilon", epsilon)?;
        let basic = self.basic();
        let mut best = if eps >= basic.epsilon {
            Report {
                epsilon: eps,
                ..basic
            }
        } else {
            Report {
                epsilon: eps,
                delta: 1.0,
                conversion: Conversion::BasicComposition,
            }
        };
        if let Some((e0, d0)) = self.homogeneous
            && self.k <= KOV_MAX_K
            && let Ok(r) = optimal_delta(ApproxDp::new(e0, d0)?, self.k, eps)
            && r.delta < best.delta
        {
            best = r;
        }
        Ok(best)
    }
}

/// ρ-zCDP accountant: ρ adds (Bun–Steinke 2016 Lemma 2.3; thesis Theorem 2.3); conversion
/// to (ε, δ) by the better of Bun–Steinke and CKS20.
///
/// ```
/// use dpinfer_accountants::{Accountant, Event, Neighbouring, ZcdpAccountant};
/// let mut acc = ZcdpAccountant::new(Neighbouring::AddRemove);
/// acc.compose_n(&Event::Gaussian { sigma: 10.0, sensitivity: 1.0 }, 100)?;
/// assert!((acc.rho() - 0.5).abs() < 1e-12);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ZcdpAccountant {
    relation: Neighbouring,
    rho: NeumaierSum,
    conversion: ConversionRule,
}

impl ZcdpAccountant {
    /// An empty accountant for `relation`.
    #[must_use]
    pub fn new(relation: Neighbouring) -> Self {
        Self {
            relation,
            rho: NeumaierSum::new(),
            conversion: ConversionRule::Tightest,
        }
    }
    /// Reports (ε, δ) with `rule` ([`ConversionRule::Classic`]: Bun–Steinke 2016 Prop. 1.3
    /// alone; default [`ConversionRule::Tightest`]).
    #[must_use]
    pub fn with_conversion(mut self, rule: ConversionRule) -> Self {
        self.conversion = rule;
        self
    }
    /// The conversion rule of the reports.
    #[must_use]
    pub fn conversion(&self) -> ConversionRule {
        self.conversion
    }
    /// Total ρ so far (rounded up).
    #[must_use]
    pub fn rho(&self) -> f64 {
        round_up(self.rho.sum())
    }
}

impl Accountant for ZcdpAccountant {
    fn relation(&self) -> Neighbouring {
        self.relation
    }
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
        event.validate(self.relation)?;
        let r = fold(&Zcdp, event, self.relation, 0)?;
        add_scaled(&mut self.rho, count, r)
    }
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        zcdp_to_approx_with(self.rho(), delta, self.conversion)
    }
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
        zcdp_to_delta_with(self.rho(), epsilon, self.conversion)
    }
}

/// Gaussian privacy-loss-distribution accountant: exact for (heterogeneous) Gaussian
/// mechanisms — μ adds (Sommer–Meiser–Mohammadi 2019 Thm 1; thesis §5.2).
///
/// ```
/// use dpinfer_accountants::{Accountant, Event, Neighbouring, PldAccountant};
/// let mut acc = PldAccountant::new(Neighbouring::AddRemove);
/// acc.compose(&Event::Gaussian { sigma: 1.0, sensitivity: 1.0 })?;
/// let d = acc.delta(1.0)?.delta;
/// assert!((d - 0.12693673750664397).abs() < 1e-12);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
///
/// With `alloc`, events the Gaussian PLD cannot express exactly — Poisson-subsampled
/// Gaussian/Laplace/pure-ε steps, Laplace, pure-ε parts — are accounted by a numerical PLD
/// ([`crate::pld_numeric`]: pessimistic connect-the-dots discretisation, FFT composition,
/// both add/remove directions), reported as [`Conversion::NumericalPld`]. While only
/// Gaussians were composed the exact closed form is used and the numbers are unchanged.
#[derive(Clone, Debug)]
pub struct PldAccountant {
    relation: Neighbouring,
    mu: NeumaierSum,
    #[cfg(feature = "alloc")]
    numeric: crate::pld_numeric::ComponentCounts,
    #[cfg(feature = "alloc")]
    discretisation: crate::pld_numeric::Discretisation,
}

impl PldAccountant {
    /// An empty accountant for `relation`.
    #[must_use]
    pub fn new(relation: Neighbouring) -> Self {
        Self {
            relation,
            mu: NeumaierSum::new(),
            #[cfg(feature = "alloc")]
            numeric: crate::pld_numeric::ComponentCounts::new(),
            #[cfg(feature = "alloc")]
            discretisation: crate::pld_numeric::Discretisation::default(),
        }
    }
    /// An empty accountant whose numerical PLD (used for subsampled events) has the given
    /// grid interval and truncation bound (`alloc`).
    #[cfg(feature = "alloc")]
    #[must_use]
    pub fn with_discretisation(
        relation: Neighbouring,
        discretisation: crate::pld_numeric::Discretisation,
    ) -> Self {
        Self {
            discretisation,
            ..Self::new(relation)
        }
    }
    /// The numerical components recorded so far (empty while only Gaussians were composed).
    #[cfg(feature = "alloc")]
    #[must_use]
    pub fn components(&self) -> &crate::pld_numeric::ComponentCounts {
        &self.numeric
    }
    /// The former name of [`Self::components`].
    #[cfg(feature = "alloc")]
    #[deprecated(note = "renamed to `components`")]
    #[must_use]
    pub fn ledger(&self) -> &crate::pld_numeric::ComponentCounts {
        self.components()
    }
    /// The composed numerical PLD of everything recorded (the Gaussians included as one
    /// exact-μ component), for repeated queries, with `bounds` the certified lower bounds too.
    ///
    /// # Errors
    /// As [`crate::pld_numeric::ComposedPld::new`].
    #[cfg(feature = "alloc")]
    pub fn composed(
        &self,
        bounds: bool,
    ) -> Result<crate::pld_numeric::ComposedPld, AccountantError> {
        crate::pld_numeric::ComposedPld::new(
            self.numeric.parts(),
            self.mu(),
            self.relation,
            self.discretisation,
            bounds,
        )
    }
    /// Total μ so far (rounded up).
    #[must_use]
    pub fn mu(&self) -> f64 {
        round_up(self.mu.sum())
    }
    /// Composes one Gaussian release per entry of `sigmas`, all with sensitivity `Δ`, in a
    /// tight loop (blocks of 256 summed in 8 independent lanes, blocks combined with
    /// Neumaier summation: relative error ≤ ~40 ulp, inside [`crate::ROUNDING_MARGIN`]).
    /// Atomic: every σ is validated before anything is added.
    ///
    /// # Privacy
    /// Same as composing `Event::Gaussian { sigma, sensitivity }` for each σ (SMM19 Thm 1).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for a σ that is not finite and positive or an
    /// invalid Δ; [`AccountantError::NumericalFailure`] on overflow.
    ///
    /// ```
    /// use dpinfer_accountants::{Neighbouring, PldAccountant};
    /// let mut acc = PldAccountant::new(Neighbouring::AddRemove);
    /// acc.compose_gaussians(&[1.0, 2.0, 2.0], 1.0)?;
    /// assert!((acc.mu() - 0.75).abs() < 1e-13);
    /// # Ok::<(), dpinfer_accountants::AccountantError>(())
    /// ```
    pub fn compose_gaussians(
        &mut self,
        sigmas: &[f64],
        sensitivity: f64,
    ) -> Result<(), AccountantError> {
        let d = non_negative("sensitivity", sensitivity)?;
        if let Some(&bad) = sigmas.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(AccountantError::InvalidParameter {
                name: "sigma",
                value: bad,
            });
        }
        // A positive square below the floor is the floor (as `round_up_positive`): the
        // sum's relative rounding margin does not cover a subnormal underflow.
        let floor = if d > 0.0 { POSITIVE_FLOOR } else { 0.0 };
        let mut total = self.mu;
        for block in sigmas.chunks(256) {
            let mut lanes = [0.0_f64; 8];
            let mut chunks = block.chunks_exact(8);
            for c in &mut chunks {
                for (l, &s) in lanes.iter_mut().zip(c) {
                    let r = d / s;
                    *l += (r * r).max(floor);
                }
            }
            for (l, &s) in lanes.iter_mut().zip(chunks.remainder()) {
                let r = d / s;
                *l += (r * r).max(floor);
            }
            let block_sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
                + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
            total.add(0.5 * block_sum);
        }
        finite("composition overflow", total.sum())?;
        self.mu = total;
        Ok(())
    }
    /// Adds a Gaussian PLD mean directly (e.g. a precomputed `Δ²/(2σ²)`).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for a negative or non-finite μ.
    pub fn add_mu(&mut self, mu: f64) -> Result<(), AccountantError> {
        add_scaled(&mut self.mu, 1, non_negative("mu", mu)?)
    }
}

impl Accountant for PldAccountant {
    #[inline]
    fn compose(&mut self, event: &Event<'_>) -> Result<(), AccountantError> {
        self.compose_n(event, 1)
    }
    fn relation(&self) -> Neighbouring {
        self.relation
    }
    #[inline]
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
        // Fast path for the common single Gaussian: μ = Δ²/(2σ²) summed unrounded; the
        // per-term rounding error (≤ 2 ulp, all terms ≥ 0) is covered by the single
        // `round_up` margin applied when μ is read.
        if let (Event::Gaussian { sigma, sensitivity }, 1) = (*event, count)
            && sigma.is_finite()
            && sigma > 0.0
            && sensitivity.is_finite()
            && sensitivity >= 0.0
        {
            let r = sensitivity / sigma;
            let mut t = self.mu;
            // A positive term below the floor is the floor (as `round_up_positive`).
            let floor = if sensitivity > 0.0 {
                POSITIVE_FLOOR
            } else {
                0.0
            };
            t.add((0.5 * r * r).max(floor));
            if t.sum().is_finite() {
                self.mu = t;
                return Ok(());
            }
            return Err(AccountantError::NumericalFailure {
                what: "composition overflow",
            });
        }
        event.validate(self.relation)?;
        match fold(&GaussianMu, event, self.relation, 0) {
            Ok(m) => add_scaled(&mut self.mu, count, m),
            #[cfg(feature = "alloc")]
            Err(AccountantError::Unsupported { .. }) => {
                let (m, parts) =
                    crate::pld_numeric::ComponentCounts::split(event, self.relation, count)?;
                let mut mu = self.mu;
                add_scaled(&mut mu, 1, m)?;
                self.numeric.merge(&parts)?;
                self.mu = mu;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        #[cfg(feature = "alloc")]
        if !self.numeric.is_empty() {
            let r = self.composed(false)?.epsilon(delta)?;
            return Ok(Report {
                epsilon: r.epsilon,
                delta,
                conversion: Conversion::NumericalPld,
            });
        }
        let e = crate::pld::epsilon_for_delta(self.mu(), delta)?;
        Ok(Report {
            epsilon: e,
            delta,
            conversion: Conversion::GaussianPld,
        })
    }
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
        #[cfg(feature = "alloc")]
        if !self.numeric.is_empty() {
            let r = self.composed(false)?.delta(epsilon)?;
            return Ok(Report {
                epsilon,
                delta: r.delta,
                conversion: Conversion::NumericalPld,
            });
        }
        let d = crate::pld::delta_for_epsilon(self.mu(), epsilon)?;
        Ok(Report {
            epsilon,
            delta: d,
            conversion: Conversion::GaussianPld,
        })
    }
}

/// Number of orders in [`DEFAULT_ORDERS`].
pub const DEFAULT_ORDER_COUNT: usize = 34;

/// Default RDP orders: 34 orders from 1.25 to 256 (6 fractional orders below 5, whose
/// MTZ19 series costs a few µs each, then integers, denser where optima usually fall).
/// Custom grids (e.g. up to 4096, or opacus' 1.1…10.9 fractional grid) go through
/// [`RdpAccountant::with_orders`] or `RdpAccountantVec`.
pub const DEFAULT_ORDERS: [f64; DEFAULT_ORDER_COUNT] = [
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0,
    14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0, 128.0,
    256.0,
];

/// Rényi-DP accountant over a fixed grid of `N` orders, without allocation: per order, RDP
/// values add (Mironov 2017 Prop. 1; thesis Theorem 2.2). Conversion to (ε, δ) by the best
/// of Mironov and Balle/CKS over the grid.
///
/// ```
/// use dpinfer_accountants::{Accountant, Event, Neighbouring, RdpAccountant};
/// let mut acc = RdpAccountant::new(Neighbouring::AddRemove);
/// let g = Event::Gaussian { sigma: 1.0, sensitivity: 1.0 };
/// acc.compose_n(&Event::PoissonSampled { q: 0.01, event: &g }, 10_000)?;
/// let r = acc.epsilon(1e-5)?;
/// assert!(r.epsilon > 5.0 && r.epsilon < 10.0);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RdpAccountant<const N: usize> {
    relation: Neighbouring,
    orders: [f64; N],
    sums: [NeumaierSum; N],
    conversion: ConversionRule,
}

impl RdpAccountant<DEFAULT_ORDER_COUNT> {
    /// An empty accountant on [`DEFAULT_ORDERS`].
    #[must_use]
    pub fn new(relation: Neighbouring) -> Self {
        Self {
            relation,
            orders: DEFAULT_ORDERS,
            sums: [NeumaierSum::new(); DEFAULT_ORDER_COUNT],
            conversion: ConversionRule::Tightest,
        }
    }
}

impl<const N: usize> RdpAccountant<N> {
    /// An empty accountant on a custom grid (strictly increasing, all orders > 1, finite).
    ///
    /// # Errors
    /// [`AccountantError::InvalidGrid`].
    pub fn with_orders(relation: Neighbouring, orders: [f64; N]) -> Result<Self, AccountantError> {
        crate::notions::check_grid(&orders)?;
        Ok(Self {
            relation,
            orders,
            sums: [NeumaierSum::new(); N],
            conversion: ConversionRule::Tightest,
        })
    }
    /// Reports (ε, δ) with `rule` ([`ConversionRule::Classic`]: Mironov 2017 Prop. 3 alone;
    /// default [`ConversionRule::Tightest`]).
    #[must_use]
    pub fn with_conversion(mut self, rule: ConversionRule) -> Self {
        self.conversion = rule;
        self
    }
    /// The conversion rule of the reports.
    #[must_use]
    pub fn conversion(&self) -> ConversionRule {
        self.conversion
    }
    /// The current RDP curve (values rounded up).
    #[must_use]
    pub fn curve(&self) -> crate::RdpCurve<N> {
        let mut values = [0.0; N];
        for (v, s) in values.iter_mut().zip(&self.sums) {
            *v = round_up(s.sum());
        }
        crate::RdpCurve::from_parts(self.orders, values)
    }
}

impl<const N: usize> Accountant for RdpAccountant<N> {
    fn relation(&self) -> Neighbouring {
        self.relation
    }
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
        event.validate(self.relation)?;
        let mut new = self.sums;
        for (s, &a) in new.iter_mut().zip(&self.orders) {
            let r = fold(&Rdp { alpha: a }, event, self.relation, 0)?;
            if r.is_nan() || r < 0.0 {
                return Err(AccountantError::NumericalFailure { what: "rdp value" });
            }
            let v = round_up(count_up(count) * r);
            if count > 0 {
                s.add(v);
            }
        }
        self.sums = new;
        Ok(())
    }
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        let c = self.curve();
        rdp_to_approx_with(c.orders(), c.values(), delta, self.conversion)
    }
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
        let c = self.curve();
        rdp_to_delta_with(c.orders(), c.values(), epsilon, self.conversion)
    }
}

#[cfg(feature = "alloc")]
pub use vec_rdp::RdpAccountantVec;

#[cfg(feature = "alloc")]
mod vec_rdp {
    use alloc::vec::Vec;

    use super::{
        Accountant, AccountantError, ConversionRule, Event, Neighbouring, NeumaierSum, Rdp, Report,
        count_up, fold, rdp_to_approx_with, rdp_to_delta_with, round_up,
    };

    /// [`super::RdpAccountant`] over an arbitrary heap-allocated grid (`alloc` feature),
    /// e.g. orders up to 4096.
    #[derive(Clone, Debug)]
    pub struct RdpAccountantVec {
        relation: Neighbouring,
        orders: Vec<f64>,
        sums: Vec<NeumaierSum>,
        conversion: ConversionRule,
    }

    impl RdpAccountantVec {
        /// An empty accountant on `orders`.
        ///
        /// # Errors
        /// [`AccountantError::InvalidGrid`].
        pub fn new(relation: Neighbouring, orders: Vec<f64>) -> Result<Self, AccountantError> {
            crate::notions::check_grid(&orders)?;
            let sums = alloc::vec![NeumaierSum::new(); orders.len()];
            Ok(Self {
                relation,
                orders,
                sums,
                conversion: ConversionRule::Tightest,
            })
        }
        /// Reports (ε, δ) with `rule` (see [`super::RdpAccountant::with_conversion`]).
        #[must_use]
        pub fn with_conversion(mut self, rule: ConversionRule) -> Self {
            self.conversion = rule;
            self
        }
        /// The conversion rule of the reports.
        #[must_use]
        pub fn conversion(&self) -> ConversionRule {
            self.conversion
        }
        /// The current curve.
        #[must_use]
        pub fn curve(&self) -> crate::RdpCurveVec {
            let values = self.sums.iter().map(|s| round_up(s.sum())).collect();
            crate::RdpCurveVec::from_parts(self.orders.clone(), values)
        }
    }

    impl Accountant for RdpAccountantVec {
        fn relation(&self) -> Neighbouring {
            self.relation
        }
        fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
            event.validate(self.relation)?;
            let mut add = Vec::with_capacity(self.orders.len());
            for &a in &self.orders {
                let r = fold(&Rdp { alpha: a }, event, self.relation, 0)?;
                if r.is_nan() || r < 0.0 {
                    return Err(AccountantError::NumericalFailure { what: "rdp value" });
                }
                add.push(round_up(count_up(count) * r));
            }
            if count > 0 {
                for (s, v) in self.sums.iter_mut().zip(add) {
                    s.add(v);
                }
            }
            Ok(())
        }
        fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
            let v: Vec<f64> = self.sums.iter().map(|s| round_up(s.sum())).collect();
            rdp_to_approx_with(&self.orders, &v, delta, self.conversion)
        }
        fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
            let v: Vec<f64> = self.sums.iter().map(|s| round_up(s.sum())).collect();
            rdp_to_delta_with(&self.orders, &v, epsilon, self.conversion)
        }
    }
}
