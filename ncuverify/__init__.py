"""ncuverify: turn quantitative claims about CUDA kernels into checks measured on the hardware.

import ncuverify
results = ncuverify.check("expectations/coalescing.yaml")
results.claims        # a pandas DataFrame, one row per claim
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:  # imported on first use: the profiled runner needs none of it
    if name in ("check", "Results"):
        from ncuverify import api

        return getattr(api, name)
    raise AttributeError(f"module 'ncuverify' has no attribute {name!r}")
