"""End to end on a real GPU under Nsight Compute. Skipped, with the reason, where there is none."""

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import DATA, NO_GPU, ROOT

from ncuverify.build import build_spec
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file, check_files
from ncuverify.profile import NcuOptions, parse_csv, recording
from ncuverify.results import ClaimResult, FileResult, Verdict, run_keys
from ncuverify.spec import load

pytestmark = pytest.mark.gpu


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ncuverify", "check", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_sample_cli_exits_zero_and_prints_the_table(gpu_environment):
    completed = run_check("-v", str(DATA / "sample.yaml"))
    assert completed.returncode == ExitCode.OK, completed.stdout + completed.stderr
    assert "contiguous_four_sectors" in completed.stdout
    assert "8 passed, 0 failed, 0 errors, 0 skipped" in completed.stdout
    quiet_by_default = run_check(str(DATA / "sample.yaml"))
    assert quiet_by_default.stdout.splitlines() == [
        f"{DATA / 'sample.yaml'}: 8 passed, 0 failed, 0 errors, 0 skipped in "
        + quiet_by_default.stdout.split(" in ")[-1].strip()
    ], "one line for a file whose claims all hold"


def test_a_wrong_figure_fails_that_claim_and_exits_one(gpu_environment, tmp_path: Path):
    content = yaml.safe_load((DATA / "sample.yaml").read_text())
    content["claims"][0]["expect"] = {"equals": 5}  # the hardware gives 4
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(content))
    completed = run_check(str(edited))
    assert completed.returncode == ExitCode.CLAIM_FAILED, completed.stdout + completed.stderr
    assert "failed contiguous_four_sectors: measured 4, expected == 5" in completed.stdout
    assert "7 passed, 1 failed" in completed.stdout


def test_a_case_that_cannot_launch_errs_alone(gpu_environment):
    result = check_file(DATA / "launch_failure.yaml", CheckOptions(), gpu_environment)
    verdicts = {r.claim.id: r for r in result.claims}
    assert verdicts["too_big_stores"].verdict == Verdict.ERROR
    assert "CUDA_ERROR" in (verdicts["too_big_stores"].reason or "")
    assert verdicts["fits_stores"].verdict == Verdict.PASSED
    assert verdicts["fits_stores"].measured == 128


def test_ncu_reports_the_kernels_and_no_runner_output(gpu_environment, tmp_path: Path):
    result = check_file(DATA / "sample.yaml", CheckOptions(save_profile=tmp_path), gpu_environment)
    assert result.provenance is not None
    command = result.provenance.ncu_command
    assert command[command.index("--clock-control") + 1] == "none"
    assert result.provenance.arch == gpu_environment.gpu.arch and result.provenance.ncu_version
    log = (tmp_path / "ncu.log").read_text()
    assert '"ID"' in log
    assert "_Z11read_strideILi32EEvPKfPf" in log


def test_static_and_profiler_claims_judged_together(gpu_environment):
    result = check_file(DATA / "static.yaml", CheckOptions(), gpu_environment)
    assert {r.claim.id: r.verdict for r in result.claims} == {
        r.claim.id: Verdict.PASSED for r in result.claims
    }
    assert next(r for r in result.claims if r.claim.id == "vector_sectors_per_request").measured == 16


def test_launch_registers_agree_with_ptxas_from_16_up(gpu_environment, tmp_path: Path):
    """ncu's launch__registers_per_thread is ptxas's count, but never below 16 on sm_90."""
    content = yaml.safe_load((DATA / "static.yaml").read_text())
    content["claims"] = [
        {
            "id": f"registers_{case}",
            "case": case,
            "metric": "launch__registers_per_thread",
            "expect": {"at_least": 0},
            "cite": {"document": "sample.txt", "section": "8", "figure": "registers"},
        }
        for case in content["cases"]
    ]
    path = tmp_path / "registers.yaml"  # the kernels are inline: the file can live anywhere
    path.write_text(yaml.safe_dump(content))
    result = check_file(path, CheckOptions(), gpu_environment)
    builds = build_spec(load(DATA / "static.yaml"), gpu_environment.gpu.arch)
    for claim_result in result.claims:
        kernel = content["cases"][claim_result.claim.case]["kernel"]
        assert claim_result.measured == max(builds[kernel].facts.ptxas.registers, 16), claim_result.claim.id


def test_a_saved_run_replays_to_identical_verdicts(gpu_environment, tmp_path: Path):
    live = check_file(DATA / "sample.yaml", CheckOptions(save_profile=tmp_path), gpu_environment)
    replayed = check_file(DATA / "sample.yaml", CheckOptions(from_profile=tmp_path), NO_GPU)
    assert replayed.replayed and replayed.warnings == []
    assert [(r.claim.id, r.verdict, r.measured) for r in replayed.claims] == [
        (r.claim.id, r.verdict, r.measured) for r in live.claims
    ]


