"""dpinfer.abc with Python simulators: posterior checks against a conjugate closed form,
reproducibility, shards bit-identical to the serial table, private passes' claims."""

from __future__ import annotations

import concurrent.futures as cf
import math

import numpy as np
import pytest

from dpinfer import abc, priors
from dpinfer import accounting as A
from dpinfer.errors import InvalidParameterError, ModelError

N_OBS = 20


def gaussian_mean_sim(theta, seeds):
    """Sample mean of N_OBS draws from N(θ, 1): exactly N(θ, 1/N_OBS)."""
    out = np.empty((len(theta), 1))
    for i, (t, s) in enumerate(zip(theta, seeds)):
        out[i, 0] = np.random.default_rng(int(s)).normal(t[0], 1.0, N_OBS).mean()
    return out


def test_prior_sample_and_log_pdf():
    p = priors.Independent(priors.Uniform(0, 2), priors.Normal([0.0, 1.0], 2.0))
    assert p.dim == 3
    th = p.sample(abc.row_seeds(1, 0, 1000))
    assert th.shape == (1000, 3) and (th[:, 0] >= 0).all() and (th[:, 0] <= 2).all()
    lp = p.log_pdf(th[:2])
    expect = -math.log(2) + sum(-0.5 * ((th[0, j] - m) / 2.0) ** 2 - math.log(2.0 * math.sqrt(2 * math.pi)) for j, m in ((1, 0.0), (2, 1.0)))
    assert lp[0] == pytest.approx(expect, rel=1e-12)
    assert p.log_pdf(np.array([[5.0, 0.0, 0.0]]))[0] == -math.inf
    np.testing.assert_array_equal(p.sample(abc.row_seeds(1, 0, 10)), th[:10])


def test_smc_abc_recovers_conjugate_posterior():
    """Prior N(0, 3²), y ~ N(θ, 1/20), observed ȳ = 1: posterior N(m, v) with
    v = 1/(1/9 + 20), m = v·20·1. SMC-ABC with a small final tolerance must land within
    0.05 of m and have sd within 30 % of √v (ABC tolerance inflates the spread slightly)."""
    r = abc.smc_abc(priors.Normal(0.0, 3.0), gaussian_mean_sim, [1.0], particles=1000,
                    final_tolerance=0.01, max_generations=15, seed=7)
    v = 1 / (1 / 9 + N_OBS)
    m = v * N_OBS * 1.0
    assert abs(r.mean()[0] - m) < 0.05
    sd = math.sqrt(np.average((r.samples[:, 0] - r.mean()[0]) ** 2, weights=r.weights))
    assert abs(sd - math.sqrt(v)) < 0.3 * math.sqrt(v)
    assert r.privacy is None and r.diagnostics["history"]
    assert r.weights.sum() == pytest.approx(1.0)
    df = r.to_pandas()
    assert list(df.columns) == ["theta_0", "weight"] and len(df) == 1000
    # same seed, same run
    r2 = abc.smc_abc(priors.Normal(0.0, 3.0), gaussian_mean_sim, [1.0], particles=1000,
                     final_tolerance=0.01, max_generations=15, seed=7)
    np.testing.assert_array_equal(r.samples, r2.samples)


def test_batched_samplers_do_not_depend_on_batch_size():
    """Every proposal/particle has its own stream: the simulator is called on blocks of
    `batch_size` rows (one call per round), and the result is bit-identical for any size,
    including one row per call."""
    calls = []

    def sim(theta, seeds):
        calls.append(len(theta))
        return gaussian_mean_sim(theta, seeds)

    runs = [abc.smc_abc(priors.Normal(0.0, 3.0), sim, [1.0], particles=200, max_generations=4,
                        seed=5, batch_size=b) for b in (0, 1, 37)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.samples, runs[0].samples)
        np.testing.assert_array_equal(r.weights, runs[0].weights)
        assert r.diagnostics["simulations"] == runs[0].diagnostics["simulations"]
    sims = runs[0].diagnostics["simulations"]
    # batch_size=1 called once per simulation; batch 0 (all particles) far fewer times
    assert calls.count(1) >= sims
    rej = [abc.rejection_abc(priors.Uniform(-5, 5), sim, [1.0], budget=3000, nearest=50, seed=2,
                             batch_size=b) for b in (4096, 1, 250)]
    for r in rej[1:]:
        np.testing.assert_array_equal(r.samples, rej[0].samples)
        np.testing.assert_array_equal(r.diagnostics["distances"], rej[0].diagnostics["distances"])


class PyPrior:
    """A user prior: N(0, 3²) implemented in numpy."""

    dim = 1

    def sample(self, seeds):
        return np.array([[np.random.default_rng(int(s)).normal(0.0, 3.0)] for s in seeds])

    def log_pdf(self, theta):
        return -0.5 * (theta[:, 0] / 3.0) ** 2 - math.log(3.0 * math.sqrt(2 * math.pi))


