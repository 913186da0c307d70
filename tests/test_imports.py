"""What a check of static claims imports: neither pandas nor numpy, whose imports cost more than the
check itself (the measurement table is plain rows until a DataFrame is asked of it)."""

import subprocess
import sys

from conftest import COMPILE_CACHE, DATA

CHECK_STATIC = f"""
import sys
from pathlib import Path
from ncuverify.cache import CompileCache
from ncuverify.environment import Environment
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
import ncuverify.cli
options = CheckOptions(static_only=True, cache=CompileCache(Path({str(COMPILE_CACHE)!r})))
[result] = check_files([Path({str(DATA / "static.yaml")!r})], options, Environment(None, None, "no GPU"))
assert result.claims and result.input_error is None, result.input_error
print(sorted(name for name in ("pandas", "numpy") if name in sys.modules))
"""


def test_a_static_check_imports_neither_pandas_nor_numpy():
    completed = subprocess.run([sys.executable, "-c", CHECK_STATIC], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
