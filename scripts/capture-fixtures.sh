#!/usr/bin/env bash
# Remakes the recorded profiles the repository carries, on a machine with an NVIDIA GPU and ncu:
#   tests/fixtures/<name>/   the test files' profiles, which the CPU tests parse and judge;
#   RECORDING/<name>/        every expectation file's profile (default recordings/h200), which
#                            `make check` replays where there is no GPU, and the claims audit made
#                            from it, docs/claims-audit-<recording name>.md.
#     scripts/capture-fixtures.sh [--tests-only] [RECORDING]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
tests_only=false
if [ "${1:-}" = --tests-only ]; then tests_only=true; shift; fi
recording=${1:-recordings/h200}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

keep_text() {  # the recording's text files, without the plan and cubins --save-profile also keeps
    local from=$1 to=$2
    for folder in "$from"/*/; do
        name=$(basename "$folder")
        mkdir -p "$to/$name"
        cp "$folder"/ncu*.log "$folder"/status*.json "$folder/provenance.json" "$to/$name/"
    done
}

"$python" -m ncuverify check tests/data/sample.yaml tests/data/launch_failure.yaml tests/data/static.yaml \
    tests/data/faults.yaml --case-timeout 30 \
    --save-profile "$scratch/tests" || true
keep_text "$scratch/tests" tests/fixtures

if ! $tests_only; then
    "$python" -m ncuverify check expectations/ --save-profile "$scratch/expectations" || true
    rm -rf "$recording"
    keep_text "$scratch/expectations" "$recording"
    "$python" -m ncuverify audit expectations/ --from-profile "$recording" \
        --markdown "docs/claims-audit-$(basename "$recording").md" >/dev/null || true
fi

# The details page (long format, thousands separators, demangled names) of the sample's launches.
ncu --csv --clock-control none \
    --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
    "$python" -m ncuverify.runner "$scratch/tests/sample/plan.json" >tests/fixtures/sample/details.csv 2>&1
