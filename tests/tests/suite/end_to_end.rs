//! Cross-crate end-to-end tests: a private pass of one crate, its privacy claim recomputed by
//! another crate's independent path (closed forms, a second accountant, a stored claim read
//! back), and the papers' own numbers with stated tolerances.
//!
//! Every run is seeded (noise included: the fixed ChaCha20 seed stands in for the secret
//! one), so a failure is a regression, never bad luck.

use chacha20::ChaCha20Rng;
use dpinfer::abc::analysis::Resample;
use dpinfer::abc::pairs::PublicPairs;
use dpinfer::abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer::accountants::{
    AccountantKind, Claim, ConversionRule, Event, EventBuf, Neighbouring, PldAccountant,
};
use dpinfer::distances::{
    ClippedWeightedL2, DistanceError, MmdReference, Relations, Rows, Sensitivity,
};
use dpinfer::mechanisms::{BinomialBound, BinomialCurve, Gaussian, RegressionStats};
use dpinfer::simulators::{FnSimulator, prior::Normal};
use rand_core::SeedableRng;

const RO: Neighbouring = Neighbouring::ReplaceOne;
const AR: Neighbouring = Neighbouring::AddRemove;

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// The private data set: `n` rows from N(0.7, 1), drawn from a seeded stream.
fn private_rows(n: usize) -> Vec<f64> {
    let mut rng = ChaCha20Rng::seed_from_u64(2024);
    (0..n)
        .map(|_| 0.7 + dpinfer::simulators::dist::std_normal(&mut rng))
        .collect()
}

