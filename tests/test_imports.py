"""What a check of static claims and a replay import: neither pandas nor numpy, whose imports cost more
than the check itself (the measurement table is plain rows until a DataFrame is asked of it)."""

import subprocess
import sys

import pytest
from conftest import COMPILE_CACHE, DATA, FIXTURES

CHECK = """
import sys
from pathlib import Path
from ncuverify.cache import CompileCache
from ncuverify.environment import Environment
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
import ncuverify.cli
options = CheckOptions(cache=CompileCache(Path({cache!r})), {how})
[result] = check_files([Path({path!r})], options, Environment(None, None, "no GPU"))
assert result.claims and result.input_error is None, result.input_error
print(sorted(name for name in ("pandas", "numpy") if name in sys.modules))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "how"),
    [
        (DATA / "static.yaml", "static_only=True"),
        (DATA / "sample.yaml", f"from_profile=Path({str(FIXTURES)!r})"),
    ],
    ids=["static", "replay"],
)
def test_a_check_imports_neither_pandas_nor_numpy(path, how, tmp_path):
    program = CHECK.format(cache=str(COMPILE_CACHE.folder), path=str(path), how=how)
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path)
    assert list(tmp_path.iterdir()) == [], "the check wrote nothing where it ran"
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
