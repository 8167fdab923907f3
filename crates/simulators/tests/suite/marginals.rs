#![cfg(feature = "alloc")] // the registry and the declared prior need alloc
//! `Prior::marginal_ln_density` (issue 32: plots draw the prior's exact marginal density, not
//! a KDE of its draws): every prior of this crate against an independent value — a closed form
//! evaluated by hand, or the joint density integrated numerically over the other coordinates —
//! and every marginal integrates to one by quadrature; bad coordinates and arguments are
//! `None` / −∞, never a panic or a NaN.

use dpinfer_simulators::Prior;
use dpinfer_simulators::models::banana::{Banana, BananaSettings};
use dpinfer_simulators::models::registry::{Model, ModelName, ModelPrior, ModelSpec};
use dpinfer_simulators::prior::{
    Beta, DeclaredPrior, Dirichlet, Exponential, Gamma, IidNormal, LogNormal, Marginal, Normal,
    Product, TruncatedNormal, Uniform,
};

/// Composite Simpson rule of `f` over `[a, b]` with `m` (even) panels.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, m: usize) -> f64 {
    let h = (b - a) / m as f64;
    let mut s = f(a) + f(b);
    for i in 1..m {
        s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0
}

fn dens(p: &impl Prior, j: usize, x: f64) -> f64 {
    p.marginal_ln_density(j, x).unwrap().exp()
}

/// The bad-argument contract shared by every prior: a coordinate past `dim` is `None`, NaN
/// and ±∞ are `Some(−∞)`.
fn refuses_bad_arguments(p: &impl Prior) {
    assert_eq!(p.marginal_ln_density(p.dim(), 0.5), None);
    assert_eq!(p.marginal_ln_density(usize::MAX, 0.5), None);
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for j in 0..p.dim() {
            if let Some(l) = p.marginal_ln_density(j, x) {
                assert_eq!(l, f64::NEG_INFINITY, "coordinate {j} at {x}");
            }
        }
    }
}

/// Dirichlet(1, 1, 1): each coordinate is Beta(1, 2), density 2(1 − x) on [0, 1] — 2 at the
/// bound 0, where a KDE of draws is biased; Dirichlet(1) over five components (the ABCDP
/// toy): 4(1 − x)³, 4 at 0.
#[test]
fn dirichlet_marginals_are_beta_by_hand() {
    let d = Dirichlet::new(3, 1.0).unwrap();
    for j in 0..3 {
        assert!((dens(&d, j, 0.0) - 2.0).abs() < 1e-14);
        for x in [1e-300, 0.1, 0.25, 0.5, 0.9, 1.0 - 1e-12] {
            let want = 2.0 * (1.0 - x);
            assert!(
                (dens(&d, j, x) - want).abs() < 1e-13 * want.max(1e-300),
                "{x}"
            );
        }
        assert_eq!(dens(&d, j, 1.0), 0.0);
        assert_eq!(d.marginal_ln_density(j, -1e-12), Some(f64::NEG_INFINITY));
        assert_eq!(
            d.marginal_ln_density(j, 1.0 + 1e-12),
            Some(f64::NEG_INFINITY)
        );
    }
    let toy = Dirichlet::new(5, 1.0).unwrap();
    assert!((dens(&toy, 0, 0.0) - 4.0).abs() < 1e-14);
    assert!((dens(&toy, 4, 0.5) - 4.0 * 0.125).abs() < 1e-14);
    // Beta(1, 1) (k = 2): flat, 1 at both bounds (no 0 · ln 0 = NaN).
    let two = Dirichlet::new(2, 1.0).unwrap();
    for x in [0.0, 0.3, 1.0] {
        assert_eq!(dens(&two, 1, x), 1.0);
    }
    // α < 1: the joint excludes the bounds, and so does the marginal.
    let sparse = Dirichlet::new(4, 0.5).unwrap();
    assert_eq!(sparse.marginal_ln_density(0, 0.0), Some(f64::NEG_INFINITY));
    assert_eq!(sparse.marginal_ln_density(0, 1.0), Some(f64::NEG_INFINITY));
    let beta = Beta::new(0.5, 1.5).unwrap();
    for x in [1e-9, 0.2, 0.7, 0.999] {
        let (got, want) = (
            sparse.marginal_ln_density(2, x).unwrap(),
            beta.ln_density(&[x]),
        );
        assert!((got - want).abs() < 1e-12, "{x}: {got} vs {want}");
    }
    for p in [d, toy, two, sparse] {
        refuses_bad_arguments(&p);
    }
}