/// SVT-ABC (ABCDP, Park–Vinaroz–Jitkrittum 2021) end to end: the distance's sensitivity
/// comes from the distances crate *for the claimed relation*, the pass runs on the
/// mechanisms crate's sparse vector, and its ledger event is recomputed three ways — the
/// closed form of Theorem 1, a fresh pure accountant (`Claim::account`), and a claim read
/// back from JSON — all within rounding of each other and within the calibration target.
#[test]
fn svt_abc_claim_is_recomputed_by_independent_paths() {
    let obs = private_rows(500);
    let n = obs.len();
    let clip = 3.0;
    let weights = [1.0];
    let distance = ClippedWeightedL2::new(&weights, clip).unwrap();
    // ρ(s) = (1/n) Σ_i min(|y_i − s|, C): record i moves term i only, so Δ = C/n under
    // replace-one *and* add/remove.
    let sens = distance.mean_sensitivity(n).unwrap();
    let delta_ro = sens.value_for(RO).unwrap();
    assert_eq!(sens.value_for(AR), Ok(delta_ro));
    assert!(delta_ro >= clip / n as f64 && rel(delta_ro, clip / n as f64) < 1e-15);
    // The MMD bound is proved for replace-one only; asking for add/remove is refused.
    let mmd = MmdReference::new(
        dpinfer::distances::Gaussian::new(1.0).unwrap(),
        Rows::one_dim(&obs).unwrap(),
    )
    .unwrap();
    assert_eq!(
        mmd.sensitivity().value_for(AR),
        Err(DistanceError::IncompatibleRelation { relation: AR })
    );

    // The modeler's public pairs: θ ~ N(0, 1), summary s = θ (the location of the rows).
    let prior = Normal::new(0.0, 1.0).unwrap();
    let sim = FnSimulator::new(1, 1, |th: &[f64], _rng, out: &mut [f64]| {
        out[0] = th[0];
        Ok(())
    })
    .unwrap();
    let pairs = PublicPairs::generate(&prior, &sim, 4000, 11).unwrap();
    let obs_rows = Rows::one_dim(&obs).unwrap();
    let rho = |y: &[f64]| {
        distance
            .mean_distance(obs_rows, Rows::one_dim(y).unwrap())
            .unwrap_or(clip)
    };
    let (c, epsilon_total) = (10, 5.0);
    let settings = SvtAbcSettings {
        epsilon_abc: 0.85,
        epsilon_total,
        c,
        sensitivity: Sensitivity::declared(delta_ro, Relations::REPLACE_ONE).unwrap(),
        clip,
        resample: Resample::Never,
    };
    let mut pass = SvtAbc::new(&pairs, rho, settings).unwrap();
    pass.run(&mut ChaCha20Rng::seed_from_u64(99)).unwrap();
    assert!(!pass.accepted_thetas().is_empty());

    let event = pass.event();
    let Event::SparseVector {
        c: ev_c,
        scale,
        sensitivity,
        resample,
    } = event
    else {
        panic!("SVT-ABC must report a sparse-vector event, got {event:?}")
    };
    assert_eq!((ev_c, resample), (c, false));
    assert_eq!(scale, pass.noise_scale());
    assert!(sensitivity >= delta_ro, "grid rounding may only raise Δ");
    // Theorem 1 (no threshold resampling): ε = (c + 1)Δ/b, computed here independently.
    let closed_form = (c as f64 + 1.0) * sensitivity / scale;

    for relation in [RO, AR] {
        let claim = Claim::account(
            relation,
            AccountantKind::Pure,
            ConversionRule::Tightest,
            vec![(EventBuf::from(&event), 1)],
            0.0,
        )
        .unwrap();
        // The accountant evaluates (c+1)Δ′/b with exact upward rounding: equal to the closed
        // form up to its own rounding to nearest (two ulps), and to the sampler's own
        // (slightly looser) grid-arithmetic bound up to 1e-13 relative.
        assert!(claim.epsilon() >= closed_form * (1.0 - 1e-15));
        assert!(rel(claim.epsilon(), closed_form) < 1e-13);
        assert!(rel(claim.epsilon(), pass.epsilon()) < 1e-13);
        // Within the calibration target — exactly, no rounding margin on top (the mechanism
        // calibrates b against its exact rational ε) — and not wastefully below it.
        assert!(pass.epsilon() <= epsilon_total);
        assert!(claim.epsilon() <= epsilon_total, "{}", claim.epsilon());
        assert!(
            claim.epsilon() > 0.95 * epsilon_total,
            "{}",
            claim.epsilon()
        );
        assert!(
            claim
                .to_string()
                .contains(&format!("under the {relation} neighbouring relation")),
            "{claim}"
        );

        // Stored and read back, the claim recomputes to itself bit for bit.
        let text = serde_json::to_string(&claim).unwrap();
        let back: Claim = serde_json::from_str(&text).unwrap();
        assert_eq!(back, claim);
        let again = back.recompute().unwrap();
        assert_eq!(again.epsilon().to_bits(), claim.epsilon().to_bits());
    }
}

/// Xiong, Ju & Zhang, Proposition 4 and §4: the binomial infection curve with `L = 10`
/// releases, `n = 1000` trials and pseudo-count `m = 1000` is ε = nL/m = 10-DP; `m = 10⁴`
/// and `10⁵` give ε = 1 and 0.1 (Appendix E.1.1); the real-outbreak setting `M = N = 100`,
/// `L = 10` gives ε = 10 (Appendix E.1.2). The mechanisms crate's event, composed by the
/// accountants, reproduces each number within 1e-13 relative (the paper bound; the accountant rounds up
/// three times by 2⁻⁴⁶ relative), and the
/// exact bound `L·n·ln(1 + 1/m)` (within 1e-13 of the value computed here) never exceeds it.
#[test]
fn binomial_curve_reproduces_the_papers_epsilons() {
    for (n, m, releases, paper) in [
        (1000, 1000, 10, 10.0),
        (1000, 10_000, 10, 1.0),
        (1000, 100_000, 10, 0.1),
        (100, 100, 10, 10.0),
    ] {
        let mech = BinomialCurve::new(n, m, 1_000_000).unwrap();
        assert_eq!(mech.relation(), RO);
        let claim = |bound| {
            let ev = mech.with_bound(bound).event(releases);
            Claim::account(
                RO,
                AccountantKind::Pure,
                ConversionRule::Tightest,
                vec![(EventBuf::from(&ev), 1)],
                0.0,
            )
            .unwrap()
        };
        let stated = claim(BinomialBound::Paper);
        assert!(
            stated.epsilon() >= paper && rel(stated.epsilon(), paper) < 1e-13,
            "{} vs {paper}",
            stated.epsilon()
        );
        let exact = claim(BinomialBound::Exact);
        let independent = releases as f64 * n as f64 * (1.0 / m as f64).ln_1p();
        assert!(exact.epsilon() >= independent && rel(exact.epsilon(), independent) < 1e-13);
        assert!(exact.epsilon() < stated.epsilon());
        assert!(mech.epsilon_exact(releases) <= stated.epsilon());
    }
}

