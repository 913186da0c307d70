"""check --dry-run: what a run (or a shard of it) would build, reuse and profile, from the run's own
scheduler; and over N shards of the suite, each case profiled once, each claim judged once, each shard
building only the kernels of its own cases."""

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA, EXPECTATIONS
from typer.testing import CliRunner

from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.results import run_keys
from ncuverify.spec import load

PATHS = sorted(EXPECTATIONS.glob("*.yaml"))
SPECS = {key.name: load(path) for key, path in zip(run_keys(PATHS), PATHS, strict=True)}


def planned(tmp_path: Path, *arguments: str) -> dict:
    out = tmp_path / "plan.json"
    result = CliRunner().invoke(app, ["check", "--dry-run", "--json", str(out), *arguments])
    assert result.exit_code == ExitCode.OK, result.output
    return json.loads(out.read_text())


def test_the_plan_lists_every_kernel_every_profiled_case_and_the_schedules_processes(no_gpu, tmp_path):
    plan = planned(tmp_path, str(EXPECTATIONS))
    assert plan["dry_run"] == 1 and plan["shard"] == [1, 1] and plan["reuse"] == []
    built = {(b["file"], b["kernel"]) for b in plan["build"]}
    assert built == {(key, kernel) for key, spec in SPECS.items() for kernel in spec.content.kernels}
    profiled = [(c["file"], c["case"]) for c in plan["profile"]]
    assert len(profiled) == len(set(profiled)) and ("expectations/bank_conflicts.yaml", "stride1") in profiled
    # every profiled case is in one process, its repeats apart or not
    in_processes = Counter(
        (c["file"], c["case"].removesuffix(" (repeats)")) for p in plan["processes"] for c in p["cases"]
    )
    assert set(in_processes) == set(profiled)
    assert all(p["passes"] >= p["ncu"] and p["launches"] >= 1 for p in plan["processes"])
    assert len(plan["claims"]) == sum(len(spec.content.claims) for spec in SPECS.values())


# The suite's cases whose claims read only launch facts the driver gives, or only buffers read back.
WITHOUT_NCU = {
    "async_copy.yaml": {"bulk"},
    "device.yaml": {"smem4", "smem132"},
    "latency.yaml": {"fadd_full_gpu", "shared_chase", "l2_chase"},
    "occupancy.yaml": {
        *("probe_b64", "probe_b128", "probe_b512", "probe_b1024", "launch_2d"),
        *("regs32", "regs33", "regs40_b64", "f4_w8", "f4_w16", "f4_w48"),
    },
    "vector_add.yaml": {"v1_verify", "v2_verify"},
}


def test_the_cases_that_need_no_ncu_share_one_process_without_it(no_gpu, tmp_path):
    assert all(p["ncu"] for p in planned(tmp_path, str(EXPECTATIONS))["processes"]), "only when asked"
    plan = planned(tmp_path, "--facts-without-ncu", str(EXPECTATIONS))
    without = [p for p in plan["processes"] if not p["ncu"]]
    assert len(without) == 1 and without[0]["passes"] == 0 and not without[0]["program"]
    cases: dict[str, set[str]] = {}
    for case in without[0]["cases"]:
        cases.setdefault(Path(case["file"]).name, set()).add(case["case"])
    assert cases == WITHOUT_NCU
    assert without[0]["alone"], "shared_chase times itself and reads its clocks back"
    # a case with one hardware counter, or the time, stays with ncu
    with_ncu = {(Path(c["file"]).name, c["case"]) for p in plan["processes"] if p["ncu"] for c in p["cases"]}
    assert {("occupancy.yaml", "probe_b256"), ("occupancy.yaml", "f4_w8 (repeats)")} <= with_ncu


def test_two_gpus_spread_the_processes_as_the_run_would(no_gpu, tmp_path):
    plan = planned(tmp_path, "--gpus", "0,1", str(EXPECTATIONS))
    assert {p["gpu"] for p in plan["processes"]} == {0, 1}


@pytest.mark.parametrize("n", [2, 4, 8, 32])
def test_over_n_shards_each_case_is_profiled_once_and_each_claim_judged_once(no_gpu, tmp_path, n: int):
    plans = [planned(tmp_path, "--shard", f"{k}/{n}", str(EXPECTATIONS)) for k in range(1, n + 1)]
    whole = planned(tmp_path, str(EXPECTATIONS))
    cases = Counter((c["file"], c["case"]) for plan in plans for c in plan["profile"])
    assert set(cases) == {(c["file"], c["case"]) for c in whole["profile"]}
    assert sum(cases.values()) / len(cases) == 1.0  # duplication 1.00
    claims = Counter((c["file"], c["claim"]) for plan in plans for c in plan["claims"])
    assert set(claims) == {(c["file"], c["claim"]) for c in whole["claims"]} and set(claims.values()) == {1}
    for plan in plans:
        assert plan["shard"][1] == n
        assert {(b["file"], b["kernel"]) for b in plan["build"]} <= _needed(plan)


def _needed(plan: dict) -> set[tuple[str, str]]:
    """The kernels a shard's plan needs: those its claims and profiled cases launch or read, and those
    of the cases and kernels no claim reads (each in exactly one shard)."""
    needed = set()
    judged = {(c["file"], c["claim"]) for c in plan["claims"]}
    for key, spec in SPECS.items():
        content = spec.content
        for claim in content.claims:
            if (key, claim.id) in judged:
                read = [claim.case, claim.control, *(ref.case for ref in claim.metric_refs())]
                needed |= {(key, content.cases[c].kernel) for c in read if c in content.cases}
                needed |= {(key, claim.kernels)} if claim.kernels else set()
        read_anywhere = {ref.case for claim in content.claims for ref in claim.metric_refs()}
        read_anywhere |= {claim.case for claim in content.claims} | {
            claim.control for claim in content.claims
        }
        needed |= {(key, case.kernel) for name, case in content.cases.items() if name not in read_anywhere}
        launched = {case.kernel for case in content.cases.values()} | {c.kernels for c in content.claims}
        needed |= {(key, kernel) for kernel in content.kernels if kernel not in launched}
    return needed


def test_the_plan_is_shown_in_80_columns(no_gpu):
    result = CliRunner().invoke(app, ["check", "--dry-run", str(EXPECTATIONS)], env={"COLUMNS": "80"})
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.output.splitlines()
    assert lines[0] == "dry run: 12 files, nothing built or profiled"
    assert lines[2] == "reuse: 0 recorded cases"
    assert all(len(line) <= 80 for line in lines)


def test_a_file_that_cannot_be_read_is_reported_as_check_reports_it(no_gpu, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kernels: [\n")
    checked = CliRunner().invoke(app, ["check", str(bad), str(DATA / "sample.yaml")])
    dry = CliRunner().invoke(app, ["check", "--dry-run", str(bad), str(DATA / "sample.yaml")])
    assert checked.exit_code == dry.exit_code == ExitCode.BAD_INPUT
    error = next(line for line in checked.output.splitlines() if "bad.yaml" in line)
    assert error in dry.output


def test_the_dry_run_writes_no_other_output(no_gpu, tmp_path):
    result = CliRunner().invoke(
        app, ["check", "--dry-run", "--junit-xml", str(tmp_path / "j.xml"), str(DATA / "sample.yaml")]
    )
    assert result.exit_code == ExitCode.BAD_INPUT
    shown = " ".join(result.output.replace("│", " ").split())
    assert "--dry-run writes the plan to --json only, not --junit-xml" in shown
    assert not (tmp_path / "j.xml").exists()
