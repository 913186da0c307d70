#!/usr/bin/env bash
# Everything that needs an NVIDIA GPU and Nsight Compute, in one go: the whole test suite (its GPU
# tests run here instead of skipping), then every expectation file. Logs go to LOGDIR (default:
# gpu-logs). Exits non-zero if either part fails.
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

"$python" -m pytest -v -rA tests 2>&1 | tee "$logs/pytest.txt"
tests=${PIPESTATUS[0]}
"$python" -m ncuverify check --verbose expectations/*.yaml 2>&1 | tee "$logs/check.txt"
check=${PIPESTATUS[0]}
echo "gpu-suite: pytest exit $tests, ncuverify check exit $check" | tee -a "$logs/check.txt"
[ "$tests" -eq 0 ] && [ "$check" -eq 0 ]
