"""Which BLAS this Python process runs on — read from /proc/self/maps after a product, so it is the
library NumPy or torch really resolved (Debian links both to libblas.so.3, whichever alternative is
installed: without libopenblas0 that is netlib's reference BLAS, no baseline for a speed comparison).
Shared by numpy_attention.py and scripts/models/bench_torch.py."""
import os


def openblas_core(paths):
    """The kernel set OpenBLAS picked for this CPU (`openblas_get_corename`: "Zen", "SkylakeX", …),
    or None: on an AMD EPYC it is "Zen" (AVX2) unless the CPU shows AVX-512 — which decides how fast
    NumPy and torch are, and so every ratio to them."""
    import ctypes

    for path in paths:
        if "openblas" in path.lower():
            try:
                f = ctypes.CDLL(path).openblas_get_corename
                f.restype = ctypes.c_char_p
                return f().decode()
            except (OSError, AttributeError):
                pass
    return None


def blas_in_use():
    """{"name": "OpenBLAS (core Zen)" | "MKL" | "BLIS" | "reference BLAS (netlib)" | "unknown", "paths": [...]}."""
    paths = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                name = os.path.basename(path).lower()
                if path.startswith("/") and ("blas" in name or "mkl" in name or "blis" in name):
                    paths.add(os.path.realpath(path))
    except OSError:
        pass
    names = []
    for path in sorted(paths):
        low = path.lower()
        if "openblas" in low:
            names.append("OpenBLAS")
        elif "mkl" in low:
            names.append("MKL")
        elif "blis" in low:
            names.append("BLIS")
        elif "/blas/" in low or os.path.basename(low).startswith("libblas.so"):
            names.append("reference BLAS (netlib)")
    name = " + ".join(dict.fromkeys(names)) or "unknown"
    core = openblas_core(sorted(paths)) if "OpenBLAS" in name else None
    if core:
        name = name.replace("OpenBLAS", f"OpenBLAS (core {core})", 1)
    return {"name": name, "paths": sorted(paths)}


def optimized(name):
    """Whether `name` (from blas_in_use) is an optimized BLAS."""
    return any(x in name for x in ("OpenBLAS", "MKL", "BLIS"))
