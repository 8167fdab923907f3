"""Timing helper shared by the bench_*.py scripts beside it (each run as a script from any
folder: Python puts this folder first on sys.path)."""
import time


def best_of(f, n=3):
    """The best wall time of `n` calls of `f` (seconds) and the last call's result."""
    best, out = float("inf"), None
    for _ in range(n):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out
