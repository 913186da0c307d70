#!/usr/bin/env bash
# Remakes the recorded profiles the repository carries, on a machine with an NVIDIA GPU and ncu:
#   tests/fixtures/<name>/   each test file's profile (tests/data/<name>.yaml), which the CPU tests
#                            parse and judge; explain/ also holds the second pass over its failed claims;
#   RECORDING/               the profile of every expectation file, in one run (default recordings/h200),
#                            which `make check` replays where there is no GPU and `check --reuse` takes
#                            unchanged cases' figures from (its provenance keeps their measurement
#                            keys), and the claims audit made from it, docs/claims-audit-<recording name>.md.
#   recordings/h200-examples/  the profile of every example under examples/ but the repository one
#                            (programs' cases too: needs PyTorch, Triton and CuPy, and `make -C
#                            examples/programs`), and examples/repository/recording-h200/, the profile
#                            of that small repository's gate (its library built with CMake first);
#                            the CPU tests replay both.
#     scripts/capture-fixtures.sh [--tests-only | --recordings-only] [--sections] [RECORDING]
# --sections also remakes tests/fixtures/transpose_sections (ncu's Source Counters and Memory Workload
# Analysis of three launches of transpose_conflict, imported as the details and source pages), and
# tests/fixtures/program_explain (the same pages of PyTorch's strided copy, a kernel without line
# information, as the second pass of examples/programs/strided.yaml keeps them; needs PyTorch); their
# figures vary a little from run to run, and the tests read them exactly, so they are only remade on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
tests_only=false
recordings_only=false
sections=false
while [ $# -gt 0 ]; do
    case $1 in
        --tests-only) tests_only=true; shift ;;
        --recordings-only) recordings_only=true; shift ;;
        --sections) sections=true; shift ;;
        *) break ;;
    esac
done
recording=${1:-recordings/h200}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

keep_text() {  # a recording's text files, without the plans, cubins and reports --save-profile also keeps
    local from=$1 to=$2
    rm -rf "$to"
    mkdir -p "$to"
    cp "$from"/ncu*.log "$from"/status*.json "$from"/provenance.json "$from"/commands.json "$to/"
    cp "$from"/explain.* "$to/" 2>/dev/null || true
}

if ! $recordings_only; then
    for name in sample launch_failure static faults explain; do
        "$python" -m ncuverify check "tests/data/$name.yaml" --case-timeout 30 \
            --save-profile "$scratch/tests/$name" >/dev/null || true
        keep_text "$scratch/tests/$name" "tests/fixtures/$name"
    done
fi

if ! $tests_only; then
    "$python" -m ncuverify check expectations/ --save-profile "$scratch/expectations" >/dev/null || true
    keep_text "$scratch/expectations" "$recording"
    # Its provenance keeps every case's measurement key, which `check --reuse RECORDING` compares: a
    # recording without them would reuse nothing.
    "$python" -c 'import json, sys; keys = json.load(open(sys.argv[1])).get("measurement_keys")
sys.exit(None if keys else f"{sys.argv[1]}: no measurement keys")' "$recording/provenance.json"
    "$python" -m ncuverify audit expectations/ --from-profile "$recording" \
        --markdown "docs/claims-audit-$(basename "$recording").md" >/dev/null || true
    make -C examples/programs vecadd >/dev/null
    "$python" -m ncuverify check --allow-programs examples/sweep examples/sequence examples/whole-program \
        examples/programs --save-profile "$scratch/examples" >/dev/null || true
    keep_text "$scratch/examples" recordings/h200-examples
    (
        cd examples/repository
        cmake -S . -B build >/dev/null && cmake --build build >/dev/null
        "$python" -m ncuverify check --allow-programs expectations/ --save-profile "$scratch/repository" \
            >/dev/null || true
    )
    keep_text "$scratch/repository" examples/repository/recording-h200
fi
$recordings_only && exit 0

# The details page (long format, thousands separators, demangled names) of the sample's launches.
plan=$(ls "$scratch"/tests/sample/runs/*/0/plan.json | head -1)
ncu --csv --clock-control none \
    --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
    "$python" -m ncuverify.runner "$plan" >tests/fixtures/sample/details.csv 2>&1

if $sections; then
    "$python" -m ncuverify check expectations/transpose.yaml --save-profile "$scratch/transpose" >/dev/null || true
    plan=$(grep -l lab3_conflict "$scratch"/transpose/runs/*/0/plan.json | head -1)
    ncu --clock-control none -o "$scratch/sections" -k 'regex:^(transpose_naive|transpose_conflict|transpose_padded)$' \
        -c 3 --section SourceCounters --section MemoryWorkloadAnalysis_Tables --import-source yes \
        "$python" -m ncuverify.runner "$plan"
    ncu -i "$scratch/sections.ncu-rep" --csv --page details --print-details all \
        >tests/fixtures/transpose_sections/explain.details.csv
    ncu -i "$scratch/sections.ncu-rep" --csv --page source --print-source cuda,sass \
        >tests/fixtures/transpose_sections/explain.source.csv
    "$python" -m ncuverify check --allow-programs examples/programs/strided.yaml \
        --save-profile "$scratch/strided" >/dev/null || true
    rm -rf tests/fixtures/program_explain
    cp -r "$scratch/strided/explain-programs/0" tests/fixtures/program_explain
fi
