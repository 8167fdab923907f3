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
//!
//! plus, on any event, `count=k` (k adaptive repetitions), `poisson=q` (Poisson subsampling,
//! add/remove neighbours) or `wor=batch/population` (sampling without replacement,
//! replace-one neighbours).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use dpinfer::accountants::calibrate::{
    Method, dp_barker_max_steps, dp_hmc_max_steps_pld, dp_hmc_max_steps_zcdp,
    dp_penalty_max_steps_pld, dp_penalty_max_steps_zcdp, gaussian_sigma,
    poisson_gaussian_sigma_rdp,
};
use dpinfer::accountants::{
    Accountant, ApproxAccountant, DEFAULT_ORDERS, Event, Neighbouring, PldAccountant,
    PureAccountant, RdpAccountant, Report, ZcdpAccountant,
};
use serde_json::{Value, json};

/// Arguments of `dpinfer account`.
#[derive(Debug, Args)]
pub struct AccountArgs {
    /// Print one JSON object instead of human-readable lines.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    cmd: AccountCmd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Relation {
    /// Add or remove one record.
    AddRemove,
    /// Replace one record.
    ReplaceOne,
}

impl Relation {
    fn to_lib(self) -> Neighbouring {
        match self {
            Self::AddRemove => Neighbouring::AddRemove,
            Self::ReplaceOne => Neighbouring::ReplaceOne,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Self::AddRemove => "add/remove",
            Self::ReplaceOne => "replace-one",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    /// Every accountant that can express the events; the smallest ε is the answer.
    All,
    /// Pure ε-DP (basic composition).
    Pure,
    /// (ε, δ)-DP with the optimal composition theorem.
    Approx,
    /// zCDP.
    Zcdp,
    /// Rényi DP over the default order grid.
    Rdp,
    /// The Gaussian privacy-loss distribution (exact for Gaussian mechanisms).
    Pld,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MethodArg {
    /// zCDP.
    Zcdp,
    /// Exact Gaussian PLD.
    Pld,
    /// Rényi DP.
    Rdp,
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
        /// Events, `kind:key=value,…` (repeatable).
        #[arg(long = "event", required = true)]
        events: Vec<String>,
        /// Neighbouring relation.
        #[arg(long, value_enum, default_value = "add-remove")]
        neighbouring: Relation,
        /// Accountant.
        #[arg(long, value_enum, default_value = "all")]
        accountant: Which,
    },
    /// δ of a composition at a given ε.
    Delta {
        /// Target ε.
        #[arg(long)]
        epsilon: f64,
        /// Events, `kind:key=value,…` (repeatable).
        #[arg(long = "event", required = true)]
        events: Vec<String>,
        /// Neighbouring relation.
        #[arg(long, value_enum, default_value = "add-remove")]
        neighbouring: Relation,
        /// Accountant.
        #[arg(long, value_enum, default_value = "all")]
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
        /// Poisson sampling rate q (RDP, add/remove; σ in units of the sensitivity).
        #[arg(long)]
        poisson: Option<f64>,
        /// Accounting method (without --poisson).
        #[arg(long, value_enum, default_value = "pld")]
        method: MethodArg,
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
        /// Penalty: exponent a of n (noise sd τ·n^a·2c); default 0.5.
        #[arg(long, default_value_t = 0.5)]
        a: f64,
        /// HMC: leapfrog steps L.
        #[arg(long, default_value_t = 10)]
        leapfrog: u64,
        /// Barker: minibatch size.
        #[arg(long)]
        batch: Option<u64>,
        /// Barker: largest RDP order tried.
        #[arg(long, default_value_t = 256)]
        max_order: u64,
        /// Accounting (penalty and HMC).
        #[arg(long, value_enum, default_value = "pld")]
        method: MethodArg,
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
        other => bail!(
            "unknown event kind {other:?} (expected gaussian, laplace, pure, approx, zcdp, svt)"
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

fn compose_into(acc: &mut dyn Accountant, specs: &[Spec]) -> Result<()> {
    for sp in specs {
        let base = sp.base;
        match sp.sampling {
            Sampling::None => acc.compose_n(&base, sp.count)?,
            Sampling::Poisson(q) => {
                acc.compose_n(&Event::PoissonSampled { q, event: &base }, sp.count)?
            }
            Sampling::WithoutReplacement(batch, population) => acc.compose_n(
                &Event::SampledWithoutReplacement {
                    batch,
                    population,
                    event: &base,
                },
                sp.count,
            )?,
        }
    }
    Ok(())
}

fn accountant(which: Which, rel: Neighbouring) -> Box<dyn Accountant> {
    match which {
        Which::Pure => Box::new(PureAccountant::new(rel)),
        Which::Approx => Box::new(ApproxAccountant::new(rel)),
        Which::Zcdp => Box::new(ZcdpAccountant::new(rel)),
        Which::Rdp | Which::All => Box::new(RdpAccountant::new(rel)),
        Which::Pld => Box::new(PldAccountant::new(rel)),
    }
}

fn name(which: Which) -> &'static str {
    match which {
        Which::All => "all",
        Which::Pure => "pure",
        Which::Approx => "approx",
        Which::Zcdp => "zcdp",
        Which::Rdp => "rdp",
        Which::Pld => "pld",
    }
}

/// A question put to a composed accountant (ε at δ, or δ at ε).
type Query = dyn Fn(&dyn Accountant) -> Result<Report, dpinfer::accountants::AccountantError>;

/// Results of every requested accountant: (name, report or the reason it cannot answer).
fn evaluate(
    which: Which,
    rel: Neighbouring,
    specs: &[Spec],
    query: &Query,
) -> Vec<(Which, Result<Report>)> {
    let list: Vec<Which> = if which == Which::All {
        vec![
            Which::Pure,
            Which::Approx,
            Which::Zcdp,
            Which::Rdp,
            Which::Pld,
        ]
    } else {
        vec![which]
    };
    list.into_iter()
        .map(|w| {
            let mut acc = accountant(w, rel);
            let r = compose_into(acc.as_mut(), specs)
                .and_then(|()| query(acc.as_ref()).map_err(anyhow::Error::from));
            (w, r)
        })
        .collect()
}

fn report_json(w: Which, r: &Result<Report>) -> Value {
    match r {
        Ok(rep) => json!({
            "accountant": name(w),
            "epsilon": rep.epsilon,
            "delta": rep.delta,
            "conversion": format!("{:?}", rep.conversion),
        }),
        Err(e) => json!({ "accountant": name(w), "error": format!("{e:#}") }),
    }
}

/// The tightest valid answer by `key` (smallest ε or δ).
fn best(results: &[(Which, Result<Report>)], key: fn(&Report) -> f64) -> Option<(Which, Report)> {
    results
        .iter()
        .filter_map(|(w, r)| r.as_ref().ok().map(|r| (*w, *r)))
        .filter(|(_, r)| key(r).is_finite())
        .min_by(|a, b| key(&a.1).total_cmp(&key(&b.1)))
}

fn composition(
    json_out: bool,
    what: &str,
    target: f64,
    events: &[String],
    rel: Relation,
    which: Which,
) -> Result<()> {
    let specs: Vec<Spec> = events
        .iter()
        .map(|e| parse_event(e))
        .collect::<Result<_>>()?;
    for sp in &specs {
        sp.base
            .validate(rel.to_lib())
            .with_context(|| format!("event {:?}", sp.text))?;
    }
    let query: Box<Query> = if what == "epsilon" {
        Box::new(move |a: &dyn Accountant| a.epsilon(target))
    } else {
        Box::new(move |a: &dyn Accountant| a.delta(target))
    };
    let results = evaluate(which, rel.to_lib(), &specs, query.as_ref());
    let key: fn(&Report) -> f64 = if what == "epsilon" {
        |r| r.epsilon
    } else {
        |r| r.delta
    };
    let Some((bw, br)) = best(&results, key) else {
        let why: Vec<String> = results
            .iter()
            .filter_map(|(w, r)| r.as_ref().err().map(|e| format!("{}: {e:#}", name(*w))))
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
            "accountant": name(bw),
            "conversion": format!("{:?}", br.conversion),
            "all": results.iter().map(|(w, r)| report_json(*w, r)).collect::<Vec<_>>(),
        });
        println!("{v}");
    } else {
        println!(
            "ε = {:.6} at δ = {:e} ({} accountant, {:?}; {} neighbours)",
            br.epsilon,
            br.delta,
            name(bw),
            br.conversion,
            rel.name()
        );
        if results.len() > 1 {
            for (w, r) in &results {
                match r {
                    Ok(rep) => println!(
                        "  {:<7} ε = {:<12.6} δ = {:e}  {:?}",
                        name(*w),
                        rep.epsilon,
                        rep.delta,
                        rep.conversion
                    ),
                    Err(e) => println!("  {:<7} cannot: {e:#}", name(*w)),
                }
            }
        }
    }
    Ok(())
}

fn method(m: MethodArg) -> Method {
    match m {
        MethodArg::Zcdp => Method::Zcdp,
        MethodArg::Pld => Method::Pld,
        MethodArg::Rdp => Method::Rdp,
    }
}

fn method_name(m: MethodArg) -> &'static str {
    match m {
        MethodArg::Zcdp => "zcdp",
        MethodArg::Pld => "pld",
        MethodArg::Rdp => "rdp",
    }
}

/// Runs `dpinfer account`.
///
/// # Errors
/// Unparsable or invalid events and parameters, or a composition no accountant can bound.
pub fn run(args: &AccountArgs) -> Result<()> {
    let j = args.json;
    match &args.cmd {
        AccountCmd::Epsilon {
            delta,
            events,
            neighbouring,
            accountant,
        } => composition(j, "epsilon", *delta, events, *neighbouring, *accountant),
        AccountCmd::Delta {
            epsilon,
            events,
            neighbouring,
            accountant,
        } => composition(j, "delta", *epsilon, events, *neighbouring, *accountant),
        AccountCmd::Sigma {
            epsilon,
            delta,
            steps,
            sensitivity,
            poisson,
            method: m,
        } => {
            let (sigma, how) = match poisson {
                Some(q) => {
                    let z =
                        poisson_gaussian_sigma_rdp(*epsilon, *delta, *steps, *q, &DEFAULT_ORDERS)?;
                    (z * sensitivity, format!("RDP, Poisson q = {q}, add/remove"))
                }
                None => (
                    gaussian_sigma(*epsilon, *delta, *steps, *sensitivity, method(*m))?,
                    method_name(*m).to_string(),
                ),
            };
            if j {
                println!(
                    "{}",
                    json!({"sigma": sigma, "epsilon": epsilon, "delta": delta, "steps": steps,
                           "sensitivity": sensitivity, "poisson": poisson, "method": how})
                );
            } else {
                println!(
                    "σ = {sigma:.6} for {steps} Gaussian releases of sensitivity {sensitivity} within (ε = {epsilon}, δ = {delta:e}) [{how}]"
                );
            }
            Ok(())
        }
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
            let (k, extra) = match sampler {
                SamplerArg::Penalty => {
                    let t = tau.context("--tau is required for the penalty sampler")?;
                    let k = match m {
                        MethodArg::Zcdp => dp_penalty_max_steps_zcdp(*epsilon, *delta, t, *n, *a)?,
                        MethodArg::Pld => dp_penalty_max_steps_pld(*epsilon, *delta, t, *n, *a)?,
                        MethodArg::Rdp => bail!("the penalty budget is zcdp or pld"),
                    };
                    (k, json!({"tau": t, "a": a, "method": method_name(*m)}))
                }
                SamplerArg::Hmc => {
                    let tl = tau.context("--tau (τ_l) is required for HMC")?;
                    let tg = tau_g.context("--tau-g is required for HMC")?;
                    let k = match m {
                        MethodArg::Zcdp => {
                            dp_hmc_max_steps_zcdp(*epsilon, *delta, tl, tg, *n, *leapfrog)?
                        }
                        MethodArg::Pld => {
                            dp_hmc_max_steps_pld(*epsilon, *delta, tl, tg, *n, *leapfrog)?
                        }
                        MethodArg::Rdp => bail!("the HMC budget is zcdp or pld"),
                    };
                    (
                        k,
                        json!({"tau_l": tl, "tau_g": tg, "leapfrog": leapfrog, "method": method_name(*m)}),
                    )
                }
                SamplerArg::Barker => {
                    let b = batch.context("--batch is required for Barker")?;
                    let (k, alpha) = dp_barker_max_steps(*epsilon, *delta, b, *n, *max_order)?;
                    (k, json!({"batch": b, "rdp_order": alpha, "method": "rdp"}))
                }
            };
            if j {
                println!(
                    "{}",
                    json!({"max_steps": k, "sampler": format!("{sampler:?}").to_lowercase(),
                           "epsilon": epsilon, "delta": delta, "n": n, "settings": extra})
                );
            } else {
                println!(
                    "{k} iterations of DP {} on n = {n} rows fit (ε = {epsilon}, δ = {delta:e}) [{extra}]",
                    format!("{sampler:?}").to_lowercase()
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
    fn event_grammar() {
        let s = parse_event("gaussian:sigma=1.5,sens=2,count=10,poisson=0.01").unwrap();
        assert_eq!(s.count, 10);
        assert_eq!(s.sampling, Sampling::Poisson(0.01));
        assert!(
            matches!(s.base, Event::Gaussian { sigma, sensitivity } if sigma == 1.5 && sensitivity == 2.0)
        );
        let s = parse_event("laplace:b=2,wor=100/10000").unwrap();
        assert_eq!(s.sampling, Sampling::WithoutReplacement(100, 10000));
        for bad in [
            "gaussian",
            "gaussian:sigma=x",
            "gaussian:sigma=1,sigma=2",
            "gaussian:sigma=1,foo=2",
            "gaussian:sigma=inf",
            "gaussian:sigma=1,poisson=0.1,wor=1/2",
            "nope:x=1",
            "svt:c=1,b=1,resample=2",
        ] {
            assert!(parse_event(bad).is_err(), "{bad}");
        }
    }
}