/// Dirichlet(2.5, 2.5, 2.5): the marginal of θ₁ at x equals the joint density (w.r.t. the
/// first two coordinates) integrated over θ₂ ∈ [0, 1 − x], and integrates to one.
#[test]
fn dirichlet_marginal_is_the_integrated_joint() {
    let d = Dirichlet::new(3, 2.5).unwrap();
    for x in [0.05, 0.2, 0.5, 0.8, 0.97] {
        let joint = |t: f64| {
            let th = [x, t, (1.0 - x - t).max(0.0)];
            let l = d.ln_density(&th);
            if l.is_finite() { l.exp() } else { 0.0 }
        };
        let want = simpson(joint, 0.0, 1.0 - x, 4000);
        let got = dens(&d, 0, x);
        assert!((got - want).abs() < 1e-7 * want, "{x}: {got} vs {want}");
    }
    let total = simpson(|x| dens(&d, 1, x), 0.0, 1.0, 4000);
    assert!((total - 1.0).abs() < 1e-9, "{total}");
}

/// The scalar priors: coordinate 0 is the prior's own density, and integrates to one.
#[test]
fn scalar_priors_are_their_own_marginal() {
    fn check(p: &impl Prior, xs: &[f64], (a, b): (f64, f64)) {
        for &x in xs {
            assert_eq!(p.marginal_ln_density(0, x), Some(p.ln_density(&[x])), "{x}");
        }
        let total = simpson(|x| dens(p, 0, x), a, b, 200_000);
        assert!((total - 1.0).abs() < 1e-6, "{total}");
        refuses_bad_arguments(p);
    }
    let xs = [-3.0, -0.5, 0.0, 0.2, 0.5, 1.0, 2.5, 40.0];
    check(&Normal::new(0.5, 0.8).unwrap(), &xs, (-9.0, 10.0));
    check(&LogNormal::new(-0.3, 0.4).unwrap(), &xs, (0.0, 12.0));
    check(&Uniform::new(-1.0, 2.0).unwrap(), &xs, (-1.0, 2.0));
    check(
        &TruncatedNormal::new(0.0, 1.0, 0.0, 3.0).unwrap(),
        &xs,
        (0.0, 3.0),
    );
    check(&Gamma::new(2.0, 1.5).unwrap(), &xs, (0.0, 40.0));
    check(&Beta::new(2.0, 3.0).unwrap(), &xs, (0.0, 1.0));
    check(&Exponential::new(2.0).unwrap(), &xs, (0.0, 40.0));
    // The uniform by hand: 1/3 inside, bounds included, 0 outside.
    let u = Uniform::new(-1.0, 2.0).unwrap();
    for x in [-1.0, 0.0, 2.0] {
        assert!((dens(&u, 0, x) - 1.0 / 3.0).abs() < 1e-15);
    }
    assert_eq!(
        u.marginal_ln_density(0, 2.0 + 1e-12),
        Some(f64::NEG_INFINITY)
    );
}

/// Products and declared priors route coordinate j to the block holding it; i.i.d. normals
/// give every coordinate the one normal.
#[test]
fn products_and_declared_priors_route_each_coordinate() {
    let iid = IidNormal::new(3, 1.0, 2.0).unwrap();
    let n = Normal::new(1.0, 2.0).unwrap();
    for j in 0..3 {
        assert_eq!(iid.marginal_ln_density(j, 0.3), Some(n.ln_density(&[0.3])));
    }
    refuses_bad_arguments(&iid);
    let (a, b) = (
        LogNormal::new(0.4f64.ln(), 0.5f64.sqrt()).unwrap(),
        LogNormal::new(0.125f64.ln(), 0.2f64.sqrt()).unwrap(),
    );
    let p = Product::new(a, b);
    assert_eq!(p.marginal_ln_density(0, 0.3), Some(a.ln_density(&[0.3])));
    assert_eq!(p.marginal_ln_density(1, 0.3), Some(b.ln_density(&[0.3])));
    refuses_bad_arguments(&p);
    let u = Uniform::new(0.0, 5.0).unwrap();
    let decl = DeclaredPrior::new(vec![
        Marginal::Uniform(u),
        Marginal::Dirichlet(Dirichlet::new(3, 1.0).unwrap()),
        Marginal::Normal(n),
    ])
    .unwrap();
    assert_eq!(decl.dim(), 5);
    assert_eq!(decl.marginal_ln_density(0, 4.0), Some(-(5f64.ln())));
    for j in 1..4 {
        assert!((dens(&decl, j, 0.0) - 2.0).abs() < 1e-14);
        assert!((dens(&decl, j, 0.75) - 0.5).abs() < 1e-14);
    }
    assert_eq!(decl.marginal_ln_density(4, 0.3), Some(n.ln_density(&[0.3])));
    refuses_bad_arguments(&decl);
}