def test_a_saved_run_with_faults_replays_whole_and_refuses_its_logs_cut_short(
    gpu_environment, tmp_path: Path
):
    """A recording of a live run in which kernels fault (ncu's report of that process ends there, and
    the cases after run again in another) or hang (stopped) is whole: it replays to the live verdicts.
    With its CSV lost, the log of the last run of sample.yaml's cases is damage, refused naming it."""
    files = [DATA / "faults.yaml", DATA / "launch_failure.yaml", DATA / "sample.yaml"]
    options = CheckOptions(ncu=NcuOptions(case_timeout_s=20), save_profile=tmp_path)
    live = check_files(files, options, gpu_environment)
    replayed = check_files(files, CheckOptions(from_profile=tmp_path), NO_GPU)
    assert [r.input_error for r in replayed] == [None, None, None]
    assert [[(c.claim.id, c.verdict, c.measured) for c in r.claims] for r in replayed] == [
        [(c.claim.id, c.verdict, c.measured) for c in r.claims] for r in live
    ]
    [sample] = run_keys([DATA / "sample.yaml"])
    log = last_log_where_ran(tmp_path, sample.name)
    text = log.read_text()
    log.write_text(text[: text.index('"ID"')])  # cut before its CSV
    cut = check_files([DATA / "sample.yaml"], CheckOptions(from_profile=tmp_path), NO_GPU)[0]
    assert cut.input_error is not None
    assert cut.input_error.startswith(f"{log}: damaged: it lacks the launches of case"), cut.input_error


def last_log_where_ran(folder: Path, key: str) -> Path:
    """The ncu log of the last run of a recording whose status says that a case of the file ran."""
    found, index = None, 0
    while (folder / (log := "ncu.log" if index == 0 else f"ncu.{index}.log")).is_file():
        status = json.loads((folder / log.replace("ncu", "status").replace(".log", ".json")).read_text())
        if any(entry["case"].startswith(f"{key}::") and entry["ok"] for entry in status):
            found = folder / log
        index += 1
    assert found is not None, f"no run of {key} in {folder}"
    return found


def test_a_baseline_catches_a_kernel_made_slower(gpu_environment, tmp_path: Path):
    """Stride 33 in place of stride 1, as a pull request edits the file: every claim still holds, but
    the time regressed. The baseline knows the file by its path in the project."""
    (tmp_path / ".ncuverify-root").touch()
    edited = tmp_path / "regression.yaml"
    edited.write_text((DATA / "regression.yaml").read_text())
    saved = tmp_path / "main.json"
    assert run_check_baseline_save(saved, edited).returncode == ExitCode.OK
    edited.write_text(edited.read_text().replace("entry: read_stride<1>", "entry: read_stride<33>"))
    completed = run_check(str(edited), "--baseline", str(saved))
    assert completed.returncode == ExitCode.CLAIM_FAILED, completed.stdout + completed.stderr
    assert "1 passed, 0 failed" in completed.stdout
    assert re.search(r"baseline: [1-9]\d* regressed", completed.stdout)
    time_row = next((line for line in completed.stdout.splitlines() if "gpu__time_duration.sum" in line), "")
    assert "worse" in time_row, completed.stdout