/// Xiong, Ju & Zhang §4 (linear regression): the refined ℓ₁ sensitivity of the clamped
/// sufficient statistics is `(p² + 3p + 3)/n`, 0.13 for `p = 2`, `n = 100`; the released
/// statistics at ε = 10 claim at most 10 and, after the exact grid calibration, not less
/// than 99 % of it.
#[test]
fn regression_statistics_match_the_paper() {
    let x_bounds = [(-1.0, 1.0), (-1.0, 1.0)];
    for (epsilon, n) in [(10.0, 100), (1.0, 100), (0.1, 100), (10.0, 1000)] {
        let stats = RegressionStats::new(&x_bounds, (-1.0, 1.0), n, epsilon).unwrap();
        let paper = 13.0 / n as f64;
        assert!(
            stats.paper_sensitivity() >= paper && rel(stats.paper_sensitivity(), paper) < 1e-15
        );
        let claim = Claim::account(
            stats.relation(),
            AccountantKind::Pure,
            ConversionRule::Tightest,
            vec![(EventBuf::from(&stats.event()), 1)],
            0.0,
        )
        .unwrap();
        assert!(claim.epsilon() <= epsilon * (1.0 + 1e-13), "{claim}");
        assert!(claim.epsilon() >= 0.99 * epsilon, "{claim}");
    }
}

/// A Gaussian release of the mechanisms crate (a discrete Gaussian on a grid, whose
/// guarantee is stated as ρ-zCDP), accounted by every accountant: zCDP (continuous-order
/// conversion) is at most the RDP grid's ε (RDP of the event *is* αρ, so only the order grid
/// differs), within 15 %; pure, approximate DP and the PLD refuse a zCDP event. At σ = Δ = 1
/// the exact Gaussian PLD reproduces the Balle–Wang profile δ(1) = 0.12693673750664397
/// (50-digit mpmath value) within 1e-9 in ε.
#[test]
fn gaussian_release_is_ordered_across_accountants() {
    let mech = Gaussian::new(4.0, 1.0, -100.0, 100.0).unwrap();
    let event = mech.event();
    let Event::Zcdp { rho } = event else {
        panic!("the discrete Gaussian reports zCDP, got {event:?}")
    };
    assert!(rho >= 1.0 / 32.0, "ρ ≥ Δ²/(2σ²)");
    let ev = EventBuf::from(&event);
    let claim = |kind| {
        Claim::account(
            AR,
            kind,
            ConversionRule::Tightest,
            vec![(ev.clone(), 50)],
            1e-6,
        )
    };
    let zcdp = claim(AccountantKind::Zcdp).unwrap().epsilon();
    let rdp = claim(AccountantKind::Rdp).unwrap().epsilon();
    assert!(zcdp <= rdp && rdp < 1.15 * zcdp, "{zcdp} {rdp}");
    for kind in [
        AccountantKind::Pure,
        AccountantKind::Approx,
        AccountantKind::Pld,
    ] {
        assert!(claim(kind).is_err(), "{kind}");
    }
    // Bun–Steinke (classic) is never below the tightest conversion.
    let classic = Claim::account(
        AR,
        AccountantKind::Zcdp,
        ConversionRule::Classic,
        vec![(ev.clone(), 50)],
        1e-6,
    )
    .unwrap()
    .epsilon();
    assert!(classic >= zcdp);
    let bun_steinke = 50.0 * rho + 2.0 * (50.0 * rho * (1e6f64).ln()).sqrt();
    assert!(classic >= bun_steinke && rel(classic, bun_steinke) < 1e-12);

    let unit = Event::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    let c = Claim::account(
        AR,
        AccountantKind::Pld,
        ConversionRule::Tightest,
        vec![(EventBuf::from(&unit), 1)],
        0.126_936_737_506_643_97,
    )
    .unwrap();
    assert!((c.epsilon() - 1.0).abs() < 1e-9, "{}", c.epsilon());
    // The same through the accountant directly (no claim in between).
    let mut acc = PldAccountant::new(AR);
    dpinfer::accountants::Accountant::compose(&mut acc, &unit).unwrap();
    let d = dpinfer::accountants::Accountant::delta(&acc, 1.0)
        .unwrap()
        .delta;
    assert!(rel(d, 0.126_936_737_506_643_97) < 1e-12);
}

