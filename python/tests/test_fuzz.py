"""Hypothesis fuzz of the binding: arbitrary (bad) inputs raise a Python exception of an
expected kind — never a crash of the interpreter, a Rust panic (PanicException, a
BaseException) or a NaN/negative budget. About 4400 cases per run (6 × 600 + 300 + 200 + 300)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpinfer import abc, priors
from dpinfer import accounting as A
from dpinfer import mechanisms as M
from dpinfer.errors import DpinferError

# What bad input may raise: our errors (ValueError/ArithmeticError/... subclasses), and
# Python's own conversion errors (a negative int for a u64 is OverflowError, a str for a
# float TypeError).
OK = (DpinferError, ValueError, OverflowError, TypeError, ArithmeticError)

floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-320, 1e-300, 1e300, -1.0, 1.0, 0.5, 1.0 - 1e-16, 2.0]),
)
ints = st.one_of(
    st.integers(min_value=-(2**65), max_value=2**65),
    st.sampled_from([0, 1, 2, 2**63, 2**64 - 1]),
)
FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))


def leaf():
    return st.one_of(
        st.builds(A.Event.gaussian, floats, floats),
        st.builds(A.Event.laplace, floats, floats),
        st.builds(A.Event.pure, floats),
        st.builds(A.Event.approx_dp, floats, floats),
        st.builds(A.Event.zcdp, floats),
    )


def safe(f, *args, **kw):
    try:
        return f(*args, **kw)
    except OK:
        return None


def events():
    def extend(children):
        return st.one_of(
            st.builds(lambda q, e: safe(A.Event.poisson_sampled, q, e), floats, children),
            st.builds(lambda b, n, e: safe(A.Event.sampled_without_replacement, b, n, e), ints, ints, children),
            st.builds(lambda e, k: safe(A.Event.self_composed, e, k), children, ints),
            st.builds(lambda es: safe(A.Event.composed, es), st.lists(children, max_size=4)),
        ).filter(lambda e: e is not None)

    return st.recursive(leaf(), extend, max_leaves=8)


def check_report(r):
    assert not math.isnan(r.epsilon) and not math.isnan(r.delta)
    assert r.epsilon >= 0 and 0 <= r.delta <= 1


ACCOUNTANTS = [
    lambda: A.RdpAccountant(),
    lambda: A.RdpAccountant(neighbouring="replace_one"),
    lambda: A.PldAccountant(),
    lambda: A.ZcdpAccountant(),
    lambda: A.PureDpAccountant(),
    lambda: A.ApproxDpAccountant(),
]


@FUZZ
@given(st.sampled_from(range(len(ACCOUNTANTS))), events(), ints, floats, floats)
def test_accountants_never_crash(which, event, count, delta, epsilon):
    acc = ACCOUNTANTS[which]()
    try:
        acc.compose(event, count)
    except OK:
        pass
    for f, x in ((acc.epsilon_report, delta), (acc.delta_report, epsilon)):
        try:
            check_report(f(x))
        except OK:
            pass


@FUZZ
@given(floats, floats, ints, floats, st.sampled_from(["rdp", "pld", "zcdp", "nope"]))
def test_calibration_never_crashes(eps, delta, steps, q, method):
    for f in (
        lambda: A.get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, steps=steps, accountant=method),
        lambda: A.gaussian_sigma(eps, delta, steps, q, method),
        lambda: A.dp_penalty_max_steps(eps, delta, q, steps, 0.5, method),
        lambda: A.dp_barker_max_steps(eps, delta, steps, steps),
        lambda: A.max_pld_mu(eps, delta),
        lambda: A.rho_for_epsilon_delta(eps, delta),
        lambda: A.zcdp_to_epsilon(eps, delta),
        lambda: A.rdp_to_epsilon([2.0, q], [eps, delta], delta),
    ):
        try:
            v = f()
            if isinstance(v, float):
                assert not math.isnan(v)
        except OK:
            pass


@FUZZ
@given(floats, floats, events(), ints)
def test_budget_filter_never_crashes(eps, delta, event, count):
    try:
        f = A.BudgetFilter(A.RdpAccountant(), eps, delta)
    except OK:
        return
    try:
        check_report(f.try_compose(event, count))
    except OK:
        pass
    try:
        check_report(f.spent())
    except OK:  # e.g. δ = 0 with a non-pure accountant: nothing can be certified
        pass


@FUZZ
@given(floats, floats, floats, floats, st.integers(0, 5), floats)
def test_mechanisms_never_crash(a, sens, lo, hi, dim, x):
    ctors = [
        lambda: M.Laplace(scale=a, sensitivity=sens, lo=lo, hi=hi, dim=dim, noise_seed=1),
        lambda: M.Laplace(epsilon=a, sensitivity=sens, lo=lo, hi=hi, dim=dim, noise_seed=1),
        lambda: M.Gaussian(sigma=a, sensitivity=sens, lo=lo, hi=hi, dim=dim, noise_seed=1),
        lambda: M.Gaussian(rho=a, sensitivity=sens, lo=lo, hi=hi, dim=dim, noise_seed=1),
        lambda: M.Gaussian(epsilon=a, delta=x, sensitivity=sens, lo=lo, hi=hi, dim=dim, noise_seed=1),
        lambda: M.SparseVector(threshold=x, sensitivity=sens, lo=lo, hi=hi, c=dim, epsilon=a, noise_seed=1),
    ]
    for c in ctors:
        try:
            m = c()
        except OK:
            continue
        try:
            if isinstance(m, M.SparseVector):
                m.query(x)
            else:
                m.release(x if dim == 1 else np.full(dim, x))
        except OK:
            pass


@FUZZ
@given(ints, ints, ints, st.lists(ints, max_size=5))
def test_binomial_never_crashes(n, m, pop, infected):
    try:
        mech = M.BinomialCurve(n % 10_000 if n > 0 else n, m, pop, noise_seed=1)
        mech.release(np.array([abs(i) % 2**64 for i in infected], dtype=np.uint64))
    except OK:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(floats, min_size=1, max_size=6),
    st.lists(floats, min_size=0, max_size=6),
    floats, floats, ints, floats, floats,
)
def test_abc_private_passes_never_crash(th, ds, eps_abc, eps_total, c, sens, clip):
    n = min(len(th), len(ds)) if ds else 0
    thetas = np.array(th[: max(n, 1)], dtype=np.float64).reshape(-1, 1)
    dists = np.array(ds[:n], dtype=np.float64)
    for f in (
        lambda: abc.svt_abc(thetas, dists, epsilon_abc=eps_abc, epsilon_total=eps_total, c=c, sensitivity=sens, clip=clip, noise_seed=1),
        lambda: abc.gaussian_abcdp(thetas, dists, epsilon_abc=eps_abc, epsilon_total=eps_total, sensitivity=sens, bound=clip, noise_seed=1),
        lambda: priors.Uniform(eps_abc, eps_total),
        lambda: priors.Normal(sens, clip).sample(abc.row_seeds(1, 0, 3)),
        lambda: abc.row_seeds(c, c, c + 3),
    ):
        try:
            r = f()
            if isinstance(r, abc.AbcResult):
                assert 0 <= r.privacy["epsilon"] <= eps_total
        except OK:
            pass


_X = np.linspace(-1.0, 1.0, 50)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(floats, floats, floats, floats, floats, st.integers(-1, 60), st.sampled_from(["pld", "zcdp", "x"]))
def test_mcmc_never_crashes(eps, delta, clip, tau, step, batch, accounting):
    from dpinfer import mcmc

    def ll(t):
        return -0.5 * (_X - t[0, 0]) ** 2

    def gl(t):
        return (_X - t[0, 0]).reshape(-1, 1)

    prior = priors.Normal(0.0, 1.0)
    for f in (
        lambda: mcmc.dp_penalty(prior, ll, 50, [0.0], epsilon=eps, delta=delta, clip=clip, tau=tau,
                                step_size=step, iterations=20, accounting=accounting, noise_seed=1),
        lambda: mcmc.dp_barker(prior, ll, 50, [0.0], epsilon=eps, delta=delta, batch=batch,
                               temperature=0.5, step_size=step, iterations=20, noise_seed=1),
        lambda: mcmc.dp_hmc(prior, ll, gl, 50, [0.0], epsilon=eps, delta=delta, ratio_clip=clip,
                            grad_clip=clip, tau_l=tau, tau_g=tau, step_size=step, leapfrog_steps=2,
                            iterations=5, accounting=accounting, noise_seed=1),
        lambda: mcmc.rwmh(prior, ll, 50, [step], iterations=20, step_size=clip, temperature=tau),
    ):
        try:
            r = f()
            if r.privacy is not None:
                assert 0 <= r.privacy["epsilon"] <= eps
        except OK:
            pass


grammar_tokens = st.sampled_from(
    ["gaussian", "svt", "binomial", "dlaplace", ":", ",", "=", "/", " ", "sigma", "sens",
     "count", "poisson", "wor", "resample", "bound", "nan", "-inf", "1e999", "0.5", "3",
     "18446744073709551616", "é"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=60), st.lists(grammar_tokens, max_size=14).map("".join)))
def test_event_grammar_hostile_strings_never_crash(text):
    # The event grammar (dpinfer account --event) on arbitrary and grammar-shaped strings:
    # an InvalidParameterError or an event whose canonical text parses back to it.
    try:
        e = A.parse_event(text)
    except OK:
        return
    again = A.parse_event(A.format_event(e))
    assert A.format_event(again) == A.format_event(e)
