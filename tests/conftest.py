import os
import tempfile
from pathlib import Path

import pytest

from ncuverify.pipeline import Environment

pytest_plugins = ["pytester"]

# The command line compiles through a cache in the user's folder; the tests keep theirs apart.
os.environ.setdefault("NCUVERIFY_CACHE_DIR", tempfile.mkdtemp(prefix="ncuverify-test-cache-"))

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
FIXTURES = ROOT / "tests" / "fixtures"
EXPECTATIONS = ROOT / "expectations"
RECORDINGS = ROOT / "recordings" / "h200"


@pytest.fixture(scope="session")
def gpu_environment() -> Environment:
    """The machine's GPU and ncu; GPU tests skip, saying why, where either is missing."""
    environment = Environment.probe("ncu")
    if environment.problem is not None:
        pytest.skip(f"needs an NVIDIA GPU and Nsight Compute: {environment.problem}")
    return environment
