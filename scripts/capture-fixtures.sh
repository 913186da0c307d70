#!/usr/bin/env bash
# Remakes the Nsight Compute captures under tests/fixtures/ with ncuverify's own runner. Needs an
# NVIDIA GPU and ncu. The CPU tests parse and judge these captures (every stage after profiling).
#     scripts/capture-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
fixtures=tests/fixtures
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The raw page, exactly as `ncuverify check` asks for it, with the runner's status per case.
files=(tests/data/sample.yaml tests/data/launch_failure.yaml tests/data/static.yaml expectations/*.yaml)
"$python" -m ncuverify check "${files[@]}" --save-profile "$scratch" || true
for file in "${files[@]}"; do
    name=$(basename "$file" .yaml)
    [ -f "$scratch/$name/ncu.log" ] || continue  # a file with static claims only runs no profiler
    mkdir -p "$fixtures/$name"
    cp "$scratch/$name/ncu.log" "$scratch/$name/status.json" "$scratch/$name/provenance.json" "$fixtures/$name/"
done

# The details page (long format, thousands separators, demangled names) of the sample's launches.
ncu --csv --clock-control none \
    --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
    "$python" -m ncuverify.runner "$scratch/sample/plan.json" >"$fixtures/sample/details.csv" 2>&1