def test_rejection_abc_with_python_prior():
    r = abc.rejection_abc(PyPrior(), gaussian_mean_sim, [1.0], budget=4000, nearest=200, seed=3)
    v = 1 / (1 / 9 + N_OBS)
    assert len(r) == 200 and abs(r.mean()[0] - v * N_OBS) < 0.1
    assert r.diagnostics["simulations"] == 4000
    t = abc.rejection_abc(priors.Uniform(-5, 5), gaussian_mean_sim, [1.0], budget=10_000, threshold=0.05, target=50)
    assert len(t) == 50 and (t.diagnostics["distances"] <= 0.05).all()


def test_simulator_errors_propagate():
    def bad(theta, seeds):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        abc.smc_abc(priors.Uniform(0, 1), bad, [0.0], particles=10)

    def wrong_shape(theta, seeds):
        return np.zeros((1, 3))

    with pytest.raises(InvalidParameterError):
        abc.rejection_abc(priors.Uniform(0, 1), wrong_shape, [0.0], budget=10, nearest=1)
    with pytest.raises(ModelError):
        abc.simulate_pairs(priors.Uniform(0, 1), lambda t, s: np.zeros(3), seed=1, stop=3)


def test_shards_are_bit_identical_to_serial():
    prior = priors.Uniform(-5, 5)
    serial = abc.simulate_pairs(prior, gaussian_mean_sim, seed=42, stop=1000, batch_size=128)
    ranges = [(0, 300), (300, 301), (301, 777), (777, 1000)]
    with cf.ThreadPoolExecutor(3) as ex:
        parts = list(ex.map(lambda r: abc.simulate_pairs(prior, gaussian_mean_sim, seed=42, start=r[0], stop=r[1], batch_size=50), ranges))
    th = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    assert th.tobytes() == serial[0].tobytes() and y.tobytes() == serial[1].tobytes()


def test_svt_abc_claim_and_accounting():
    prior = priors.Uniform(-5, 5)
    th, y = abc.simulate_pairs(prior, gaussian_mean_sim, seed=1, stop=5000)
    d = abc.euclidean_distances(y, np.array([1.0]))
    np.testing.assert_allclose(d, np.abs(y[:, 0] - 1.0), rtol=1e-15)
    r = abc.svt_abc(th, d, epsilon_abc=0.1, epsilon_total=50.0, c=30, sensitivity=0.05, clip=1.0, noise_seed=1)
    assert r.privacy["epsilon"] <= 50.0 and r.privacy["delta"] == 0.0
    assert len(r) == 30 and len(r.diagnostics["accepted_indices"]) == 30
    np.testing.assert_array_equal(r.samples, th[r.diagnostics["accepted_indices"]])
    # accepted θ are near the observation (ε = 50 is weak privacy, strong signal)
    assert abs(r.mean()[0] - 1.0) < 0.5
    acc = A.PureDpAccountant(neighbouring="replace_one")
    acc.compose(r.privacy["event"])
    assert acc.get_epsilon(1e-9) == pytest.approx(r.privacy["epsilon"], rel=1e-9)


def test_gaussian_abcdp_claim():
    th, y = abc.simulate_pairs(priors.Uniform(-5, 5), gaussian_mean_sim, seed=2, stop=500)
    d = abc.euclidean_distances(y, np.array([1.0]))
    r = abc.gaussian_abcdp(th, d, epsilon_abc=0.2, epsilon_total=200.0, sensitivity=0.01, bound=2.0, noise_seed=3)
    assert r.privacy["epsilon"] <= 200.0 and r.diagnostics["decisions"] == 500


@pytest.mark.parametrize(
    "ret",
    [
        lambda t, s: np.zeros((1, 1), dtype=np.int64),  # wrong dtype
        lambda t, s: [[0.0]],  # not an array
        lambda t, s: None,
        lambda t, s: np.zeros((1,)),  # 1-D
        lambda t, s: np.zeros((2, 1)),  # wrong rows
    ],
)
def test_misbehaving_simulators_raise(ret):
    with pytest.raises((InvalidParameterError, TypeError)):
        abc.smc_abc(priors.Uniform(0, 1), ret, [0.0], particles=10, max_generations=2)


def test_nan_outputs_are_rejections_not_crashes():
    def nan_sim(theta, seeds):
        out = gaussian_mean_sim(theta, seeds)
        out[theta[:, 0] > 0.5] = np.nan
        return out

    r = abc.rejection_abc(priors.Uniform(0, 1), nan_sim, [0.2], budget=500, threshold=0.5)
    assert len(r) > 0 and (r.samples[:, 0] <= 0.5).all()


class BadPrior:
    def sample(self, seeds):
        return np.ones((len(seeds), 1)) * np.nan

    def log_pdf(self, theta):
        raise ValueError("no density")


def test_bad_python_prior_raises():
    from dpinfer.errors import DpinferError

    with pytest.raises((ValueError, DpinferError)):
        abc.smc_abc(BadPrior(), gaussian_mean_sim, [0.0], particles=10, max_generations=3)


def _pairs_and_distances(seed=4, stop=400):
    th, y = abc.simulate_pairs(priors.Uniform(-5, 5), gaussian_mean_sim, seed=seed, stop=stop)
    return th, abc.euclidean_distances(y, np.array([1.0]))


