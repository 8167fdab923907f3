"""Reference values of the Kolmogorov survival function Q_KS(lambda) (50 digits, mpmath),
and the classical critical values (Q_KS^{-1}(alpha)); pasted into crates/distances/src/ks.rs.

    python3 crates/distances/scripts/ks_reference.py
"""
import mpmath as mp

mp.mp.dps = 50


def q(lam):
    lam = mp.mpf(lam)
    return 2 * mp.nsum(lambda k: (-1) ** (k - 1) * mp.exp(-2 * k * k * lam * lam), [1, mp.inf])


def q_small(lam):
    # Jacobi form, used where the alternating series converges slowly.
    lam = mp.mpf(lam)
    s = mp.nsum(lambda k: mp.exp(-((2 * k - 1) ** 2) * mp.pi ** 2 / (8 * lam * lam)), [1, mp.inf])
    return 1 - mp.sqrt(2 * mp.pi) / lam * s


for lam in ["0.05", "0.2", "0.29", "0.31", "0.5", "0.8", "1.0", "1.5", "2.0", "3.0"]:
    v = q_small(lam) if mp.mpf(lam) < 0.5 else q(lam)
    print(f"({lam}, {mp.nstr(v, 20)}),")
for alpha in ["0.1", "0.05", "0.01"]:
    root = mp.findroot(lambda x: q(x) - mp.mpf(alpha), 1.4)
    print(f"critical({alpha}) = {mp.nstr(root, 20)}")
