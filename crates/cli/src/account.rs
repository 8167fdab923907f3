//! `dpinfer account`: the accountants crate from the command line — ε (or δ) of a
//! composition under every accountant, σ for a budget, and the maximum iterations of the DP
//! MCMC samplers. Human-readable lines, or one JSON object with `--json`.
//!
//! Events are written in the library's event grammar, `kind:key=value,…`
//! (`dpinfer::accountants::spec`, parsed into `EventSpec`; the kinds and keys are in
//! `dpinfer account epsilon --help`). Calibration is the library's `calibrate::{SigmaRequest,
//! MaxStepsRequest}`; numbers are printed with its `RoundedUp`. This module holds the clap
//! arguments and the printing.
//!
//! With `--accountant all` (the default) every accountant is run and the smallest bound is
//! reported; each one is a valid upper bound, so the minimum is too. Printed ε, δ and σ are
//! rounded *up* to the printed digits (JSON carries the full `f64`), so copying a printed
//! value never claims less privacy loss, or more noise, than was computed.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use dpinfer::accountants::calibrate::{MaxStepsRequest, Method, SigmaRequest};
use dpinfer::accountants::pld_numeric::{DEFAULT_TRUNCATION, Discretisation};
use dpinfer::accountants::spec::SYNTAX;
use dpinfer::accountants::{
    AccountantError, AccountantKind, Answer, ConversionRule, EventSpec, Neighbouring,
    ParseNameError, PldAccountant, Query, Report, RoundedUp,
};
use serde_json::{Value, json};

/// Long help of `--event`: the library's event grammar ([`SYNTAX`]).
fn event_help() -> String {
    format!(
        "One release or repeated release, `kind:key=value,…` (repeatable; the events compose \
         adaptively).\n{SYNTAX} Sensitivities are under the chosen --neighbouring relation.\n\
         Example: --event gaussian:sigma=1,poisson=0.01,count=10000"
    )
}

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

// The arguments `epsilon` and `delta` share: what is composed, and how it is accounted.
// (A `//` comment: clap would take a doc comment of a flattened struct as the subcommand's
// about text.)
#[derive(Debug, Args)]
struct Composition {
    /// Events, `kind:key=value,…` (repeatable).
    #[arg(long = "event", required = true, long_help = event_help())]
    events: Vec<String>,
    /// Neighbouring relation: add-remove (also add/remove) or replace-one.
    #[arg(long, default_value = "add-remove")]
    neighbouring: Neighbouring,
    /// Accountant: all (every one that can express the events; the smallest bound is
    /// the answer), pure, approx (optimal composition), zcdp, rdp (default order grid) or
    /// pld (exact for Gaussians, numerical FFT for subsampled Gaussian/Laplace/pure-ε).
    #[arg(long, default_value = "all")]
    accountant: Which,
    /// Grid interval of the numerical PLD, 1e-7 to 1 (default 1e-4, as dp_accounting): a
    /// smaller one is a finer, tighter (slower) grid. Whatever is asked, the grid is
    /// coarsened automatically when the composed loss needs more than 2^22 points.
    #[arg(long, value_name = "H")]
    pld_interval: Option<f64>,
}

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
        #[command(flatten)]
        of: Composition,
    },
    /// δ of a composition at a given ε.
    Delta {
        /// Target ε.
        #[arg(long)]
        epsilon: f64,
        #[command(flatten)]
        of: Composition,
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
        format!(
            "ε = {} at δ = {}",
            RoundedUp::fixed(r.epsilon),
            RoundedUp::scientific(r.delta)
        )
    } else {
        format!(
            "δ = {} at ε = {}",
            RoundedUp::scientific(r.delta),
            RoundedUp::fixed(r.epsilon)
        )
    }
}

