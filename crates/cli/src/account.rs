//! `dpinfer account`: the accountants crate from the command line — ε (or δ) of a
//! composition under every accountant, σ for a budget, and the maximum iterations of the DP
//! MCMC samplers. Human-readable lines, or one JSON object with `--json`.
//!
//! Events are written as `kind:key=value,…`:
//!
//! | event | keys |
//! |---|---|
//! | `gaussian` | `sigma`, `sens` (default 1) |
//! | `laplace` | `b` (scale), `sens` (default 1) |
//! | `pure` | `eps` |
//! | `approx` | `eps`, `delta` |
//! | `zcdp` | `rho` |
//! | `svt` | `c`, `b`, `sens`, `resample` (0/1) |
//! | `binomial` | `n` (trials per release), `m` (pseudo-count), `releases` (L), `bound` (`exact` or `paper`) |
//!
//! plus, on any event, `count=k` (k adaptive repetitions), `poisson=q` (Poisson subsampling,
//! add/remove neighbours) or `wor=batch/population` (sampling without replacement,
//! replace-one neighbours).
//!
//! With `--accountant all` (the default) every accountant is run and the smallest bound is
//! reported; each one is a valid upper bound, so the minimum is too. Printed ε, δ and σ are
//! rounded *up* to the printed digits (JSON carries the full `f64`), so copying a printed
//! value never claims less privacy loss, or more noise, than was computed.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use dpinfer::accountants::calibrate::{
    Method, dp_barker_max_steps_with, dp_hmc_max_steps_pld, dp_hmc_max_steps_zcdp,
    dp_penalty_max_steps_pld, dp_penalty_max_steps_zcdp, gaussian_sigma,
    poisson_gaussian_sigma_rdp_with,
};
use dpinfer::accountants::{
    AccountantError, AccountantKind, BinomialBound, ConversionRule, DEFAULT_ORDERS, Event,
    EventBuf, Neighbouring, ParseNameError, Query, Report, round_up,
};
use serde_json::{Value, json};

/// Long help of `--event`: the event grammar.
const EVENT_HELP: &str = "One release or repeated release, `kind:key=value,…` (repeatable; \
the events compose adaptively).
  gaussian:sigma=σ[,sens=Δ₂]        Gaussian mechanism (Δ₂ default 1)
  laplace:b=b[,sens=Δ₁]             Laplace mechanism (Δ₁ default 1)
  dlaplace:b=β[,sens=k]             discrete Laplace on the integers (β, integer k in grid units)
  dgaussian:sigma=σ[,sens=k]        discrete Gaussian on the integers (σ, integer k in grid units)
  pure:eps=ε                        any ε-DP mechanism
  approx:eps=ε,delta=δ              any (ε, δ)-DP mechanism (approx accountant only)
  zcdp:rho=ρ                        any ρ-zCDP mechanism
  svt:c=c,b=b[,sens=Δ][,resample=0|1]  sparse vector, c answers (ABCDP Thm 1)
  binomial:n=n,m=m,releases=L[,bound=exact|paper]  binomial infection curve (Xiong et al. Prop. 4)
On any event: count=k (k adaptive repetitions, default 1), poisson=q (Poisson subsampling, \
add/remove neighbours only) or wor=batch/population (sampling without replacement, \
replace-one neighbours only). Sensitivities are under the chosen --neighbouring relation.
Example: --event gaussian:sigma=1,poisson=0.01,count=10000";

/// Arguments of `dpinfer account`.
#[derive(Debug, Args)]
pub struct AccountArgs {
    /// Print one JSON object instead of human-readable lines.
    #[arg(long, global = true)]
    pub json: bool,
    /// RDP/zCDP → (ε, δ) conversion: `tightest` (Balle et al. 2020 / CKS20 where better) or
    /// `classic` (Mironov 2017 Prop. 3 for RDP, Bun–Steinke 2016 Prop. 1.3 for zCDP).
    #[arg(long, global = true, default_value = "tightest")]
    conversion: ConversionRule,
    #[command(subcommand)]
    cmd: AccountCmd,
}

