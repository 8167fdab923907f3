//! A mechanism calibrated to a budget is claimed within that budget by the accountant that
//! recomputes its cost: the sparse-vector session of `SparseVector::from_epsilon(ε)` composes
//! to at most ε in the pure-ε accountant (its cost `kΔ′/b` rounded up exactly, not by a
//! margin — with a margin, SVT at ε = 1 was claimed as 1 + 4.3e-14 and printed above budget).

use dpinfer_accountants::curves::sparse_vector_epsilon;
use dpinfer_accountants::{Accountant, Neighbouring, PureAccountant};
use dpinfer_mechanisms::{SparseVector, SparseVectorSettings};

#[test]
fn calibrated_sparse_vector_sessions_are_claimed_within_their_budget() {
    let mut checked = 0;
    for &c in &[0_u64, 1, 2, 3, 5, 10, 20, 50, 100, 1000] {
        for resample in [false, true] {
            for &delta in &[2.0 / 5000.0, 1e-3, 0.2, 1.0 / 3.0, 1.0, 7.0] {
                for &eps in &[0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0] {
                    let settings = SparseVectorSettings {
                        threshold: 0.05,
                        sensitivity: delta,
                        lo: 0.0,
                        hi: 2.0,
                        c,
                        resample,
                    };
                    let svt = SparseVector::from_epsilon(settings, eps).unwrap();
                    let own = svt.epsilon();
                    assert!(own <= eps, "mechanism: {own} > {eps}");
                    let claim = sparse_vector_epsilon(
                        c,
                        svt.scale(),
                        svt.effective_sensitivity(),
                        resample,
                    )
                    .unwrap();
                    assert!(
                        claim <= eps,
                        "c = {c}, resample = {resample}, Δ = {delta}: claim {claim} > budget {eps}"
                    );
                    let mut acc = PureAccountant::new(Neighbouring::ReplaceOne);
                    acc.compose(&svt.event()).unwrap();
                    let composed = acc.epsilon(0.0).unwrap().epsilon;
                    assert!(composed <= eps, "composed {composed} > budget {eps}");
                    assert_eq!(composed, claim);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 10 * 2 * 6 * 7);
}
