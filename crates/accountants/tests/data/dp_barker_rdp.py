#!/usr/bin/env python3
"""Reference values of DP-Barker's per-iteration RDP (Räisä 2021 thesis Theorem 8) in
50-digit arithmetic (mpmath), written to dp_barker_rdp.csv (batch,n,alpha,rdp).

  eps'(a) = 5/(2B) + ln(2B/(B - 5a))/(2(a-1)) + 2a/(B - 5a)
  eps(a)  = ln(1 + q^2 C(a,2) min(4(e^{eps'(2)} - 1), 2 e^{eps'(2)})
               + 2 sum_{j=3}^{a} q^j C(a,j) e^{(j-1) eps'(j)}) / (a - 1),   q = B/n

The library also caps at the unamplified bound eps'(a) (sampling cannot increase the
Rényi divergence: WBK19 Thm 9 bounds the subsampled mechanism, which at q = 1 is the base
mechanism itself), so the reference is min(eps(a), eps'(a)).

Run: python3 dp_barker_rdp.py > dp_barker_rdp.csv
"""
import mpmath as mp

mp.mp.dps = 50


def base(b, a):
    b, a = mp.mpf(b), mp.mpf(a)
    return 5 / (2 * b) + mp.log(2 * b / (b - 5 * a)) / (2 * (a - 1)) + 2 * a / (b - 5 * a)


def rdp(b, n, a):
    q = mp.mpf(b) / n
    e2 = base(b, 2)
    s = 1 + q**2 * mp.binomial(a, 2) * min(4 * (mp.exp(e2) - 1), 2 * mp.exp(e2))
    for j in range(3, a + 1):
        s += 2 * q**j * mp.binomial(a, j) * mp.exp((j - 1) * base(b, j))
    return min(mp.log(s) / (a - 1), base(b, a))


print("batch,n,alpha,rdp")
for b, n in [(11, 11), (100, 1000), (500, 10_000), (1000, 100_000), (2000, 2000)]:
    for a in [2, 3, 5, 10, 19, 64, 128, 256, 399]:
        if 5 * a < b:
            print(f"{b},{n},{a},{mp.nstr(rdp(b, n, a), 25)}")