/// `--accountant`: one of the library's [`AccountantKind`]s, or `all` (`None`): every
/// accountant that can express the events, the smallest bound being the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Which(Option<AccountantKind>);

impl std::str::FromStr for Which {
    type Err = ParseNameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "all" {
            Ok(Self(None))
        } else {
            s.parse()
                .map(|k| Self(Some(k)))
                .map_err(|e| ParseNameError {
                    expected: "all, pure, approx, rdp, zcdp, pld",
                    ..e
                })
        }
    }
}

/// The accountants `--accountant all` asks, in the order they are printed.
const ALL: [AccountantKind; 5] = [
    AccountantKind::Pure,
    AccountantKind::Approx,
    AccountantKind::Zcdp,
    AccountantKind::Rdp,
    AccountantKind::Pld,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SamplerArg {
    /// DP penalty (thesis Theorems 6-7).
    Penalty,
    /// DP HMC (thesis §5).
    Hmc,
    /// DP Barker (thesis Theorem 8).
    Barker,
}

#[derive(Debug, Subcommand)]
enum AccountCmd {
    /// ε of a composition at a given δ.
    Epsilon {
        /// Target δ (0 is allowed for pure events with the pure accountant).
        #[arg(long)]
        delta: f64,
        /// Events, `kind:key=value,…` (repeatable).
        #[arg(long = "event", required = true, long_help = EVENT_HELP)]
        events: Vec<String>,
        /// Neighbouring relation: add-remove (also add/remove) or replace-one.
        #[arg(long, default_value = "add-remove")]
        neighbouring: Neighbouring,
        /// Accountant: all (every one that can express the events; the smallest bound is
        /// the answer), pure, approx (optimal composition), zcdp, rdp (default order grid) or
        /// pld (exact for Gaussians, numerical FFT for subsampled Gaussian/Laplace/pure-ε).
        #[arg(long, default_value = "all")]
        accountant: Which,
    },
    /// δ of a composition at a given ε.
    Delta {
        /// Target ε.
        #[arg(long)]
        epsilon: f64,
        /// Events, `kind:key=value,…` (repeatable).
        #[arg(long = "event", required = true, long_help = EVENT_HELP)]
        events: Vec<String>,
        /// Neighbouring relation: add-remove (also add/remove) or replace-one.
        #[arg(long, default_value = "add-remove")]
        neighbouring: Neighbouring,
        /// Accountant: all (every one that can express the events; the smallest bound is
        /// the answer), pure, approx (optimal composition), zcdp, rdp (default order grid) or
        /// pld (exact for Gaussians, numerical FFT for subsampled Gaussian/Laplace/pure-ε).
        #[arg(long, default_value = "all")]
        accountant: Which,
    },
    /// The smallest Gaussian σ for `steps` releases within (ε, δ).
    Sigma {
        /// Budget ε.
        #[arg(long)]
        epsilon: f64,
        /// Budget δ.
        #[arg(long)]
        delta: f64,
        /// Number of releases.
        #[arg(long, default_value_t = 1)]
        steps: u64,
        /// L2 sensitivity of one release.
        #[arg(long, default_value_t = 1.0)]
        sensitivity: f64,
        /// Poisson sampling rate q (RDP, add/remove neighbours).
        #[arg(long)]
        poisson: Option<f64>,
        /// Accounting method: zcdp, pld or rdp [default: pld; rdp with --poisson, where pld
        /// (numerical) is also allowed].
        #[arg(long)]
        method: Option<Method>,
    },
    /// The largest number of iterations a DP MCMC sampler may run within (ε, δ).
    MaxSteps {
        /// Sampler.
        #[arg(long, value_enum)]
        sampler: SamplerArg,
        /// Budget ε.
        #[arg(long)]
        epsilon: f64,
        /// Budget δ.
        #[arg(long)]
        delta: f64,
        /// Data size n.
        #[arg(long)]
        n: u64,
        /// Penalty: noise multiplier τ; HMC: τ_l.
        #[arg(long)]
        tau: Option<f64>,
        /// HMC: gradient noise multiplier τ_g.
        #[arg(long)]
        tau_g: Option<f64>,
        /// Penalty: exponent a of n (noise sd τ·n^a·2c) [default: 0.5].
        #[arg(long)]
        a: Option<f64>,
        /// HMC: leapfrog steps L [default: 10].
        #[arg(long)]
        leapfrog: Option<u64>,
        /// Barker: minibatch size.
        #[arg(long)]
        batch: Option<u64>,
        /// Barker: largest RDP order tried [default: 256].
        #[arg(long)]
        max_order: Option<u64>,
        /// Accounting, penalty and HMC: zcdp or pld [default: pld]; Barker is always rdp.
        #[arg(long)]
        method: Option<Method>,
    },
}

/// One parsed event: the base mechanism, its amplification and repetition count.
#[derive(Debug, Clone, PartialEq)]
struct Spec {
    base: Event<'static>,
    sampling: Sampling,
    count: u64,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Sampling {
    None,
    Poisson(f64),
    WithoutReplacement(u64, u64),
}

fn num(key: &str, v: &str) -> Result<f64> {
    let x: f64 = v
        .parse()
        .with_context(|| format!("{key}={v:?} is not a number"))?;
    if !x.is_finite() {
        bail!("{key}={v} must be finite");
    }
    Ok(x)
}

fn int(key: &str, v: &str) -> Result<u64> {
    v.parse()
        .with_context(|| format!("{key}={v:?} is not a non-negative integer"))
}

fn parse_event(s: &str) -> Result<Spec> {
    let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
    let mut kv = std::collections::BTreeMap::new();
    for part in rest.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .with_context(|| format!("event {s:?}: {part:?} is not key=value"))?;
        if kv
            .insert(k.trim().to_string(), v.trim().to_string())
            .is_some()
        {
            bail!("event {s:?}: {k} given twice");
        }
    }
    let mut take = |k: &str| kv.remove(k);
    let need = |v: Option<String>, k: &str| -> Result<String> {
        v.with_context(|| format!("event {s:?} needs {k}=…"))
    };
    let sens = |v: Option<String>| -> Result<f64> { v.map_or(Ok(1.0), |v| num("sens", &v)) };
    let base = match kind.trim() {
        "gaussian" => Event::Gaussian {
            sigma: num("sigma", &need(take("sigma"), "sigma")?)?,
            sensitivity: sens(take("sens"))?,
        },
        "laplace" => Event::Laplace {
            scale: num("b", &need(take("b"), "b")?)?,
            sensitivity: sens(take("sens"))?,
        },
        "dlaplace" => Event::DiscreteLaplace {
            scale: num("b", &need(take("b"), "b")?)?,
            sensitivity: take("sens").map_or(Ok(1), |v| int("sens", &v))?,
        },
        "dgaussian" => Event::DiscreteGaussian {
            sigma: num("sigma", &need(take("sigma"), "sigma")?)?,
            sensitivity: take("sens").map_or(Ok(1), |v| int("sens", &v))?,
        },
        "pure" => Event::PureEpsilon {
            epsilon: num("eps", &need(take("eps"), "eps")?)?,
        },
        "approx" => Event::ApproxDp {
            epsilon: num("eps", &need(take("eps"), "eps")?)?,
            delta: num("delta", &need(take("delta"), "delta")?)?,
        },
        "zcdp" => Event::Zcdp {
            rho: num("rho", &need(take("rho"), "rho")?)?,
        },
        "svt" => Event::SparseVector {
            c: int("c", &need(take("c"), "c")?)?,
            scale: num("b", &need(take("b"), "b")?)?,
            sensitivity: sens(take("sens"))?,
            resample: match take("resample").as_deref() {
                None | Some("0" | "false") => false,
                Some("1" | "true") => true,
                Some(v) => bail!("event {s:?}: resample={v} must be 0 or 1"),
            },
        },
        "binomial" => Event::BinomialCurve {
            n: int("n", &need(take("n"), "n")?)?,
            m: num("m", &need(take("m"), "m")?)?,
            releases: int("releases", &need(take("releases"), "releases")?)?,
            bound: match take("bound") {
                None => BinomialBound::default(),
                Some(v) => v
                    .parse()
                    .with_context(|| format!("event {s:?}: bound={v}"))?,
            },
        },
        other => bail!(
            "unknown event kind {other:?} (expected gaussian, laplace, dlaplace, dgaussian, pure, \
             approx, zcdp, svt, binomial)"
        ),
    };
    let count = match take("count") {
        None => 1,
        Some(v) => int("count", &v)?,
    };
    let sampling = match (take("poisson"), take("wor")) {
        (Some(_), Some(_)) => bail!("event {s:?}: poisson and wor exclude each other"),
        (Some(q), None) => Sampling::Poisson(num("poisson", &q)?),
        (None, Some(w)) => {
            let (b, p) = w
                .split_once('/')
                .with_context(|| format!("event {s:?}: wor={w} must be batch/population"))?;
            Sampling::WithoutReplacement(int("wor batch", b)?, int("wor population", p)?)
        }
        (None, None) => Sampling::None,
    };
    if let Some(k) = kv.keys().next() {
        bail!("event {s:?}: unknown key {k}");
    }
    Ok(Spec {
        base,
        sampling,
        count,
        text: s.to_string(),
    })
}

/// Calls `f` with the spec's event, wrapped in its sampling scheme.
fn with_event<R>(sp: &Spec, f: impl FnOnce(&Event<'_>) -> R) -> R {
    let base = sp.base;
    match sp.sampling {
        Sampling::None => f(&base),
        Sampling::Poisson(q) => f(&Event::PoissonSampled { q, event: &base }),
        Sampling::WithoutReplacement(batch, population) => f(&Event::SampledWithoutReplacement {
            batch,
            population,
            event: &base,
        }),
    }
}

/// `x` with 6 decimals (or 7 significant digits in scientific notation), rounded *up*: a
/// printed ε, δ or σ is never below the computed one.
fn up(x: f64, sci: bool) -> String {
    // Very large or small values in scientific notation, never as 300-digit decimals.
    let sci = sci || !(1e-4..1e15).contains(&x.abs());
    let show = |v: f64| {
        if sci {
            format!("{v:.6e}")
        } else {
            format!("{v:.6}")
        }
    };
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    // Steps of at most a quarter of the last printed digit: the first printed value that is
    // ≥ x is the decimal ceiling (rounding to nearest cannot skip past it).
    for i in 0..64_u32 {
        let v = if sci {
            x * (1.0 + f64::from(i) * 0.25e-7)
        } else {
            x + f64::from(i) * 0.25e-6
        };
        let t = show(v);
        if t.parse::<f64>().is_ok_and(|p| p >= x) {
            return match t.split_once('e') {
                Some((m, e)) if m.contains('.') => {
                    format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
                }
                _ => t,
            };
        }
    }
    format!("{x}")
}

fn report_json(w: AccountantKind, r: &Result<Report, AccountantError>) -> Value {
    match r {
        Ok(rep) => json!({
            "accountant": w.name(),
            "epsilon": rep.epsilon,
            "delta": rep.delta,
            "conversion": rep.conversion.name(),
            "order": rep.conversion.order(),
        }),
        Err(e) => json!({ "accountant": w.name(), "error": format!("{e:#}") }),
    }
}

/// `(ε, δ)` as a human string, the queried quantity first.
fn pair(what: &str, r: &Report) -> String {
    if what == "epsilon" {
        format!("ε = {} at δ = {}", up(r.epsilon, false), up(r.delta, true))
    } else {
        format!("δ = {} at ε = {}", up(r.delta, true), up(r.epsilon, false))
    }
}

fn composition(
    json_out: bool,
    what: &str,
    target: f64,
    events: &[String],
    rel: Neighbouring,
    which: Which,
    rule: ConversionRule,
) -> Result<()> {
    if !target.is_finite() || target < 0.0 {
        bail!(
            "--{} {target} must be finite and non-negative",
            if what == "epsilon" {
                "delta"
            } else {
                "epsilon"
            }
        );
    }
    let specs: Vec<Spec> = events
        .iter()
        .map(|e| parse_event(e))
        .collect::<Result<_>>()?;
    for sp in &specs {
        with_event(sp, |e| e.validate(rel)).with_context(|| format!("event {:?}", sp.text))?;
    }
    let query = if what == "epsilon" {
        Query::EpsilonAt(target)
    } else {
        Query::DeltaAt(target)
    };
    let events: Vec<(EventBuf, u64)> = specs
        .iter()
        .map(|sp| (with_event(sp, |e| EventBuf::from(e)), sp.count))
        .collect();
    let kinds = which.0.map_or_else(|| ALL.to_vec(), |k| vec![k]);
    let results = query.ask_each(&kinds, rel, rule, &events);
    let Some((bw, br)) = query.tightest(&results) else {
        let why: Vec<String> = results
            .iter()
            .filter_map(|(w, r)| r.as_ref().err().map(|e| format!("{w}: {e:#}")))
            .collect();
        bail!(
            "no accountant could bound this composition ({})",
            why.join("; ")
        );
    };
    if json_out {
        let v = json!({
            "query": what,
            "target": target,
            "neighbouring": rel.name(),
            "events": specs.iter().map(|s| s.text.clone()).collect::<Vec<_>>(),
            "epsilon": br.epsilon,
            "delta": br.delta,
            "accountant": bw.name(),
            "conversion": br.conversion.name(),
            "order": br.conversion.order(),
            "all": results.iter().map(|(w, r)| report_json(*w, r)).collect::<Vec<_>>(),
        });
        crate::outln!("{v}");
    } else {
        crate::outln!(
            "{} ({bw} accountant, {}; {rel} neighbours)",
            pair(what, &br),
            br.conversion,
        );
        if results.len() > 1 {
            for (w, r) in &results {
                match r {
                    Ok(rep) => crate::outln!(
                        "  {:<7} {}  ({})",
                        w.name(),
                        pair(what, rep),
                        rep.conversion
                    ),
                    Err(e) => crate::outln!("  {:<7} cannot: {e:#}", w.name()),
                }
            }
        }
    }
    Ok(())
}

fn sampler_name(s: SamplerArg) -> &'static str {
    match s {
        SamplerArg::Penalty => "penalty",
        SamplerArg::Hmc => "hmc",
        SamplerArg::Barker => "barker",
    }
}

/// Fails if an option that `sampler` does not use was given (it would be silently ignored).
fn reject(sampler: SamplerArg, given: &[(&str, bool)]) -> Result<()> {
    if let Some((opt, _)) = given.iter().find(|(_, g)| *g) {
        bail!(
            "--{opt} does not apply to the {} sampler",
            sampler_name(sampler)
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)] // one argument per CLI option
fn sigma(
    j: bool,
    epsilon: f64,
    delta: f64,
    steps: u64,
    sensitivity: f64,
    poisson: Option<f64>,
    m: Option<Method>,
    rule: ConversionRule,
) -> Result<()> {
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        bail!("--sensitivity {sensitivity:?} must be finite and positive");
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        bail!("--epsilon {epsilon:?} must be finite and positive");
    }
    let (sigma, how) = match poisson {
        Some(q) => {
            let (z, name) = match m {
                Some(Method::Zcdp) => {
                    bail!(
                        "--poisson is calibrated with rdp or pld (zCDP has no subsampling bound here)"
                    )
                }
                // The numerical PLD (FFT composition, pessimistic discretisation): the tightest.
                Some(Method::Pld) => (
                    dpinfer::accountants::pld_numeric::poisson_gaussian_sigma(
                        epsilon,
                        delta,
                        steps,
                        q,
                        dpinfer::accountants::pld_numeric::Discretisation::default(),
                    )?,
                    "pld (numerical)",
                ),
                _ => (
                    poisson_gaussian_sigma_rdp_with(
                        epsilon,
                        delta,
                        steps,
                        q,
                        &DEFAULT_ORDERS,
                        rule,
                    )?,
                    "rdp",
                ),
            };
            let s = round_up(z * sensitivity);
            if !s.is_finite() {
                bail!("σ overflows for sensitivity {sensitivity}");
            }
            (s, format!("{name}, Poisson q = {q}, add/remove"))
        }
        None => {
            let m = m.unwrap_or(Method::Pld);
            (
                gaussian_sigma(epsilon, delta, steps, sensitivity, m)?,
                m.name().to_string(),
            )
        }
    };
    if j {
        crate::outln!(
            "{}",
            json!({"sigma": sigma, "epsilon": epsilon, "delta": delta, "steps": steps,
                   "sensitivity": sensitivity, "poisson": poisson, "method": how})
        );
    } else {
        crate::outln!(
            "σ = {} for {steps} Gaussian releases of sensitivity {sensitivity:?} within (ε = {epsilon:?}, δ = {delta:e}) [{how}]",
            up(sigma, false)
        );
    }
    Ok(())
}

/// Runs `dpinfer account`.
///
/// # Errors
/// Unparsable or invalid events and parameters, or a composition no accountant can bound.
pub fn run(args: &AccountArgs) -> Result<()> {
    let j = args.json;
    let rule = args.conversion;
    match &args.cmd {
        AccountCmd::Epsilon {
            delta,
            events,
            neighbouring,
            accountant,
        } => composition(
            j,
            "epsilon",
            *delta,
            events,
            *neighbouring,
            *accountant,
            rule,
        ),
        AccountCmd::Delta {
            epsilon,
            events,
            neighbouring,
            accountant,
        } => composition(
            j,
            "delta",
            *epsilon,
            events,
            *neighbouring,
            *accountant,
            rule,
        ),
        AccountCmd::Sigma {
            epsilon,
            delta,
            steps,
            sensitivity,
            poisson,
            method: m,
        } => sigma(
            j,
            *epsilon,
            *delta,
            *steps,
            *sensitivity,
            *poisson,
            *m,
            rule,
        ),
        AccountCmd::MaxSteps {
            sampler,
            epsilon,
            delta,
            n,
            tau,
            tau_g,
            a,
            leapfrog,
            batch,
            max_order,
            method: m,
        } => {
            let s = *sampler;
            let (k, extra) = match s {
                SamplerArg::Penalty => {
                    reject(
                        s,
                        &[
                            ("tau-g", tau_g.is_some()),
                            ("leapfrog", leapfrog.is_some()),
                            ("batch", batch.is_some()),
                            ("max-order", max_order.is_some()),
                        ],
                    )?;
                    let t = tau.context("--tau is required for the penalty sampler")?;
                    let a = a.unwrap_or(0.5);
                    // The noise sd is τ·n^a·2c: an exponent that over- or underflows it is the
                    // exponent's fault, not τ's.
                    let scale = (*n as f64).powf(a);
                    if !(a.is_finite() && scale.is_normal() && (t * scale).is_finite()) {
                        bail!("--a {a:?}: n^a = {scale:?} over- or underflows the noise sd τ·n^a");
                    }
                    let m = m.unwrap_or(Method::Pld);
                    let k = match m {
                        Method::Zcdp => dp_penalty_max_steps_zcdp(*epsilon, *delta, t, *n, a)?,
                        Method::Pld => dp_penalty_max_steps_pld(*epsilon, *delta, t, *n, a)?,
                        Method::Rdp => bail!("the penalty budget is zcdp or pld, not rdp"),
                    };
                    (k, json!({"tau": t, "a": a, "method": m.name()}))
                }
                SamplerArg::Hmc => {
                    reject(
                        s,
                        &[
                            ("a", a.is_some()),
                            ("batch", batch.is_some()),
                            ("max-order", max_order.is_some()),
                        ],
                    )?;
                    let tl = tau.context("--tau (τ_l) is required for HMC")?;
                    let tg = tau_g.context("--tau-g is required for HMC")?;
                    let l = leapfrog.unwrap_or(10);
                    if l == 0 {
                        bail!("--leapfrog must be at least 1 (leapfrog steps per HMC iteration)");
                    }
                    let m = m.unwrap_or(Method::Pld);
                    let k = match m {
                        Method::Zcdp => dp_hmc_max_steps_zcdp(*epsilon, *delta, tl, tg, *n, l)?,
                        Method::Pld => dp_hmc_max_steps_pld(*epsilon, *delta, tl, tg, *n, l)?,
                        Method::Rdp => bail!("the HMC budget is zcdp or pld, not rdp"),
                    };
                    (
                        k,
                        json!({"tau_l": tl, "tau_g": tg, "leapfrog": l, "method": m.name()}),
                    )
                }
                SamplerArg::Barker => {
                    reject(
                        s,
                        &[
                            ("tau", tau.is_some()),
                            ("tau-g", tau_g.is_some()),
                            ("a", a.is_some()),
                            ("leapfrog", leapfrog.is_some()),
                        ],
                    )?;
                    if matches!(m, Some(Method::Zcdp | Method::Pld)) {
                        bail!("the Barker budget is rdp only");
                    }
                    let b = batch.context("--batch is required for Barker")?;
                    let mo = max_order.unwrap_or(256);
                    let (k, alpha) = dp_barker_max_steps_with(*epsilon, *delta, b, *n, mo, rule)?;
                    (
                        k,
                        json!({"batch": b, "max_order": mo, "rdp_order": alpha, "method": "rdp"}),
                    )
                }
            };
            if j {
                crate::outln!(
                    "{}",
                    json!({"max_steps": k, "sampler": sampler_name(s),
                           "epsilon": epsilon, "delta": delta, "n": n, "settings": extra})
                );
            } else {
                crate::outln!(
                    "{k} iterations of DP {} on n = {n} rows fit (ε = {epsilon:?}, δ = {delta:e}) [{extra}]",
                    sampler_name(s)
                );
            }
            Ok(())
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // parsed literals are exact
mod tests {
    use super::*;

    #[test]
    fn printed_values_round_up() {
        assert_eq!(up(6.719_402_117_939_477, false), "6.719403");
        assert_eq!(up(0.5, false), "0.500000");
        assert_eq!(up(6.829_594_983_115_601_5e-3, true), "6.829595e-3");
        assert_eq!(up(1e-5, true), "1e-5");
        assert_eq!(up(2.5e-3, true), "2.5e-3");
        assert_eq!(up(1.234_567_01e-9, true), "1.234568e-9");
        assert_eq!(up(0.0, true), "0");
        for x in [1e-300, 3.3e-7, 0.1, 2.5, 117.972_931_4, 1e12] {
            for sci in [false, true] {
                let t = up(x, sci);
                assert!(t.parse::<f64>().unwrap() >= x, "{x} {t}");
            }
        }
    }

    #[test]
    fn event_grammar() {
        let s = parse_event("gaussian:sigma=1.5,sens=2,count=10,poisson=0.01").unwrap();
        assert_eq!(s.count, 10);
        assert_eq!(s.sampling, Sampling::Poisson(0.01));
        assert!(
            matches!(s.base, Event::Gaussian { sigma, sensitivity } if sigma == 1.5 && sensitivity == 2.0)
        );
        let s = parse_event("laplace:b=2,wor=100/10000").unwrap();
        assert_eq!(s.sampling, Sampling::WithoutReplacement(100, 10000));
        let s = parse_event("dgaussian:sigma=16777216,sens=16777216,poisson=0.01").unwrap();
        assert!(matches!(
            s.base,
            Event::DiscreteGaussian { sigma, sensitivity } if sigma == 16_777_216.0 && sensitivity == 16_777_216
        ));
        let s = parse_event("dlaplace:b=4").unwrap();
        assert!(matches!(
            s.base,
            Event::DiscreteLaplace { scale, sensitivity } if scale == 4.0 && sensitivity == 1
        ));
        for bad in [
            "gaussian",
            "gaussian:sigma=x",
            "gaussian:sigma=1,sigma=2",
            "gaussian:sigma=1,foo=2",
            "gaussian:sigma=inf",
            "gaussian:sigma=1,poisson=0.1,wor=1/2",
            "nope:x=1",
            "svt:c=1,b=1,resample=2",
            "dlaplace:b=1,sens=1.5",
            "dgaussian:sens=2",
            "binomial:n=10,m=100,releases=2,bound=loose",
        ] {
            assert!(parse_event(bad).is_err(), "{bad}");
        }
    }
}