@pytest.mark.parametrize("relation", ["replace-one", "add/remove", "replace-one and add/remove", "any pair"])
def test_sensitivity_relation_reaches_the_claim(relation):
    th, d = _pairs_and_distances()
    s = abc.Sensitivity(0.05, relation)
    assert isinstance(s, float) and float(s) == 0.05 and s.relation == relation
    r = abc.svt_abc(th, d, epsilon_abc=0.1, epsilon_total=50.0, c=5, sensitivity=s, clip=1.0, noise_seed=1)
    assert r.privacy["relation"] == relation
    g = abc.gaussian_abcdp(th, d, epsilon_abc=0.2, epsilon_total=200.0, sensitivity=s, bound=2.0, noise_seed=3)
    assert g.privacy["relation"] == relation
    # the relation is a label: the release is the one a plain float of the same value gives
    plain = abc.svt_abc(th, d, epsilon_abc=0.1, epsilon_total=50.0, c=5, sensitivity=0.05, clip=1.0, noise_seed=1)
    np.testing.assert_array_equal(r.samples, plain.samples)
    assert r.privacy["epsilon"] == plain.privacy["epsilon"]


def test_plain_float_sensitivity_still_works_and_says_the_relation_is_not_stated():
    th, d = _pairs_and_distances()
    r = abc.svt_abc(th, d, epsilon_abc=0.1, epsilon_total=50.0, c=5, sensitivity=0.05, clip=1.0, noise_seed=1)
    assert r.privacy["relation"] == abc.PLAIN_FLOAT_RELATION
    assert r.privacy["relation"].startswith("not stated (a plain float")
    g = abc.gaussian_abcdp(th, d, epsilon_abc=0.2, epsilon_total=200.0, sensitivity=0.01, bound=2.0, noise_seed=3)
    assert g.privacy["relation"] == abc.PLAIN_FLOAT_RELATION


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("replace_one", "replace-one"),
        ("add-remove", "add/remove"),
        ("add_remove", "add/remove"),
        ("both", "replace-one and add/remove"),
        ("any_pair", "any pair"),
    ],
)
def test_sensitivity_accepts_the_accountants_and_clis_spellings(spelling, canonical):
    assert abc.Sensitivity(1.0, spelling).relation == canonical


def test_sensitivity_value_type():
    s = abc.Sensitivity(0.25, "add-remove")
    assert repr(s) == "Sensitivity(0.25, relation='add/remove')"
    assert s.value == 0.25 and type(s.value) is float
    # arithmetic gives a plain float: a bound scaled by hand is not the proved one
    assert type(2 * s) is float and 2 * s == 0.5
    assert s == 0.25 and hash(s) == hash(0.25)  # compares as its value
    import pickle

    t = pickle.loads(pickle.dumps(s))
    assert type(t) is abc.Sensitivity and float(t) == 0.25 and t.relation == "add/remove"


def test_rff_sensitivity_carries_replace_one():
    r = abc.RffMmd(np.zeros((250, 1)), seed=0, bandwidth=1.0)
    s = r.sensitivity()
    assert isinstance(s, abc.Sensitivity) and s.relation == "replace-one" == r.relation
    assert 2 / 250 <= s <= 2 / 250 + 1e-5


@pytest.mark.parametrize("value", [-0.1, 0.0, float("nan"), float("inf"), -float("inf"), "abc", None])
def test_sensitivity_rejects_bad_values(value):
    with pytest.raises(InvalidParameterError) as e:
        abc.Sensitivity(value, "replace-one")
    assert e.value.name == "sensitivity"


@pytest.mark.parametrize("relation", ["replace one", "add", "", None, 1])
def test_sensitivity_rejects_unknown_relations(relation):
    with pytest.raises(InvalidParameterError, match="unknown neighbouring relation") as e:
        abc.Sensitivity(0.1, relation)
    assert e.value.name == "relation"


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf")])
def test_private_passes_reject_bad_plain_float_sensitivities(value):
    th, d = _pairs_and_distances(stop=50)
    with pytest.raises(InvalidParameterError):
        abc.svt_abc(th, d, epsilon_abc=0.1, epsilon_total=5.0, c=2, sensitivity=value, clip=1.0, noise_seed=1)
    with pytest.raises(InvalidParameterError):
        abc.gaussian_abcdp(th, d, epsilon_abc=0.1, epsilon_total=5.0, sensitivity=value, bound=1.0, noise_seed=1)


def test_a_setting_the_mechanism_refuses_is_an_invalid_parameter_named_by_its_key():
    # ε_total = 1e308 makes the SVT's Laplace scale (c+1)Δ/ε leave the mechanism's grid range:
    # the mechanism refuses, and the error names the setting it follows from, with its value
    # (was a bare NumericalError).
    th, d = _pairs_and_distances(stop=50)
    with pytest.raises(InvalidParameterError, match="epsilon_total") as e:
        abc.svt_abc(th, d, epsilon_abc=0.1, epsilon_total=1e308, c=2, sensitivity=0.1, clip=1.0, noise_seed=1)
    assert e.value.name == "epsilon_total"
    assert e.value.value == 1e308
