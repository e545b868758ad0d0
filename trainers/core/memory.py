"""Process memory: glibc's mmap threshold (the trainers' `malloc_mmap_threshold` option) and the peak
resident memory recorded in run.json."""
from __future__ import annotations

import sys
import warnings


M_MMAP_THRESHOLD = -3  # glibc malloc.h


def set_mmap_threshold(nbytes: int) -> bool:
    """mallopt(M_MMAP_THRESHOLD, nbytes) in this process: blocks of at least nbytes come from mmap and
    go back to the OS on free, and glibc's dynamic threshold (which rises to 32 MiB after the first large
    frees, so that freed activation buffers stay in the heap, resident) is switched off. True when set;
    False with nbytes <= 0, off glibc (macOS, musl) or when glibc refuses the value (above 32 MiB)."""
    if nbytes <= 0 or not sys.platform.startswith("linux"):
        return False
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, int(nbytes)) == 1


def apply_mmap_threshold(nbytes: int) -> int:
    """The trainers' `malloc_mmap_threshold` option, applied in this process before anything is built
    (run_training; benchmarks/throughput.py's measuring processes): the threshold in force, 0 for glibc's
    dynamic default - asked for (nbytes <= 0) or, with a warning, because it could not be set."""
    if nbytes <= 0:
        return 0
    if set_mmap_threshold(nbytes):
        return nbytes
    warnings.warn(f"malloc_mmap_threshold {nbytes}: not applied (not glibc, or a value glibc refuses); "
                  "peak memory may be several times the tensors' size", RuntimeWarning)
    return 0


def peak_rss_gb() -> float | None:
    """This process's peak resident memory so far (ru_maxrss), in GB; None where unavailable."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss * (1 if sys.platform == "darwin" else 1024) / 1e9, 3)