/// The banana prior: θ₁ and θ₃… are N(0, σ₀²); the curved θ₂'s quadrature equals the joint
/// density integrated over θ₁ by a plain Simpson rule on a fine grid, and integrates to one —
/// also in the thesis setting (a = 20, σ₀² = 1000), whose θ₂ reaches −2·10⁶.
#[test]
fn banana_marginals_match_the_integrated_joint() {
    let s = BananaSettings {
        dim: 3,
        a: 1.0,
        b: 0.5,
        m: 0.3,
        sigma0_sq: 1.0,
        ..BananaSettings::thesis_2d()
    };
    let p = Banana::new(s).unwrap().prior();
    let n = Normal::new(0.0, 1.0).unwrap();
    assert_eq!(p.marginal_ln_density(0, 0.7), Some(n.ln_density(&[0.7])));
    assert_eq!(p.marginal_ln_density(2, -0.7), Some(n.ln_density(&[-0.7])));
    for y in [-30.0, -8.0, -3.0, -1.0, -0.4, 0.0, 1.0, 3.0] {
        // ∫ p(θ₁, y, θ₃) dθ₁ at θ₃ = 0, divided by the N(0, 1) density of θ₃ there.
        let joint = |t: f64| p.ln_density(&[t, y, 0.0]).exp() / n.ln_density(&[0.0]).exp();
        let want = simpson(joint, -12.0, 12.0, 20_000);
        let got = dens(&p, 1, y);
        assert!(
            (got - want).abs() < 1e-12 + 1e-9 * want,
            "{y}: {got} vs {want}"
        );
    }
    let total = simpson(|y| dens(&p, 1, y), -200.0, 8.0, 8_000);
    assert!((total - 1.0).abs() < 1e-8, "{total}");
    refuses_bad_arguments(&p);
    // The thesis setting: a narrow ridge; split the range where the density changes scale.
    let thesis = Banana::new(BananaSettings::thesis_2d()).unwrap().prior();
    let f = |y: f64| dens(&thesis, 1, y);
    let near = simpson(f, -400.0, 400.0, 4000);
    // Left tail in s = ln(−y): ∫ p(y) dy = ∫ p(−eˢ) eˢ ds.
    let tail = simpson(
        |s: f64| f(-s.exp()) * s.exp(),
        400f64.ln(),
        3.0e6f64.ln(),
        4000,
    );
    assert!((near + tail - 1.0).abs() < 1e-6, "{near} + {tail}");
}

/// Through the registry: the ABCDP toy's Dirichlet(1) over five weights is 4 at 0; the
/// tuberculosis prior has only its burden β in closed form (the truncation's normaliser of
/// the others is unknown).
#[test]
fn registry_models_forward_their_marginals() {
    let toy: Model = Model::builtin(&ModelSpec::new(ModelName::UniformMixture)).unwrap();
    let p = ModelPrior(&toy);
    for j in 0..5 {
        assert!((dens(&p, j, 0.0) - 4.0).abs() < 1e-14);
    }
    refuses_bad_arguments(&p);
    let tb: Model = Model::builtin(&ModelSpec::new(ModelName::Tuberculosis)).unwrap();
    let p = ModelPrior(&tb);
    for j in 0..3 {
        assert_eq!(p.marginal_ln_density(j, 1.0), None);
    }
    let beta = Normal::new(200.0, 30f64.sqrt()).unwrap();
    assert_eq!(
        p.marginal_ln_density(3, 195.0),
        Some(beta.ln_density(&[195.0]))
    );
    for name in ModelName::ALL {
        let m: Model = Model::builtin(&ModelSpec::new(name)).unwrap();
        let p = ModelPrior(&m);
        refuses_bad_arguments(&p);
        if name != ModelName::Tuberculosis {
            for j in 0..p.dim() {
                let l = p.marginal_ln_density(j, 0.5);
                assert!(l.is_some_and(|l| !l.is_nan()), "{name} {j}");
            }
        }
    }
}
