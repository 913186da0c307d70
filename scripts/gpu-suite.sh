#!/usr/bin/env bash
# Everything that needs an NVIDIA GPU and Nsight Compute, in one go: the GPU tests (the rest of the
# suite is CI's), every expectation file through the command line (its profile kept in LOGDIR/profile,
# as `check --save-profile` keeps it), and again through the pytest plugin. Logs go to LOGDIR
# (default: gpu-logs). Exits non-zero if a part fails.
#     scripts/gpu-suite.sh [LOGDIR]
set -u
cd "$(dirname "$0")/.."
logs=${1:-gpu-logs}
mkdir -p "$logs"
python=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
    ncu --version
    "$python" --version
    "$python" -c 'import cuda.core, cuda.bindings; print("cuda-core", cuda.core.__version__, "cuda-bindings", cuda.bindings.__version__)'
} >"$logs/environment.txt" 2>&1

"$python" -m pytest -m gpu -v -rA tests 2>&1 | tee "$logs/pytest.txt"
tests=${PIPESTATUS[0]}
"$python" -m ncuverify check --verbose expectations/*.yaml --json "$logs/check.json" \
    --save-profile "$logs/profile" 2>&1 | tee "$logs/check.txt"
check=${PIPESTATUS[0]}
# The plugin is loaded by name where ncuverify is used from a checkout; an installed one registers it.
plugin=(-p ncuverify.pytest_plugin)
if "$python" -c 'import sys; from importlib.metadata import entry_points
sys.exit(0 if any(e.value.startswith("ncuverify") for e in entry_points(group="pytest11")) else 1)'; then
    plugin=()
fi
"$python" -m pytest "${plugin[@]}" expectations/ 2>&1 | tee "$logs/plugin.txt"
plugin=${PIPESTATUS[0]}
echo "gpu-suite: pytest exit $tests, ncuverify check exit $check, pytest expectations/ exit $plugin" |
    tee -a "$logs/check.txt"
[ "$tests" -eq 0 ] && [ "$check" -eq 0 ] && [ "$plugin" -eq 0 ]
