//! `dpinfer account` end to end, against independent values: the accountants README figure,
//! closed forms (pure composition, Gaussian zCDP), the MCMC budget counts quoted in the mcmc
//! README, and σ calibration round trips.

use crate::common;

use common::{dpinfer_line, root, show};
use std::process::Output;

/// The tests write each call as the command line a user types ([`common::dpinfer_line`]).
fn run(line: &str) -> Output {
    dpinfer_line(line, &root())
}

/// `dpinfer account --json line`, which must succeed, as JSON.
fn json(line: &str) -> serde_json::Value {
    let o = run(&format!("account --json {line}"));
    assert!(o.status.success(), "{}", show(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// ε at `delta` of `event` (the `--event` grammar) by `accountant`: `account epsilon --json`.
fn epsilon_of(accountant: &str, delta: &str, event: &str) -> f64 {
    json(&format!(
        "epsilon --delta {delta} --accountant {accountant} --event {event}"
    ))["epsilon"]
        .as_f64()
        .unwrap()
}

/// Runs `dpinfer line` and checks it fails with exit code 2 and one `error: ` line on stderr,
/// without a panic; returns the output.
fn one_error_line(args: &str) -> Output {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
    assert!(
        err.starts_with("error: ") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert!(!err.contains("panicked"));
    o
}

#[test]
fn subsampled_gaussian_rdp_matches_the_accountants_readme() {
    // DP-SGD: q = 1 %, σ = 1, 10 000 steps, δ = 1e-5 → ε ≈ 6.7194 (RDP; the accountants
    // crate's README, itself checked against Opacus / dp_accounting in its golden tests).
    let v = json(
        "epsilon --delta 1e-5 --accountant rdp --event gaussian:sigma=1,poisson=0.01,count=10000",
    );
    let e = v["epsilon"].as_f64().unwrap();
    assert!((e - 6.7194).abs() < 1e-3, "{e}");
    assert_eq!(v["accountant"], "rdp");
    assert_eq!(v["neighbouring"], "add/remove");
    // By default every accountant runs; the numerical PLD is the tightest for DP-SGD.
    let v = json("epsilon --delta 1e-5 --event gaussian:sigma=1,poisson=0.01,count=10000");
    let e_all = v["epsilon"].as_f64().unwrap();
    assert_eq!(v["accountant"], "pld");
    assert_eq!(v["conversion"], "numerical_pld");
    assert!(e_all < e && e_all > 0.9 * e, "{e_all} vs rdp {e}");
}

#[test]
fn closed_forms() {
    // Pure composition: 4 × 0.5 + 3 × Laplace(b = 2, Δ = 1) = 2 + 1.5 = 3.5.
    let v = json(
        "epsilon --delta 0 --accountant pure --event pure:eps=0.5,count=4 \
            --event laplace:b=2,count=3",
    );
    let e = v["epsilon"].as_f64().unwrap();
    assert!((3.5..3.5 * (1.0 + 1e-12)).contains(&e), "{e}");
    // zCDP of k Gaussians: ρ = kΔ²/(2σ²); ε = ρ + 2√(ρ ln(1/δ)) is a valid (looser) bound,
    // and the zCDP accountant's conversion may only be tighter, never above it.
    let (k, sigma, delta) = (50.0_f64, 3.0_f64, 1e-6_f64);
    let rho = k / (2.0 * sigma * sigma);
    let bs = rho + 2.0 * (rho * (1.0 / delta).ln()).sqrt();
    let v = json("epsilon --delta 1e-6 --accountant zcdp --event gaussian:sigma=3,count=50");
    let e = v["epsilon"].as_f64().unwrap();
    assert!(e <= bs && e > 0.5 * bs, "{e} vs Bun-Steinke {bs}");
    // The exact PLD is the tightest for pure Gaussian compositions ("all" picks it).
    let v = json("epsilon --delta 1e-6 --event gaussian:sigma=3,count=50");
    assert_eq!(v["accountant"], "pld");
    assert!(v["epsilon"].as_f64().unwrap() <= e);
}

#[test]
fn sigma_calibration_round_trips() {
    for method in ["pld", "zcdp"] {
        let v = json(&format!(
            "sigma --epsilon 1 --delta 1e-5 --steps 1000 --method {method}"
        ));
        let s = v["sigma"].as_f64().unwrap();
        let ev = format!("gaussian:sigma={s},count=1000");
        let e = epsilon_of(method, "1e-5", &ev);
        // PLD calibrates with the accountant's own exact inversion (tight); zCDP calibrates
        // with the closed-form ρ(ε, δ), which the accountant's tighter conversion beats.
        let floor = if method == "pld" { 0.999_999 } else { 0.7 };
        assert!(e <= 1.0 && e > floor, "{method}: σ {s} gives ε {e}");
    }
    let v = json("sigma --epsilon 2 --delta 1e-5 --steps 5000 --poisson 0.01");
    let s = v["sigma"].as_f64().unwrap();
    let ev = format!("gaussian:sigma={s},poisson=0.01,count=5000");
    let e = epsilon_of("rdp", "1e-5", &ev);
    assert!(e <= 2.0 && e > 1.9, "σ {s} gives ε {e}");
    // The numerical PLD calibrates tighter: a smaller σ whose PLD ε is just within budget.
    let v = json("sigma --epsilon 2 --delta 1e-5 --steps 5000 --poisson 0.01 --method pld");
    let s_pld = v["sigma"].as_f64().unwrap();
    assert!(s_pld < s, "pld σ {s_pld} vs rdp σ {s}");
    let ev = format!("gaussian:sigma={s_pld},poisson=0.01,count=5000");
    let e = epsilon_of("pld", "1e-5", &ev);
    assert!(e <= 2.0 && e > 1.98, "pld σ {s_pld} gives ε {e}");
}

#[test]
fn mcmc_budgets_match_the_samplers() {
    // The mcmc crate's README: DP penalty ε = 6, δ = 1e-6, τ = 0.1, n = 1e5 → 1431 (PLD);
    // zCDP must allow fewer (thesis Theorem 6 vs 7).
    let penalty = |extra: &str| {
        json(&format!(
            "max-steps --sampler penalty --epsilon 6 --delta 1e-6 --tau 0.1 --n 100000 {extra}"
        ))["max_steps"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(penalty(""), 1431);
    assert!(penalty("--method zcdp") < 1431);
    let b = json("max-steps --sampler barker --epsilon 6 --delta 1e-5 --batch 1000 --n 100000");
    assert!(b["max_steps"].as_u64().unwrap() > 0);
}

#[test]
fn bad_input_is_one_error_line() {
    for args in [
        "account epsilon --delta 1e-5 --event gaussian:sigma=-1",
        "account epsilon --delta 1e-5 --event gaussian:sigma=nan",
        "account epsilon --delta 2 --event gaussian:sigma=1",
        "account epsilon --delta 1e-5 --event warp:x=1",
        "account sigma --epsilon=-1 --delta 1e-5",
        "account max-steps --sampler hmc --epsilon 1 --delta 1e-5 --n 10",
        "account epsilon --delta 1e-5 --neighbouring add-remove \
            --event gaussian:sigma=1,wor=10/100",
    ] {
        one_error_line(args);
    }
}

#[test]
fn delta_matches_the_gaussian_pld_closed_form() {
    // Four Gaussians, σ = 4, Δ = 1: μ = √4 · 1/4 = 0.5, and the exact (Balle–Wang 2018 Thm 8)
    // δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = 0.006829594983114577 at ε = 1 (Python
    // math.erfc). The report is an upper bound, tight to rounding.
    let v = json("delta --epsilon 1 --event gaussian:sigma=4,count=4");
    let d = v["delta"].as_f64().unwrap();
    let exact = 0.006_829_594_983_114_577;
    assert!(d >= exact && d <= exact * (1.0 + 1e-9), "{d}");
    assert_eq!(v["accountant"], "pld");
    assert_eq!(v["conversion"], "gaussian_pld");
    assert_eq!(v["query"], "delta");
    // Every accountant's δ at this ε is a valid bound, so none may be below the exact one.
    for r in v["all"].as_array().unwrap() {
        if let Some(d) = r["delta"].as_f64() {
            assert!(d >= exact, "{r}");
        }
    }
}

#[test]
fn json_has_the_documented_keys() {
    let v = json(
        "epsilon --delta 1e-5 --neighbouring replace-one \
            --event gaussian:sigma=2,sens=2,count=100,wor=100/10000 --event laplace:b=10,count=3",
    );
    for k in [
        "query",
        "target",
        "neighbouring",
        "events",
        "epsilon",
        "delta",
        "accountant",
        "conversion",
        "order",
        "all",
    ] {
        assert!(v.get(k).is_some(), "missing {k}: {v}");
    }
    assert_eq!(v["neighbouring"], "replace-one");
    assert_eq!(v["events"].as_array().unwrap().len(), 2);
    assert_eq!(v["all"].as_array().unwrap().len(), 5);
    let e = v["epsilon"].as_f64().unwrap();
    // The answer is the smallest finite ε over the accountants that could bound it.
    let min = v["all"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["epsilon"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!((e - min).abs() <= 0.0 && e > 0.0, "{e} vs {min}");
    // Sampled Gaussians and Laplace: the numerical PLD accounts them.
    let pld = &v["all"].as_array().unwrap()[4];
    assert_eq!(pld["accountant"], "pld");
    assert_eq!(pld["conversion"], "numerical_pld", "{pld}");
}

#[test]
fn human_output_names_the_accountant_and_conversion() {
    let o = run("account epsilon --delta 1e-5 --accountant rdp \
        --event gaussian:sigma=1,poisson=0.01,count=10000");
    assert!(o.status.success(), "{}", show(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1, "{out}");
    // 6.719402117… printed rounded up, never down.
    assert!(out.starts_with("ε = 6.719403 at δ = 1e-5 ("), "{out}");
    // The conversion in the library's own words (`Conversion`'s Display), with its theorem.
    assert!(
        out.contains("rdp accountant") && out.contains("RDP → (ε, δ) via Balle et al. 2020 Thm 21"),
        "{out}"
    );
    assert!(out.contains("add/remove neighbours"), "{out}");
    let o = run("account sigma --epsilon 1 --delta 1e-5 --steps 10");
    assert!(o.status.success(), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("σ = "));
}

#[test]
fn sigma_scales_with_the_sensitivity() {
    // σ is linear in Δ (the Gaussian's privacy depends on σ/Δ only), with Poisson sampling too.
    let s = |sens: &str| {
        json(&format!(
            "sigma --epsilon 1 --delta 1e-6 --steps 200 --poisson 0.05 --sensitivity {sens}"
        ))["sigma"]
            .as_f64()
            .unwrap()
    };
    let (s1, s3) = (s("1"), s("3"));
    assert!((s3 / s1 - 3.0).abs() < 1e-12, "{s1} {s3}");
}

#[test]
fn options_that_do_not_apply_are_errors_not_ignored() {
    for args in [
        "account sigma --epsilon 1 --delta 1e-5 --poisson 0.01 --sensitivity=-1",
        "account sigma --epsilon 1 --delta 1e-5 --sensitivity NaN",
        "account sigma --epsilon 1 --delta 1e-5 --poisson 0.01 --method zcdp",
        "account max-steps --sampler penalty --epsilon 6 --delta 1e-6 --tau 0.1 --n 1000 \
            --batch 10",
        "account max-steps --sampler barker --epsilon 6 --delta 1e-6 --batch 100 --n 1000 \
            --method zcdp",
        "account epsilon --delta=-1e-5 --event gaussian:sigma=1",
        "account delta --epsilon inf --event pure:eps=1",
        "account epsilon --delta 1e-5 --event gaussian:sigma=1,count=-3",
    ] {
        let o = one_error_line(args);
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // A sampler-specific flag given to another sampler: the first one is named.
    for (args, named) in [
        ("penalty --tau 0.1 --batch 10 --leapfrog 3", "--leapfrog"),
        ("hmc --tau 0.1 --tau-g 0.1 --a 2 --max-order 8", "--a"),
        ("barker --batch 100 --tau-g 0.1 --tau 0.1", "--tau"),
    ] {
        let o = one_error_line(&format!(
            "account max-steps --epsilon 6 --delta 1e-6 --n 1000 --sampler {args}"
        ));
        let sampler = args.split(' ').next().unwrap();
        let want = format!("error: {named} does not apply to the {sampler} sampler");
        assert!(show(&o).contains(&want), "{}", show(&o));
    }
}

#[test]
fn sampling_scheme_must_match_the_relation() {
    // Sampling without replacement is analysed under replace-one only, Poisson under
    // add/remove only: one error naming the relation, before any accountant runs.
    for (rel, ev) in [
        ("add-remove", "gaussian:sigma=1,wor=10/100"),
        ("replace-one", "gaussian:sigma=1,poisson=0.1"),
    ] {
        let o = run(&format!(
            "account epsilon --delta 1e-5 --neighbouring {rel} --event {ev}"
        ));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        assert!(err.contains("neighbouring relation"), "{err}");
        assert!(!err.contains("no accountant"), "{err}");
    }
}

#[test]
fn printed_sigma_stays_within_the_budget() {
    // A user copies the printed (rounded-up) σ: its ε must still be within the budget.
    for (steps, eps) in [("1000", 1.0_f64), ("7", 0.3), ("100000", 8.0)] {
        let o = run(&format!(
            "account sigma --epsilon {eps} --delta 1e-6 --steps {steps}"
        ));
        assert!(o.status.success(), "{}", show(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        let s = out
            .strip_prefix("σ = ")
            .and_then(|r| r.split(' ').next())
            .unwrap();
        let ev = format!("gaussian:sigma={s},count={steps}");
        let e = epsilon_of("pld", "1e-6", &ev);
        assert!(
            e <= eps && e > 0.999 * eps,
            "printed σ {s}: ε {e} vs budget {eps}"
        );
    }
}

#[test]
fn binomial_curve_event_is_xiong_proposition_4() {
    // SIR setting of Xiong et al. §4.1: n = 1000 trials, m = 1000, L = 10 releases.
    // Exact: L·n·ln(1 + 1/m) = 9.99500333…; the paper's stated bound nL/m = 10.
    let exact = 10.0 * 1000.0 * (1.0_f64 / 1000.0).ln_1p();
    let v = json("epsilon --delta 1e-6 --event binomial:n=1000,m=1000,releases=10");
    let e = v["epsilon"].as_f64().unwrap();
    assert!(e >= exact && e <= exact * (1.0 + 1e-12), "{e} vs {exact}");
    let v = json(
        "epsilon --delta 0 --accountant pure \
            --event binomial:n=1000,m=1000,releases=10,bound=paper",
    );
    let e = v["epsilon"].as_f64().unwrap();
    assert!((10.0..=10.0 * (1.0 + 1e-12)).contains(&e), "{e}");
    // Repetition composes additively under the pure accountant.
    let v =
        json("epsilon --delta 0 --accountant pure --event binomial:n=200,m=50,releases=3,count=4");
    let want = 4.0 * 3.0 * 200.0 * (1.0_f64 / 50.0).ln_1p();
    let e = v["epsilon"].as_f64().unwrap();
    assert!(e >= want && e <= want * (1.0 + 1e-12), "{e} vs {want}");
    // Invalid parameters are one error line, exit 2.
    for bad in [
        "binomial:n=1000,m=0,releases=10",
        "binomial:n=1000,m=-1,releases=10",
        "binomial:n=0,m=10,releases=10",
        "binomial:n=10,m=10,releases=0",
        "binomial:n=10,m=NaN,releases=1",
        "binomial:n=10,m=10,releases=1,bound=tight",
        "binomial:m=10,releases=1",
    ] {
        let o = run(&format!("account epsilon --delta 1e-6 --event {bad}"));
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(err.starts_with("error:"), "{bad}: {err}");
    }
}

/// Issue 13 item 6: `--conversion classic` reports Mironov 2017 Prop. 3 (RDP) and
/// Bun–Steinke 2016 Prop. 1.3 (zCDP) closed forms; the default stays the tightest.
#[test]
fn conversion_flag_selects_the_classic_conversions() {
    let (k, sigma) = (50.0_f64, 3.0_f64);
    let rho = k / (2.0 * sigma * sigma);
    let bs = rho + 2.0 * (rho * (1e6_f64).ln()).sqrt();
    let ev = "gaussian:sigma=3,count=50";
    let z = json(&format!(
        "epsilon --delta 1e-6 --accountant zcdp --conversion classic --event {ev}"
    ));
    let e = z["epsilon"].as_f64().unwrap();
    assert!(e >= bs && e <= bs * (1.0 + 1e-12), "{e} vs {bs}");
    assert_eq!(z["conversion"], "bun_steinke");
    let t = json(&format!(
        "epsilon --delta 1e-6 --accountant zcdp --event {ev}"
    ));
    assert!(t["epsilon"].as_f64().unwrap() < e);
    // RDP: Mironov on the default grid, min_α kα/(2σ²) + ln(1/δ)/(α − 1).
    let r = json(&format!(
        "--conversion classic epsilon --delta 1e-6 --accountant rdp --event {ev}"
    ));
    assert_eq!(r["conversion"], "mironov");
    let want = dpinfer::accountants::DEFAULT_ORDERS
        .iter()
        .map(|&a| k * a / (2.0 * sigma * sigma) + (1e6_f64).ln() / (a - 1.0))
        .fold(f64::INFINITY, f64::min);
    let e = r["epsilon"].as_f64().unwrap();
    assert!(e >= want && e <= want * (1.0 + 1e-12), "{e} vs {want}");
    // Calibration and max steps follow the flag: classic needs more noise, allows fewer steps.
    let s = |c: &str| {
        json(&format!(
            "--conversion {c} sigma --epsilon 1 --delta 1e-5 --steps 1000 --poisson 0.01"
        ))["sigma"]
            .as_f64()
            .unwrap()
    };
    assert!(s("classic") > s("tightest"));
    let b = |c: &str| {
        json(&format!(
            "--conversion {c} max-steps --sampler barker --epsilon 1 --delta 1e-5 --n 100000 \
                --batch 1000"
        ))["max_steps"]
            .as_u64()
            .unwrap()
    };
    assert!(b("classic") < b("tightest"));
}

/// `--accountant`, `--neighbouring` and `--conversion` are the library's names
/// (`AccountantKind`, `Neighbouring`, `ConversionRule` `FromStr`): every spelling the library
/// accepts works and gives the same answer, and a wrong name is refused naming what is
/// accepted.
#[test]
fn names_are_the_librarys() {
    let ask = |rel: &str, acct: &str, conv: &str| {
        json(&format!(
            "--conversion {conv} epsilon --delta 1e-5 --neighbouring {rel} --accountant {acct} \
                --event gaussian:sigma=2,count=10"
        ))
    };
    let v = ask("add-remove", "zcdp", "classic");
    assert_eq!(v["accountant"], "zcdp");
    assert_eq!(v["neighbouring"], "add/remove");
    assert_eq!(v["conversion"], "bun_steinke");
    assert!(v["order"].is_null());
    // Bun–Steinke 2016 Prop. 1.3 for ρ = 10 · 1/(2·4) = 1.25: ε = ρ + 2√(ρ ln 1e5).
    let rho = 1.25_f64;
    let want = rho + 2.0 * (rho * 1e5_f64.ln()).sqrt();
    let e = v["epsilon"].as_f64().unwrap();
    assert!(e >= want && e - want < 1e-9, "{e} vs {want}");
    for rel in ["add/remove", "add_remove"] {
        assert_eq!(
            ask(rel, "zcdp", "classic")["epsilon"],
            v["epsilon"],
            "{rel}"
        );
    }
    let r = ask("replace_one", "rdp", "tightest");
    assert_eq!(r["neighbouring"], "replace-one");
    assert_eq!(r["conversion"], "balle_cks");
    assert!(r["order"].as_f64().unwrap() > 1.0);
    for (opt, bad, accepted) in [
        (
            "--accountant",
            "moments",
            "all, pure, approx, rdp, zcdp, pld",
        ),
        ("--neighbouring", "bounded", "add/remove, replace-one"),
        ("--conversion", "loose", "tightest, classic"),
    ] {
        let o = run(&format!(
            "account epsilon --delta 1e-5 --event gaussian:sigma=1 {opt} {bad}"
        ));
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(bad) && err.contains(accepted), "{opt}: {err}");
    }
    // `--method` is the library's `calibrate::Method`.
    let o = run("account sigma --epsilon 1 --delta 1e-5 --method gdp");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("gdp") && err.contains("zcdp, pld, rdp"),
        "{err}"
    );
}

#[test]
fn a_subsampled_gaussian_with_tiny_sigma_is_never_free() {
    // Issue 26: for σ ≲ 1e-154, 1/σ² overflows and the RDP curve of the Poisson-subsampled
    // Gaussian came out as zeros: ε = 0.019490 (rdp), picked by `--accountant all` as the
    // smallest bound, and composing it with a σ = 1 step gave the σ = 1 step's ε alone. The
    // sampled record is revealed with probability q = 0.5 > δ: no finite ε holds.
    for sigma in ["1e-200", "5e-324", "1e-154"] {
        let ev = format!("gaussian:sigma={sigma},poisson=0.5");
        for extra in [
            "--accountant rdp",
            "--accountant all",
            "",
            "--accountant all --event gaussian:sigma=1",
        ] {
            let args = format!("account --json epsilon --delta 1e-5 --event {ev} {extra}");
            let o = run(&args);
            if o.status.success() {
                // σ = 1e-154: the low orders are finite but astronomically large.
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                let e = v["epsilon"].as_f64().unwrap();
                assert!(e > 1e300, "{args:?}: {}", show(&o));
            } else {
                assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
                assert!(o.stdout.is_empty(), "{args:?}: {}", show(&o));
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    err.contains("every RDP order is infinite"),
                    "{args:?}: {err}"
                );
            }
        }
    }
}

#[test]
fn randomized_response_is_accounted_under_replace_one() {
    // k-ary randomized response, p = 0.5, k = 2: ε = ln 3 per release (exact), so the pure
    // accountant gives 10·ln 3 for 10 releases; the numerical PLD at δ = 1e-5 is tighter,
    // and above the exact ε(δ) of the composed pair (10.98594529364605, enumeration in the
    // accountants' tests/data/randomized_response.txt).
    let pure = json(
        "epsilon --delta 0 --neighbouring replace-one --accountant pure \
            --event rr:p=0.5,k=2,count=10",
    )["epsilon"]
        .as_f64()
        .unwrap();
    let ln3 = 3f64.ln();
    assert!(
        pure >= 10.0 * ln3 && pure < 10.0 * ln3 * (1.0 + 1e-12),
        "{pure}"
    );
    let v = json("epsilon --delta 1e-5 --neighbouring replace-one --event rr:p=0.5,k=2,count=10");
    let e = v["epsilon"].as_f64().unwrap();
    assert_eq!(v["accountant"], "pld", "{v}");
    assert!((10.98594529364605..=pure).contains(&e), "{e}");
    // Under add/remove it is refused, naming the relation.
    let o = run("account epsilon --delta 1e-5 --event rr:p=0.5,k=2");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(err.contains("neighbouring relation"), "{err}");
}

#[test]
fn exponential_mechanism_composes_as_bounded_range() {
    // 100 exponential mechanisms at ε = 0.1: zCDP ρ = 100 · 0.1²/8 = 0.125, against
    // ρ = 0.5 for 100 generic 0.1-DP releases; the best answer at δ = 1e-6 is below both
    // the pure bound (10) and what the same count of `pure:eps=0.1` gets.
    let zcdp_eps = |ev: &str| epsilon_of("zcdp", "1e-6", ev);
    let e_em = zcdp_eps("em:eps=0.1,count=100");
    let e_pure = zcdp_eps("pure:eps=0.1,count=100");
    // Within Bun–Steinke's ε = ρ + 2√(ρ ln(1/δ)) at ρ = 0.125 (the default conversion is tighter).
    let bs = |r: f64| r + 2.0 * (r * 1e6_f64.ln()).sqrt();
    assert!(e_em > 0.125 && e_em <= bs(0.125), "{e_em}");
    assert!(e_pure > 1.9 * e_em, "{e_pure} vs {e_em}");
    let v = json("epsilon --delta 1e-6 --event em:eps=0.1,count=100");
    assert!(v["epsilon"].as_f64().unwrap() <= e_em, "{v}");
}

#[test]
fn tree_aggregation_is_the_gaussian_with_sensitivity_root_depth() {
    // One DP-FTRL epoch over 1000 steps: a leaf is in ⌈log₂ 1001⌉ = 10 nodes, so 7 epochs of
    // σ = 3, Δ = 0.5 per node cost what 7 Gaussians with Δ = 0.5·√10 cost (exact PLD).
    let eps = |ev: &str| epsilon_of("pld", "1e-6", ev);
    let d = 0.5 * 10f64.sqrt();
    let a = eps("tree:sigma=3,steps=1000,sens=0.5,count=7");
    let b = eps(&format!("gaussian:sigma=3,sens={d},count=7"));
    assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
}

#[test]
fn mixture_of_gaussians_is_accounted_by_the_numerical_pld() {
    // c = (0, 1), p = (0.9, 0.1) is the Poisson-subsampled Gaussian: the mixture's own
    // discretisation and the subsampled Gaussian's agree to 1e-3; RDP refuses the mixture.
    let eps = |ev: &str| epsilon_of("pld", "1e-5", ev);
    let a = eps("mog:sigma=2,c=0|1,p=0.9|0.1,count=20");
    let b = eps("gaussian:sigma=2,poisson=0.1,count=20");
    assert!((a / b - 1.0).abs() <= 1e-3, "{a} vs {b}");
    let out =
        run("account epsilon --delta 1e-5 --accountant rdp --event mog:sigma=2,c=0|1,p=0.9|0.1");
    assert!(!out.status.success(), "{}", show(&out));
}

/// The truncated Poisson-subsampled Gaussian (`truncated:`): dp_accounting 0.6.0's PLD gives
/// ε = 4.103086691141231 at δ = 1e-5 for 1000 steps of n = 10000, q = 0.01, B = 120, σ = 1.1
/// (the accountants crate's tests/data/truncated_gaussian.txt); ours within 0.5 %, above the
/// untruncated Poisson-subsampled Gaussian's; RDP refuses it.
#[test]
fn truncated_subsampled_gaussian_is_accounted_by_the_numerical_pld() {
    let v = json(
        "epsilon --delta 1e-5 --event truncated:sigma=1.1,q=0.01,batch=120,n=10000,count=1000",
    );
    assert_eq!(v["accountant"], "pld", "{v}");
    let e = v["epsilon"].as_f64().unwrap();
    assert!(
        (4.103086691141231 * 0.995..=4.103086691141231 * 1.005).contains(&e),
        "{e}"
    );
    let plain = json(
        "epsilon --delta 1e-5 --accountant pld --event gaussian:sigma=1.1,poisson=0.01,count=1000",
    )["epsilon"]
        .as_f64()
        .unwrap();
    assert!(e > plain, "{e} vs {plain}");
    let out = run("account epsilon --delta 1e-5 --accountant rdp \
        --event truncated:sigma=1.1,q=0.01,batch=120,n=10000");
    assert!(!out.status.success(), "{}", show(&out));
}

/// Issue 30's other new events through `dpinfer account`: sampling with replacement
/// (`wr=`, replace-one, numerical PLD: one draw is sampling one row without replacement),
/// repeat-and-select (`select=`, RDP: between one run and ten composed runs) and random
/// allocation (`alloc:`, RDP: below the 1000 Gaussian steps it hides in); the accountants
/// that cannot express them fail.
#[test]
fn with_replacement_repeat_and_select_and_random_allocation() {
    let eps = |args: &str| {
        json(&format!("epsilon --delta 1e-5 {args}"))["epsilon"]
            .as_f64()
            .unwrap()
    };
    let wr = eps(
        "--neighbouring replace-one --accountant pld --event gaussian:sigma=2,wr=1/200,count=100",
    );
    let wor = eps(
        "--neighbouring replace-one --accountant pld --event gaussian:sigma=2,wor=1/200,count=100",
    );
    assert!((wr / wor - 1.0).abs() <= 1e-8, "{wr} vs {wor}");
    let one = eps("--accountant rdp --event gaussian:sigma=1.1,poisson=0.01,count=1000");
    let tuned =
        eps("--accountant rdp --event gaussian:sigma=1.1,poisson=0.01,count=1000,select=10");
    assert!(one < tuned, "{one} vs {tuned}");
    let alloc = eps("--accountant rdp --event alloc:sigma=1.1,steps=1000");
    let all = eps("--accountant rdp --event gaussian:sigma=1.1,count=1000");
    assert!(alloc < all, "{alloc} vs {all}");
    for (relation, ev) in [
        ("add-remove", "gaussian:sigma=2,wr=1/200"),
        ("add-remove", "alloc:sigma=1.1,steps=1000,k=2"),
    ] {
        let out = run(&format!(
            "account epsilon --delta 1e-5 --neighbouring {relation} --accountant rdp --event {ev}"
        ));
        assert!(!out.status.success(), "{ev}: {}", show(&out));
    }
}

/// Issue 30: the numerical PLD answers the small-q, small-σ regime (before, "pld composition
/// window too large (increase the discretisation interval)", and `--accountant all` fell back
/// to RDP), within 0.5 % of dp_accounting 0.6.0's PLD (1.1752897, the accountants crate's
/// tests/data/pld_regimes.txt); `--pld-interval` asks for a finer grid (never looser here) and
/// is checked.
#[test]
fn pld_answers_small_q_small_sigma_and_takes_a_finer_grid() {
    let ev = "gaussian:sigma=0.5,poisson=0.0001,count=10000";
    let v = json(&format!("epsilon --delta 1e-5 --event {ev}"));
    assert_eq!(v["accountant"], "pld", "{v}");
    assert_eq!(v["conversion"], "numerical_pld");
    let e = v["epsilon"].as_f64().unwrap();
    assert!((1.1752897..=1.1752897 * 1.005).contains(&e), "{e}");
    let rdp = v["all"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["accountant"] == "rdp")
        .unwrap()["epsilon"]
        .as_f64()
        .unwrap();
    assert!(e < rdp, "pld {e} vs rdp {rdp}");
    let fine = json(&format!(
        "epsilon --delta 1e-5 --accountant pld --pld-interval 5e-5 --event {ev}"
    ));
    let ef = fine["epsilon"].as_f64().unwrap();
    assert!(ef <= e && ef > 0.99 * e, "finer grid {ef} vs {e}");
    let o = run(&format!(
        "account epsilon --delta 1e-5 --pld-interval 0 --event {ev}"
    ));
    assert!(!o.status.success());
    assert!(show(&o).contains("pld-interval"), "{}", show(&o));
}