def run_check_baseline_save(output: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ncuverify", "baseline", "save", str(output), str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_dynamic_shared_memory_above_48_kb(gpu_environment):
    result = check_file(DATA / "shared.yaml", CheckOptions(), gpu_environment)
    assert [(r.claim.id, r.verdict) for r in result.claims] == [
        ("one_block_gets_100_kb", Verdict.PASSED),
        ("two_blocks_fit_per_sm", Verdict.PASSED),
    ], [r.reason for r in result.claims]


def test_faults_and_hangs_fail_only_their_own_cases(gpu_environment, tmp_path):
    # the run's plans lie in its own folder, so that a runner of this run is told from other tests'
    options = CheckOptions(ncu=NcuOptions(case_timeout_s=20), save_profile=tmp_path / "profile")
    result = check_file(DATA / "faults.yaml", options, gpu_environment)
    verdicts = {r.claim.id: r for r in result.claims}
    for healthy in ("first_stores", "second_stores", "last_stores", "hung_kernel_still_built"):
        assert verdicts[healthy].verdict == Verdict.PASSED, (healthy, verdicts[healthy].reason)
    expected_errors = {
        "bad_address_stores": "CUDA_ERROR_ILLEGAL_ADDRESS",
        "bad_alignment_loads": "CUDA_ERROR_MISALIGNED_ADDRESS",
        "trapped_stores": "CUDA_ERROR_",  # a trap: the driver names it launch failed or illegal instruction
        "hung_stores": "did not finish within 20 s",
    }
    for claim_id, error in expected_errors.items():
        assert verdicts[claim_id].verdict == Verdict.ERROR
        assert error in (verdicts[claim_id].reason or ""), (claim_id, verdicts[claim_id].reason)
    ours = f"ncuverify.runner {tmp_path}"
    leftover = subprocess.run(["pgrep", "-f", ours], capture_output=True, text=True)
    assert leftover.stdout.strip() == "", "a runner outlived its run"


def test_every_file_of_a_run_is_profiled_in_one_ncu_process(gpu_environment, tmp_path: Path):
    files = [DATA / "sample.yaml", DATA / "static.yaml"]
    results = check_files(files, CheckOptions(save_profile=tmp_path), gpu_environment)
    assert all(c.verdict == Verdict.PASSED for r in results for c in r.claims)
    runs = recording.load(tmp_path, run_keys(files)).runs
    cases = {s.case.split("::")[0] for run in runs for s in run.cases}
    assert cases == {"tests/data/sample.yaml", "tests/data/static.yaml"}
    assert len(runs) <= 2, "one process per group of metrics, not one per file or case"


def test_a_deliberately_uncoalesced_edit_fails_with_the_offending_line(gpu_environment, tmp_path: Path):
    (tmp_path / ".ncuverify-root").touch()
    kernel = tmp_path / "copy.cu"
    kernel.write_text(
        'extern "C" __global__ void copy(const float* in, float* out) {\n'
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    out[t] = in[t];\n"
        "}\n"
    )
    spec = tmp_path / "copy.yaml"
    spec.write_text(
        "arch: sm_90\n"
        "kernels: {copy: {file: copy.cu, entry: copy}}\n"
        "cases:\n"
        "  copy: {kernel: copy, grid: 1024, block: 256, args: [{buffer: float32, count: 8388608}, {buffer: float32, count: 262144}]}\n"
        "claims:\n"
        "  - id: copy_is_coalesced\n"
        "    case: copy\n"
        "    metric: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\n"
        "    expect: {equals: 4}\n"
        "    cite: {document: copy.txt, section: '1', figure: a warp of contiguous floats touches 4 sectors}\n"
    )
    command = [sys.executable, "-m", "ncuverify", "check", str(spec)]
    before = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert before.returncode == ExitCode.OK, before.stdout + before.stderr
    kernel.write_text(kernel.read_text().replace("out[t] = in[t];", "out[t] = in[t * 32];"))
    after = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    print(after.stdout)
    assert after.returncode == ExitCode.CLAIM_FAILED, after.stdout + after.stderr
    assert "copy_is_coalesced: what ncu says about copy" in after.stdout
    assert re.search(r"copy\.cu:3 +out\[t\] = in\[t \* 32\];", after.stdout), "the offending line"
    assert "UncoalescedGlobalAccess" in after.stdout


def test_failed_memory_claims_are_explained_and_the_explanation_replays(gpu_environment, tmp_path: Path):
    live = check_file(DATA / "explain.yaml", CheckOptions(save_profile=tmp_path), gpu_environment)
    assert {r.claim.id: r.verdict for r in live.claims} == {
        "gather_is_coalesced": Verdict.FAILED,
        "tile_is_conflict_free": Verdict.FAILED,
        "gather_one_request_per_warp": Verdict.PASSED,
    }
    shared = live.explanations["tile_is_conflict_free"]
    assert shared.topic == "shared" and shared.lines[0].text.startswith(
        "out[t] = tile[threadIdx.x][threadIdx.y];"
    )
    assert any(rule.rule == "UncoalescedSharedAccess" for rule in shared.rules)
    gather = live.explanations["gather_is_coalesced"]
    assert gather.lines[0].line == 6 and gather.lines[0].text.startswith("out[t] = in[t * 32];")
    replayed = check_file(DATA / "explain.yaml", CheckOptions(from_profile=tmp_path), NO_GPU)
    assert replayed.explanations == live.explanations


def test_ncu_reports_are_kept_when_asked(gpu_environment, tmp_path: Path):
    check_file(DATA / "sample.yaml", CheckOptions(save_profile=tmp_path, keep_report=True), gpu_environment)
    reports = sorted(tmp_path.glob("runs/*/*/profile.ncu-rep"))
    assert reports, "no .ncu-rep kept"
    imported = subprocess.run(
        ["ncu", "--import", str(reports[0]), "--csv", "--page", "raw", "--print-units", "base"],
        capture_output=True,
        text=True,
    )
    table = parse_csv(imported.stdout)
    logged = parse_csv((tmp_path / "ncu.log").read_text())
    metric = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert sorted(table[table["metric"] == metric]["value"]) == sorted(
        logged[logged["metric"] == metric]["value"]
    )


def test_two_gpus_give_the_verdicts_of_one(gpu_environment, tmp_path: Path):
    if gpu_environment.gpu_count < 2:
        pytest.skip(f"needs two GPUs; this machine has {gpu_environment.gpu_count}")
    files = [DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml"]
    one = check_files(files, CheckOptions(gpus=(0,)), gpu_environment)
    two = check_files(files, CheckOptions(gpus=(0, 1), save_profile=tmp_path), gpu_environment)
    assert [[(c.claim.id, c.verdict) for c in r.claims] for r in two] == [
        [(c.claim.id, c.verdict) for c in r.claims] for r in one
    ]
    assert len(list(tmp_path.glob("runs/*/0/plan.json"))) >= 2, "both GPUs had work"


def test_two_ncu_processes_at_once_give_the_verdicts_of_one_at_a_time(gpu_environment, tmp_path: Path):
    """Kernels that time themselves (latency.yaml) and kernels that do not, in several processes."""
    files = [ROOT / "expectations" / "latency.yaml", ROOT / "expectations" / "vector_add.yaml"]

    def checked(per_gpu: int) -> tuple[list, list[dict]]:
        saved = tmp_path / str(per_gpu)
        ncu = NcuOptions(processes_per_gpu=per_gpu)
        results = check_files(files, CheckOptions(ncu=ncu, save_profile=saved), gpu_environment)
        plans = [json.loads(p.read_text()) for p in sorted(saved.glob("runs/*/0/plan.json"))]
        return [[(c.claim.id, c.verdict) for c in r.claims] for r in results], plans

    (at_once, gated), (one_at_a_time, plain) = checked(2), checked(1)
    assert at_once == one_at_a_time
    assert len(gated) >= 2 and all(plan["gate"] for plan in gated), "every process had a gate"
    assert not any(plan["gate"] for plan in plain)


def test_a_whole_program_compiled_by_nvcc_is_profiled(gpu_environment):
    """examples/whole-program: nvcc's cubin loaded by its mangled symbols, its profiler claims measured."""
    completed = run_check(str(ROOT / "examples" / "whole-program" / "transpose.yaml"))
    assert completed.returncode == ExitCode.OK, completed.stdout + completed.stderr
    assert "10 passed, 0 failed" in completed.stdout


def test_the_toolkit_chosen_is_recorded_and_a_baseline_of_another_says_so(gpu_environment, tmp_path: Path):
    """examples/whole-program built by the machine's CUDA toolkit (--cuda-home /usr/local/cuda): its nvcc
    is in the JSON provenance, and a run compared with a baseline the wheels' nvcc built says so (one
    that toolkit built, where the machine has no nvcc wheel, says nothing)."""
    toolkit = Path("/usr/local/cuda")
    if not (toolkit / "bin" / "nvcc").is_file():
        pytest.skip("needs a CUDA toolkit in /usr/local/cuda")
    example = str(ROOT / "examples" / "whole-program" / "transpose.yaml")
    saved = subprocess.run(
        [sys.executable, "-m", "ncuverify", "baseline", "save", str(tmp_path / "base.json"), example],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "CUDA_HOME": "", "CUDA_PATH": ""},  # the CUDA wheels' nvcc
    )
    assert saved.returncode == ExitCode.OK, saved.stdout + saved.stderr
    compiled_with = json.loads((tmp_path / "base.json").read_text())["compiled_with"]
    # where no CUDA wheels bring an nvcc, the baseline was built by the same toolkit: nothing to say
    same = f" at {os.path.realpath(toolkit)}" in json.dumps(compiled_with)
    chosen = run_check(
        example,
        "--cuda-home",
        str(toolkit),
        "--json",
        str(tmp_path / "t.json"),
        "--baseline",
        str(tmp_path / "base.json"),
    )
    provenance = json.loads((tmp_path / "t.json").read_text())["files"][0]["provenance"]
    # every kernel nvcc built, by the toolkit chosen (a regression against the wheels' nvcc may exit 1)
    assert provenance["nvcc"] and all(
        which.startswith("nvcc ") and which.endswith(f" at {os.path.realpath(toolkit)}")
        for which in provenance["nvcc"].values()
    ), chosen.stdout + chosen.stderr
    noted = "note: the baseline's kernels were compiled with nvcc" in chosen.stdout + chosen.stderr
    assert noted != same, (compiled_with, chosen.stdout + chosen.stderr)


def test_a_profiler_claim_on_a_kernel_loaded_from_an_nvcc_cubin(gpu_environment, tmp_path: Path):
    """A `binary:` kernel is launched from the cubin nvcc built and measured like any other."""
    from artifact_builds import build_artifact

    (tmp_path / ".ncuverify-root").touch()
    build_artifact("kernels.cubin", tmp_path)  # sm_90: the H200's
    content = {
        "kernels": {"copy": {"binary": "kernels.cubin", "entry": "ns::copy"}},
        "cases": {
            "c": {
                "kernel": "copy",
                "grid": 64,
                "block": 256,
                "args": [
                    {"buffer": "float32", "count": 16384},
                    {"buffer": "float32", "count": 16384},
                    {"int32": 16384},
                ],
            }
        },
        "claims": [
            {
                "id": "copy_is_coalesced",
                "case": "c",
                "metric": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                "expect": {"equals": 4},
                "cite": {
                    "document": "d.txt",
                    "section": "1",
                    "figure": "contiguous floats: 4 sectors per request",
                },
            }
        ],
    }
    path = tmp_path / "binary.yaml"
    path.write_text(yaml.safe_dump(content))
    result = check_file(path, CheckOptions(), gpu_environment)
    assert [(r.claim.id, r.verdict, r.measured) for r in result.claims] == [
        ("copy_is_coalesced", Verdict.PASSED, 4)
    ]


PROGRAMS = ROOT / "examples" / "programs"


def _program_result(name: str, *needed: str, explain: bool = False) -> FileResult:
    """The example checked with --allow-programs; skipped where a module it runs is missing."""
    for module in needed:
        probe = subprocess.run(["python3", "-c", f"import {module}"], capture_output=True)
        if probe.returncode != 0:
            pytest.skip(f"{name} needs {module}, which python3 cannot import here")
    result = check_file(
        PROGRAMS / name, CheckOptions(allow_programs=True, explain=explain), Environment.probe("ncu")
    )
    assert result.input_error is None and result.internal_error is None, result.input_error
    return result


def _program_check(name: str, tmp_path: Path, *needed: str) -> dict[str, ClaimResult]:
    """The example's claims, judged, by id."""
    return {r.claim.id: r for r in _program_result(name, *needed).claims}


def test_program_cases_of_torch_triton_cupy_and_an_nvcc_binary(gpu_environment, tmp_path: Path):
    for module in ("torch", "triton", "cupy"):
        if subprocess.run(["python3", "-c", f"import {module}"], capture_output=True).returncode != 0:
            pytest.skip(f"the program examples need {module}, which python3 cannot import here")
    built = subprocess.run(["make", "-C", str(PROGRAMS)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    claims = _program_check("programs.yaml", tmp_path)
    # contiguous fp32 reads coalesce: 4 sectors a request for 4-byte loads, 16 for 16-byte vectors; the
    # matmul reads its inputs about once from DRAM and runs on tensor cores
    assert all(r.verdict is Verdict.PASSED for r in claims.values()), {k: r.reason for k, r in claims.items()}


def test_a_program_case_s_setsid_daemon_is_gone_once_check_returns(gpu_environment, tmp_path: Path):
    """examples/programs' vecadd, made to start a daemon in a session of its own first: its claim is
    measured, and once check returns the daemon is gone (ncu profiles the application only, so the
    daemon is none of its)."""
    from artifact_builds import _nvcc
    from daemons import assert_none_running

    nvcc = _nvcc()
    if nvcc is None or shutil.which("g++") is None:
        pytest.skip("needs nvcc (the CUDA wheels' or a toolkit's) and g++ to build the program")
    (tmp_path / ".ncuverify-root").touch()
    daemon = 'std::system("setsid sleep 1000 > /dev/null 2>&1 < /dev/null & echo $! > daemon.pid")'
    source = (PROGRAMS / "vecadd.cu").read_text()
    started = source.replace("int main() {", f"int main() {{\n    if ({daemon} != 0) return 1;", 1)
    assert started != source
    (tmp_path / "vecadd.cu").write_text("#include <cstdlib>\n" + started)
    arch = f"-arch={gpu_environment.gpu.arch}"
    subprocess.run([nvcc, "-O2", arch, "-o", "vecadd", "vecadd.cu"], cwd=tmp_path, check=True, timeout=300)
    content = {
        "cases": {
            "vecadd": {
                "program": {"command": ["./vecadd"], "timeout_s": 120},
                "kernel": "^vecadd",
                "target_processes": "application-only",
            }
        },
        "claims": [
            {
                "id": "vecadd_four_sectors",
                "case": "vecadd",
                "metric": "global_ld_sectors_per_request",
                "expect": {"equals": 4},
                "cite": {"document": "d.txt", "section": "1", "figure": "128 B per warp: 4 sectors"},
            }
        ],
    }
    path = tmp_path / "daemon.yaml"
    path.write_text(yaml.safe_dump(content))
    result = check_file(path, CheckOptions(allow_programs=True), gpu_environment)
    pid = int((tmp_path / "daemon.pid").read_text())
    assert_none_running([pid])
    assert [(r.claim.id, r.verdict) for r in result.claims] == [("vecadd_four_sectors", Verdict.PASSED)], [
        r.reason for r in result.claims
    ]


# Figures a kernel gives the same every launch (its time and DRAM traffic vary a little between runs).
# What a launch gives alike in any process: its configuration, and its L1 totals (a per-SM .max or .min
# depends on where the blocks ran; a fact ncu reports as n/a is NaN, equal to nothing).
_STEADY = re.compile(r"^(launch__|l1tex__t_(sectors|requests)\w*\.sum$)")


def test_program_cases_on_one_command_share_one_ncu_process_and_get_their_own_figures(
    gpu_environment, tmp_path: Path, monkeypatch
):
    """examples/programs/ranges.yaml: four cases of one PyTorch script, each its NVTX range's launch,
    in one ncu process, and in one process each (as before cases shared one): the same figures."""
    if subprocess.run(["python3", "-c", "import torch"], capture_output=True).returncode != 0:
        pytest.skip("ranges.yaml needs torch, which python3 cannot import here")
    results = {}
    for processes in ("shared", "each"):
        monkeypatch.setenv("NCUVERIFY_PROGRAM_PROCESSES", processes)
        saved = tmp_path / processes
        options = CheckOptions(allow_programs=True, save_profile=saved)
        results[processes] = check_file(PROGRAMS / "ranges.yaml", options, gpu_environment)
        assert results[processes].input_error is None and results[processes].internal_error is None
        commands = json.loads((saved / recording.COMMANDS).read_text())
        assert len(commands) == (1 if processes == "shared" else 4), commands
    shared, each = (results[p] for p in ("shared", "each"))
    assert shared.measurements is not None and each.measurements is not None
    assert [c.verdict for c in shared.claims] == [c.verdict for c in each.claims]
    steady = {
        (case, metric): value
        for case, _, metric, value, _ in each.measurements.rows
        if _STEADY.match(metric) and not math.isnan(value)
    }
    assert (
        steady
        and {
            (case, metric): value
            for case, _, metric, value, _ in shared.measurements.rows
            if (case, metric) in steady
        }
        == steady
    )


def test_a_strided_torch_copy_fails_its_coalescing_claim_with_ncus_numbers(gpu_environment, tmp_path: Path):
    result = _program_result("strided.yaml", "torch", explain=True)
    claim = next(r for r in result.claims if r.claim.id == "strided_copy_coalesced")
    # every lane reads a float 32 bytes from its neighbour's: its own sector, 32 a request
    assert claim.verdict is Verdict.FAILED and claim.measured == 32, claim.reason
    # the program ran again under ncu for that launch: ncu's rule on uncoalesced loads fired
    assert "strided_copy_coalesced" in result.explanations, result.warnings
    explanation = result.explanations["strided_copy_coalesced"]
    assert explanation.topic == "global", explanation
    assert "UncoalescedGlobalAccess" in {rule.rule for rule in explanation.rules}, explanation


def test_a_program_case_s_recording_is_refused_once_its_program_changed(gpu_environment, tmp_path: Path):
    """examples/programs' vecadd, built in a project of its own and profiled with --save-profile: the
    recording keeps the sha256 of the binary its command runs. The same binary replays; once it is
    edited, the replay is refused, exit 2, naming the file."""
    (tmp_path / ".ncuverify-root").touch()
    for name in ("vecadd.cu", "Makefile"):
        shutil.copy(PROGRAMS / name, tmp_path / name)
    built = subprocess.run(["make", "-C", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    path = tmp_path / "vecadd.yaml"
    claim = {"id": "vecadd_four_sectors", "case": "vecadd", "metric": "global_ld_sectors_per_request"}
    cite = {"document": "cuda-best-practices", "section": "9.2.1", "figure": "128 B per warp: 4 sectors"}
    case = {"program": {"command": ["./vecadd"], "timeout_s": 120}, "kernel": "^vecadd"}
    content = {"cases": {"vecadd": case}, "claims": [{**claim, "expect": {"equals": 4}, "cite": cite}]}
    path.write_text(yaml.safe_dump(content))
    saved = tmp_path / "saved"
    live = run_check("--allow-programs", "--save-profile", str(saved), str(path))
    assert live.returncode == ExitCode.OK, live.stdout + live.stderr
    binary = hashlib.sha256((tmp_path / "vecadd").read_bytes()).hexdigest()
    provenance = json.loads((saved / "provenance.json").read_text())
    assert provenance["program_files"] == {"vecadd.yaml::vecadd": {"vecadd": binary}}
    replayed = run_check("--from-profile", str(saved), str(path))
    assert replayed.returncode == ExitCode.OK, replayed.stdout + replayed.stderr
    with open(tmp_path / "vecadd", "ab") as edited:
        edited.write(b"\0")
    refused = run_check("--from-profile", str(saved), str(path))
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stdout + refused.stderr
    assert (
        f"{saved}/provenance.json: program file vecadd of case vecadd changed since it was recorded"
        in " ".join(refused.stdout.split())
    )


def test_a_sweep_holds_its_sectors_per_request_at_every_size(gpu_environment, tmp_path: Path):
    """examples/sweep: three sizes of one claim, each judged on its own case. Sectors per request are L1
    tag lookups, counted whether they hit or miss, so they are exact on sm_90 whatever the size: a warp of
    consecutive 4-byte loads touches one 128-byte line, 4 sectors; at a stride of 32 floats (128 bytes)
    every lane is in a sector of its own, 32; and the control (the strided case of the same n) fails 4."""
    results = tmp_path / "sweep.json"
    completed = run_check("--json", str(results), str(ROOT / "examples" / "sweep" / "copy.yaml"))
    assert completed.returncode == ExitCode.OK, completed.stdout + completed.stderr
    assert "9 passed, 0 failed, 0 errors, 0 skipped" in completed.stdout
    claims = {c["id"]: c for f in json.loads(results.read_text())["files"] for c in f["claims"]}
    for n in (2**20, 2**22, 2**24):
        coalesced = claims[f"coalesced_sectors__n_{n}"]
        assert (coalesced["case"], coalesced["measured"]) == (f"coalesced__n_{n}", 4)
        assert (coalesced["control"], coalesced["control_measured"]) == (f"strided__n_{n}", 32)
        assert claims[f"strided_sectors__n_{n}"]["measured"] == 32
        assert claims[f"stride_costs_8x_the_sectors__n_{n}"]["measured"] == 8


def test_a_two_kernel_reduction_runs_as_one_case_of_two_steps(gpu_environment, tmp_path: Path):
    """examples/sequence: block_sums writes a partial sum per block, final_sum reads them and writes the
    total; the steps share the buffer partial. The input is all ones, so the partials are 256 each and
    the total is n exactly: the second step read what the first wrote. Each step's DRAM reads are what
    it loads once after ncu's cache flush: n floats for the first, one float a block for the second
    (and a few KB that every launch fetches after the flush)."""
    results, saved = tmp_path / "sequence.json", tmp_path / "saved"
    example = str(ROOT / "examples" / "sequence" / "reduce.yaml")
    completed = run_check("--json", str(results), "--save-profile", str(saved), example)
    assert completed.returncode == ExitCode.OK, completed.stdout + completed.stderr
    assert "14 passed, 0 failed, 0 errors, 0 skipped" in completed.stdout
    claims = {c["id"]: c for f in json.loads(results.read_text())["files"] for c in f["claims"]}
    for n in (2**20, 2**22):
        assert claims[f"partials_are_block_sums__n_{n}"]["measured"] == 256
        total = claims[f"total_counts_every_element__n_{n}"]
        assert (total["case"], total["measured"]) == (f"reduce__n_{n}#2", 1)
        assert abs(claims[f"first_step_reads_its_input_once__n_{n}"]["measured"] - 1) < 0.05
    # what final_sum reads beyond the partials is a fixed cost of the launch, the same at both sizes
    beyond = [claims[f"second_step_reads_the_partials_once__n_{n}"]["measured"] for n in (2**20, 2**22)]
    assert abs(beyond[0] - beyond[1]) < 1024, beyond
    replayed = run_check("--from-profile", str(saved), example)
    assert replayed.returncode == ExitCode.OK and "14 passed, 0 failed" in replayed.stdout, replayed.stdout


def test_doctor_finds_everything_a_check_needs_and_profiles_a_trial(gpu_environment):
    completed = subprocess.run(
        [sys.executable, "-m", "ncuverify", "doctor"], capture_output=True, text=True, cwd=ROOT
    )
    assert completed.returncode == ExitCode.OK, completed.stdout + completed.stderr
    assert re.search(r"^ok      GPU        0: .+ \(sm_\d+\)$", completed.stdout, re.MULTILINE)
    assert "ok      trial      one kernel profiled, its counters read" in completed.stdout
    assert completed.stdout.splitlines()[-1] == "doctor: check can profile here"


def test_xdist_workers_profile_and_give_the_verdicts_of_one_process(gpu_environment, tmp_path: Path):
    """Two pytest-xdist workers, each checking its files on its own GPU (both on GPU 0 here, where there
    is one), judge every claim as one process does."""
    pytest.importorskip("xdist", reason="needs pytest-xdist")
    from importlib.metadata import entry_points

    files = [str(DATA / "sample.yaml"), str(DATA / "static.yaml")]
    command = [sys.executable, "-m", "pytest", "--ncuverify", *files, "-rA", "-p", "no:cacheprovider"]
    if not any(e.value.startswith("ncuverify") for e in entry_points(group="pytest11")):
        command += ["-p", "ncuverify.pytest_plugin"]  # a checkout, not installed: loaded by name

    def outcomes(*more: str) -> dict[str, str]:
        done = subprocess.run([*command, *more], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        words = [line.split(" ") for line in done.stdout.splitlines()]
        return {w[1]: w[0] for w in words if len(w) > 1 and w[0] in ("PASSED", "FAILED") and "::" in w[1]}

    alone = outcomes()
    assert len(alone) >= 14 and outcomes("-n", "2", "--dist", "loadfile") == alone


def test_live_shards_merge_into_the_verdicts_of_one_run_and_an_edit_is_refused(
    gpu_environment, tmp_path: Path
):
    # Every claim of the shards is judged again from their figures on merge: a live run's must agree.
    files = [str(DATA / "sample.yaml"), str(DATA / "static.yaml")]
    whole = run_check("--json", str(tmp_path / "whole.json"), *files)
    assert whole.returncode == ExitCode.OK, whole.stdout + whole.stderr
    parts = [str(tmp_path / f"{k}.json") for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        shard = run_check("--shard", f"{k}/2", "--json", part, *files)
        assert shard.returncode == ExitCode.OK, shard.stdout + shard.stderr
    merge = [sys.executable, "-m", "ncuverify", "merge", *parts]
    merged = subprocess.run(merge, capture_output=True, text=True, cwd=ROOT)
    assert merged.returncode == ExitCode.OK, merged.stdout + merged.stderr
    assert "warning" not in merged.stdout
    # A profiler figure edited under the verdict that rests on it: refused, in one line.
    for part in parts:
        document = json.loads(Path(part).read_text())
        (sample,) = [f for f in document["files"] if f["path"].endswith("sample.yaml")]
        if any(c["id"] == "one_request_per_warp" for c in sample["claims"]):
            metric = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
            for row in sample["measurements"]:
                if (row["case"], row["metric"]) == ("stride1", metric):
                    row["value"] = 4096.0
            Path(part).write_text(json.dumps(document))
            refused = subprocess.run(merge, capture_output=True, text=True, cwd=ROOT)
            assert refused.returncode == ExitCode.BAD_INPUT, refused.stdout + refused.stderr
            assert refused.stdout.count("\n") == 1 and "'passed' in the shard" in refused.stdout


def test_each_live_shard_profiles_the_cases_its_dry_run_planned_and_no_case_twice(
    gpu_environment, tmp_path: Path
):
    # coalescing.yaml's 18 cases fall into 11 groups, the sample's into 2: three shards of them.
    files = [str(ROOT / "expectations" / "coalescing.yaml"), str(DATA / "sample.yaml")]
    profiled: list[tuple[str, str]] = []
    for k in (1, 2, 3):
        plan_path, result_path = tmp_path / f"plan-{k}.json", tmp_path / f"{k}.json"
        planned = run_check("--dry-run", "--shard", f"{k}/3", "--json", str(plan_path), *files)
        assert planned.returncode == ExitCode.OK, planned.stdout + planned.stderr
        ran = run_check("--no-explain", "--shard", f"{k}/3", "--json", str(result_path), *files)
        assert ran.returncode in (ExitCode.OK, ExitCode.CLAIM_FAILED), ran.stdout + ran.stderr
        plan = json.loads(plan_path.read_text())
        measured = {
            (document["key"], row["case"])
            for document in json.loads(result_path.read_text())["files"]
            for row in document["measurements"] or []
            if not row["metric"].startswith(("static__", "sass__", "buffer__"))
        }
        assert measured == {(case["file"], case["case"]) for case in plan["profile"]}
        profiled += sorted(measured)
    assert len(profiled) == len(set(profiled))