/// DP penalty (Räisä 2021 §3.1, Theorems 6–7; Yildirim & Ermiş 2019) end to end: the chain
/// runs the largest number of iterations `k` its (ε, δ) budget allows under the exact
/// Gaussian PLD, and the claim recomputed independently — `k` Gaussian releases with
/// noise-to-sensitivity ratio `τ√n` (the per-step log-ratio's sensitivity 2L‖θ′−θ‖ cancels)
/// composed by a fresh PLD accountant — meets the target, while `k + 1` would not.
#[test]
fn dp_penalty_claim_matches_the_calibration_target() {
    use dpinfer::mcmc::budget::Accounting;
    use dpinfer::mcmc::model::{GaussianMean, GaussianPrior};
    use dpinfer::mcmc::{MarkovChain, Penalty, PenaltyPrivacy, PenaltySettings, Proposal, Trace};

    let rows = private_rows(200);
    let n = rows.len() as f64;
    let lik = GaussianMean::new(1, &rows, 1.0).unwrap();
    let prior = GaussianPrior::new(1, 0.0, 10.0).unwrap();
    let settings = PenaltySettings {
        proposal: Proposal::GuidedRandomWalk { scale: vec![0.05] },
        temperature: 1.0,
    };
    let (tau, epsilon, delta) = (0.5, 2.0, 1e-6);
    let privacy = PenaltyPrivacy {
        clip: 5.0,
        tau,
        n_exponent: 0.5,
        epsilon,
        delta,
        accounting: Accounting::Pld,
    };
    let noise = ChaCha20Rng::seed_from_u64(1);
    let mut chain = Penalty::private(prior, lik, settings, privacy, &[0.0], noise).unwrap();
    let k = chain.max_iterations().unwrap();
    assert!(k >= 5, "{k}");
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let mut trace = Trace::with_burn_in(k / 2);
    chain.run(k, &mut rng, &mut trace).unwrap();
    let (spent, spent_delta) = chain.epsilon_spent().unwrap().unwrap();
    assert!(spent <= epsilon && spent_delta == delta);
    assert!(
        chain.step(&mut rng).is_err(),
        "the chain refuses step k + 1"
    );

    let step = EventBuf::Gaussian {
        sigma: tau * n.sqrt(),
        sensitivity: 1.0,
    };
    let claim = |steps| {
        Claim::account(
            RO,
            AccountantKind::Pld,
            ConversionRule::Tightest,
            vec![(step.clone(), steps)],
            delta,
        )
        .unwrap()
    };
    let at_k = claim(k);
    assert!(at_k.epsilon() <= epsilon, "{at_k}");
    assert!(claim(k + 1).epsilon() > epsilon);
    // The sampler's own figure is the same composition. It rounds up less often than the
    // accountant (which rounds μ up per event, per count and per sum), so it may sit a few
    // 1e-14 below the claim — both are upper bounds of the exact ε.
    assert!(rel(spent, at_k.epsilon()) < 1e-12, "{spent} {at_k}");
}