fn composition(
    json_out: bool,
    (what, target): (&str, f64),
    of: &Composition,
    rule: ConversionRule,
) -> Result<()> {
    let Composition {
        events,
        neighbouring: rel,
        accountant: which,
        pld_interval,
    } = of;
    let (rel, which, pld_interval) = (*rel, *which, *pld_interval);
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
    let specs = events
        .iter()
        .map(|text| {
            let spec: EventSpec = text.parse()?;
            spec.validate(rel)
                .with_context(|| format!("event {text:?}"))?;
            Ok(spec.to_pair())
        })
        .collect::<Result<Vec<_>>>()?;
    let query = if what == "epsilon" {
        Query::EpsilonAt(target)
    } else {
        Query::DeltaAt(target)
    };
    let kinds = which.0.map_or_else(|| Query::KINDS.to_vec(), |k| vec![k]);
    let mut each = query.ask_each(&kinds, rel, rule, &specs);
    if let Some(h) = pld_interval {
        let d = Discretisation::new(h, DEFAULT_TRUNCATION).context("--pld-interval")?;
        for (k, r) in &mut each {
            if *k == AccountantKind::Pld {
                *r = query.ask(&mut PldAccountant::with_discretisation(rel, d), &specs);
            }
        }
    }
    let Answer {
        accountant: bw,
        report: br,
        each: results,
    } = query.pick(each)?;
    if json_out {
        let v = json!({
            "query": what,
            "target": target,
            "neighbouring": rel.name(),
            "events": events,
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

/// A library error about a setting, in the words of the flag that set it.
fn in_flags(request: MaxStepsRequest, n: u64, e: AccountantError) -> anyhow::Error {
    match (request, e) {
        (
            MaxStepsRequest::Penalty { a, .. },
            AccountantError::InvalidParameter { name: "a", .. },
        ) => {
            #[allow(clippy::cast_precision_loss)] // shown, not used
            let scale = (n as f64).powf(a);
            anyhow!("--a {a:?}: n^a = {scale:?} over- or underflows the noise sd τ·n^a")
        }
        (MaxStepsRequest::Penalty { .. }, AccountantError::Unsupported { .. }) => {
            anyhow!("the penalty budget is zcdp or pld, not rdp")
        }
        (
            MaxStepsRequest::Hmc { .. },
            AccountantError::InvalidCount {
                name: "leapfrog", ..
            },
        ) => {
            anyhow!("--leapfrog must be at least 1 (leapfrog steps per HMC iteration)")
        }
        (MaxStepsRequest::Hmc { .. }, AccountantError::Unsupported { .. }) => {
            anyhow!("the HMC budget is zcdp or pld, not rdp")
        }
        // The library prints the value with `{}` (300 digits for 1e-320): the shortest
        // round-trip form here.
        (_, AccountantError::InvalidParameter { name, value }) => {
            anyhow!("invalid parameter {name} = {value:?}")
        }
        (_, e) => e.into(),
    }
}

fn sampler_name(s: SamplerArg) -> &'static str {
    match s {
        SamplerArg::Penalty => "penalty",
        SamplerArg::Hmc => "hmc",
        SamplerArg::Barker => "barker",
    }
}

/// Fails if an option of `given` that `sampler` does not use (not in `takes`) was given (it
/// would be silently ignored): the first such one is named.
fn reject(sampler: SamplerArg, given: &[(&str, bool)], takes: &[&str]) -> Result<()> {
    if let Some((opt, _)) = given.iter().find(|(o, g)| *g && !takes.contains(o)) {
        bail!(
            "--{opt} does not apply to the {} sampler",
            sampler_name(sampler)
        );
    }
    Ok(())
}

/// `dpinfer account sigma`: the flags are checked in their own words, then the library
/// calibrates.
fn sigma(j: bool, request: SigmaRequest) -> Result<()> {
    let SigmaRequest {
        epsilon,
        delta,
        steps,
        sensitivity,
        poisson,
        ..
    } = request;
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        bail!("--sensitivity {sensitivity:?} must be finite and positive");
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        bail!("--epsilon {epsilon:?} must be finite and positive");
    }
    if poisson.is_some() && request.method == Some(Method::Zcdp) {
        bail!("--poisson is calibrated with rdp or pld (zCDP has no subsampling bound here)");
    }
    let calibrated = request.calibrate().map_err(|e| match e {
        // The flags were checked above: a bad sensitivity now is an overflowing σ.
        AccountantError::InvalidParameter {
            name: "sensitivity",
            ..
        } => anyhow!("σ overflows for sensitivity {sensitivity:?}"),
        e => e.into(),
    })?;
    let (sigma, how) = (calibrated.sigma, calibrated.to_string());
    if j {
        crate::outln!(
            "{}",
            json!({"sigma": sigma, "epsilon": epsilon, "delta": delta, "steps": steps,
                   "sensitivity": sensitivity, "poisson": poisson, "method": how})
        );
    } else {
        crate::outln!(
            "σ = {} for {steps} Gaussian releases of sensitivity {sensitivity:?} within (ε = {epsilon:?}, δ = {delta:e}) [{how}]",
            RoundedUp::fixed(sigma)
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
        AccountCmd::Epsilon { delta, of } => composition(j, ("epsilon", *delta), of, rule),
        AccountCmd::Delta { epsilon, of } => composition(j, ("delta", *epsilon), of, rule),
        AccountCmd::Sigma {
            epsilon,
            delta,
            steps,
            sensitivity,
            poisson,
            method,
        } => sigma(
            j,
            SigmaRequest {
                epsilon: *epsilon,
                delta: *delta,
                steps: *steps,
                sensitivity: *sensitivity,
                poisson: *poisson,
                method: *method,
                rule,
            },
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
            // The sampler-specific flags; the first given one the sampler does not take is
            // refused.
            let given = [
                ("tau", tau.is_some()),
                ("tau-g", tau_g.is_some()),
                ("a", a.is_some()),
                ("leapfrog", leapfrog.is_some()),
                ("batch", batch.is_some()),
                ("max-order", max_order.is_some()),
            ];
            let request = match s {
                SamplerArg::Penalty => {
                    reject(s, &given, &["tau", "a"])?;
                    MaxStepsRequest::Penalty {
                        tau: tau.context("--tau is required for the penalty sampler")?,
                        a: a.unwrap_or(MaxStepsRequest::DEFAULT_A),
                        method: m.unwrap_or(MaxStepsRequest::DEFAULT_METHOD),
                    }
                }
                SamplerArg::Hmc => {
                    reject(s, &given, &["tau", "tau-g", "leapfrog"])?;
                    MaxStepsRequest::Hmc {
                        tau_l: tau.context("--tau (τ_l) is required for HMC")?,
                        tau_g: tau_g.context("--tau-g is required for HMC")?,
                        leapfrog: leapfrog.unwrap_or(MaxStepsRequest::DEFAULT_LEAPFROG),
                        method: m.unwrap_or(MaxStepsRequest::DEFAULT_METHOD),
                    }
                }
                SamplerArg::Barker => {
                    reject(s, &given, &["batch", "max-order"])?;
                    if matches!(m, Some(Method::Zcdp | Method::Pld)) {
                        bail!("the Barker budget is rdp only");
                    }
                    MaxStepsRequest::Barker {
                        batch: batch.context("--batch is required for Barker")?,
                        max_order: max_order.unwrap_or(MaxStepsRequest::DEFAULT_MAX_ORDER),
                    }
                }
            };
            let found = request
                .max_steps(*epsilon, *delta, *n, rule)
                .map_err(|e| in_flags(request, *n, e))?;
            let k = found.steps;
            let extra = match request {
                MaxStepsRequest::Penalty { tau, a, method } => {
                    json!({"tau": tau, "a": a, "method": method.name()})
                }
                MaxStepsRequest::Hmc {
                    tau_l,
                    tau_g,
                    leapfrog,
                    method,
                } => json!({"tau_l": tau_l, "tau_g": tau_g, "leapfrog": leapfrog,
                            "method": method.name()}),
                MaxStepsRequest::Barker { batch, max_order } => json!({"batch": batch,
                    "max_order": max_order, "rdp_order": found.rdp_order, "method": "rdp"}),
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
