"""What the side-by-side timing scripts share: numpy pinned to one thread, the children's CPU
seconds, the 1-minute load average and the positional arguments (imported from the scripts'
own folder, which Python puts first on the path when a script runs)."""
import os
import resource
import sys


def pin_numpy_threads():
    """One BLAS/OpenMP thread for numpy; call before numpy is imported."""
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = "1"


def child_cpu():
    """User + system CPU seconds of the finished child processes."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load_average():
    """The 1-minute load average."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def arg(i, default, kind=int):
    """Positional argument `i` (1-based) as `kind`, else `default`."""
    return kind(sys.argv[i]) if len(sys.argv) > i else default
