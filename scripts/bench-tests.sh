#!/usr/bin/env bash
# Benchmark: how long each step of `make test` takes from a clean clone (no mypy cache, no compile
# cache), in seconds of wall time and of CPU (user and system, children included), and the ten
# slowest tests. Compare CPU seconds between machines and runs: wall time grows with whatever else
# the machine is doing.
#     scripts/bench-tests.sh [WORKERS]
# WORKERS: pytest-xdist's -n (default auto: one process per core); 0 runs the tests in one process.
# PYTHON (default .venv/bin/python) is the environment that `make setup` makes. Exits non-zero if a
# step fails. Not a test: timings belong here, not in the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
workers=${1:-auto}
scratch=$(mktemp -d -t ncuverify-bench-tests-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export NCUVERIFY_CACHE_DIR="$scratch/compile-cache"

summary=()
step() {
    local name=$1
    shift
    local started=$SECONDS
    local TIMEFORMAT="%R %U %S"
    local timing
    # `time` writes its line to the group's stderr; the step's own output goes to its log.
    if ! timing=$({ time "$@" >"$scratch/$name.log" 2>&1; } 2>&1); then
        tail -n 40 "$scratch/$name.log"
        echo "bench-tests: $name failed after $((SECONDS - started)) s" >&2
        exit 1
    fi
    summary+=("$(awk -v name="$name" '{ printf "| %-22s | %8.1f | %8.1f |", name, $1, $2 + $3 }' <<<"$timing")")
}

step "ruff check" "$python" -m ruff check --no-cache .
step "ruff format --check" "$python" -m ruff format --check --no-cache .
step "mypy (no cache)" "$python" -m mypy --cache-dir "$scratch/mypy-cache"
step "docs (mkdocs --strict)" "$python" -m mkdocs build --strict --site-dir "$scratch/site"
step "static claims" "$python" -c "from ncuverify.cli import main; main()" check --static-only expectations/
if [ "$workers" = 0 ]; then
    step "pytest" "$python" -m pytest -q -p no:cacheprovider --durations=10
else
    step "pytest -n $workers" "$python" -m pytest -q -p no:cacheprovider -n "$workers" --durations=10
fi

echo "| step                   | wall (s) | CPU (s)  |"
echo "| ---------------------- | -------- | -------- |"
printf '%s\n' "${summary[@]}"
echo
sed -n '/slowest 10 durations/,/^$/p' "$scratch"/pytest*.log | grep -E '^[0-9.]+s ' || true
tail -n 1 "$scratch"/pytest*.log
