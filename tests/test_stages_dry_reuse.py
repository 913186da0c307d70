"""check --dry-run --reuse: the plan knows which cases the recording gives (the run's own decision, on
the keys the run would compute) and plans only the others, with no GPU for the recording's GPU. Built on
the committed H200 recording with the keys a live run on its GPU would have written; and with the
stand-in ncu, whose reusing run profiles exactly what the plan said."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, EXPECTATIONS, FAKE_GPU, FAKE_NCU, NO_GPU, ROOT, fake_profiled
from keyed_recordings import keyed, unkeyed
from typer.testing import CliRunner

from ncuverify.build import nvrtc_version
from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.names import QualifiedCase
from ncuverify.options import CheckOptions
from ncuverify.pipeline import plan_files
from ncuverify.profile import NcuOptions
from ncuverify.run_plan import RunPlan

SUITE = sorted(EXPECTATIONS.glob("*.yaml"))
ON_THE_H200 = (
    "no GPU here: planning for the recording's NVIDIA H200 (sm_90, driver 580.159.04, ncu 2025.3.1.0)"
)
CHANGED = "changed since the recording (its code, launch, metrics or the GPU and tools)"
TEMPLATE_TILE = "__shared__ float tile[TILE][TILE + 1];"  # of transpose<32, 8> in kernels/transpose.cu
ADDED = "C[i] = A[i] + B[i];"  # of vecAddKernel, then of vecAddKernelGridStride, in kernels/vector_add.cu
# the cases that launch vecAddKernel of kernels/vector_add.cu (coalescing.yaml's is coalescing.cu's own)
VECADD_CASES = ["v1_verify", "v1", "v1_odd", "v1_big"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, set[tuple[str, str]]]:
    """The H200 recording keyed for the whole suite, and every case it keeps a key of."""
    folder, _, _, today = keyed(tmp_path_factory.mktemp("keyed"), SUITE)
    return folder, {_pair(name) for name in today}


def _pair(name: str) -> tuple[str, str]:
    identity = QualifiedCase.parse(name)
    return identity.file or "", str(identity.in_file(None))


def planned(paths: list[Path], reuse: Path) -> RunPlan:
    plan = plan_files(paths, CheckOptions(cache=COMPILE_CACHE, reuse=reuse, explain=False), NO_GPU)
    assert plan.failed == (), [r.input_error or r.internal_error for r in plan.failed]
    return plan


def copied_suite(tmp_path: Path) -> Path:
    """The suite and its kernels in a project of their own, to edit."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".ncuverify-root").write_text("")
    shutil.copytree(EXPECTATIONS, project / "expectations")
    shutil.copytree(ROOT / "kernels", project / "kernels")
    return project


def profiled(plan: RunPlan) -> set[tuple[str, str]]:
    return {(case.file, case.case) for case in plan.profile}


def test_the_suite_as_committed_plans_nothing_to_profile_for_the_recordings_gpu(no_gpu, recorded, tmp_path):
    folder, keyed_cases = recorded
    out = tmp_path / "plan.json"
    shown = CliRunner().invoke(
        app, ["check", "--dry-run", "--reuse", str(folder), "--json", str(out), str(EXPECTATIONS)]
    )
    assert shown.exit_code == ExitCode.OK, shown.output
    plan = json.loads(out.read_text())
    assert plan["profile"] == [] and plan["processes"] == []
    assert {(r["file"], r["case"]) for r in plan["reuse"]} == keyed_cases
    assert plan["notes"] == [ON_THE_H200]
    assert shown.output.splitlines()[:2] == ["dry run: 12 files, nothing profiled", ON_THE_H200]
    assert shown.output.splitlines()[3:] == [
        f"reuse: {len(keyed_cases)} recorded cases",
        "profile: nothing (every case reused), no ncu process",
    ]
    # what a dry run without --reuse would profile is what this one reuses
    every = json.loads(_plain_plan(tmp_path).read_text())["profile"]
    assert {(c["file"], c["case"]) for c in every} == keyed_cases


def _plain_plan(tmp_path: Path) -> Path:
    out = tmp_path / "plain.json"
    result = CliRunner().invoke(app, ["check", "--dry-run", "--json", str(out), str(EXPECTATIONS)])
    assert result.exit_code == ExitCode.OK, result.output
    return out


def test_a_comment_only_edit_of_a_kernel_plans_nothing(recorded, tmp_path):
    folder, keyed_cases = recorded
    project = copied_suite(tmp_path)
    source = project / "kernels" / "transpose.cu"
    source.write_text("// every line below moves down by two\n//\n" + source.read_text())
    plan = planned(sorted((project / "expectations").glob("*.yaml")), folder)
    assert plan.profile == () and plan.processes == ()
    assert {(r.file, r.case) for r in plan.reuse} == keyed_cases


def edited_plan(recorded: Path, tmp_path: Path, kernels: str, old: str, new: str) -> RunPlan:
    """The plan of the suite with one edit of one kernel file (its first `old`, made `new`)."""
    project = copied_suite(tmp_path)
    source = project / "kernels" / kernels
    assert old in source.read_text()
    source.write_text(source.read_text().replace(old, new, 1))
    return planned(sorted((project / "expectations").glob("*.yaml")), recorded)


def test_a_real_edit_of_one_kernel_plans_only_the_cases_that_launch_it(recorded, tmp_path):
    folder, keyed_cases = recorded
    plan = edited_plan(folder, tmp_path, "vector_add.cu", ADDED, ADDED.replace(";", " + 0.0f;"))
    # every kernel of the file is one cubin (one NVRTC program): its four other kernels are reused
    assert profiled(plan) == {("expectations/vector_add.yaml", case) for case in VECADD_CASES}
    assert {case.why for case in plan.profile} == {CHANGED}
    assert {(r.file, r.case) for r in plan.reuse} == keyed_cases - profiled(plan)
    in_processes = {(file, case.removesuffix(" (repeats)")) for p in plan.processes for file, case in p.cases}
    assert in_processes == profiled(plan)


def test_a_bigger_shared_array_of_a_template_plans_only_its_case(recorded, tmp_path):
    folder, keyed_cases = recorded
    plan = edited_plan(folder, tmp_path, "transpose.cu", TEMPLATE_TILE, TEMPLATE_TILE.replace("+ 1", "+ 2"))
    assert profiled(plan) == {("expectations/transpose.yaml", "template_padded")}
    assert {(r.file, r.case) for r in plan.reuse} == keyed_cases - profiled(plan)


def test_a_recording_without_keys_plans_every_case_and_says_why(tmp_path):
    without = planned([EXPECTATIONS / "transpose.yaml"], unkeyed(tmp_path))
    assert without.reuse == () and len(without.profile) > 0 and without.processes
    assert without.notes[0] == ON_THE_H200
    assert "keeps no measurement keys" in without.notes[1] and without.notes[1].endswith(
        "every case is profiled"
    )


def test_with_a_gpu_the_plan_is_what_the_reusing_run_profiles(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "full.jsonl"))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".ncuverify-root").write_text("")
    path = tmp_path / "p" / "sample.yaml"
    shutil.copy(DATA / "sample.yaml", path)
    fake_profiled([path], tmp_path / "full")
    options = CheckOptions(
        cache=COMPILE_CACHE, ncu=NcuOptions(executable=str(FAKE_NCU)), reuse=tmp_path / "full", explain=False
    )
    unchanged = plan_files([path], options, FAKE_GPU)
    assert unchanged.notes == ()
    assert unchanged.profile == () and unchanged.processes == ()
    assert {r.case for r in unchanged.reuse} == {"misaligned", "scale_2d", "stride1", "stride32"}
    path.write_text(path.read_text().replace("    grid: [256, 4]\n", "    grid: [128, 4]\n"))
    changed = plan_files([path], options, FAKE_GPU)
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    fake_profiled([path], tmp_path / "again", reuse=tmp_path / "full")
    notes = (tmp_path / "notes.jsonl").read_text().splitlines()
    ran = {case for line in notes for case in json.loads(line)["cases"]}
    assert (
        {str(QualifiedCase.of(c.file, c.case)) for c in changed.profile} == ran == {"sample.yaml::scale_2d"}
    )
    assert {r.case for r in changed.reuse} == {"misaligned", "stride1", "stride32"}
    assert [case.why for case in changed.profile] == [CHANGED]


def test_the_committed_recording_once_it_keeps_keys_plans_nothing_for_the_suite():
    recorded = json.loads((ROOT / "recordings" / "h200" / "provenance.json").read_text())
    if not recorded.get("measurement_keys"):
        pytest.skip("recordings/h200 keeps no measurement keys yet: it is re-made on an H200 to hold them")
    here = ".".join(map(str, nvrtc_version()))
    if recorded["nvrtc_version"] != here:
        # a key holds the cubin's code: another NVRTC makes other cubins, and reuses nothing, as it must
        pytest.skip(
            f"recordings/h200's kernels were compiled by NVRTC {recorded['nvrtc_version']}, these by {here}"
        )
    plan = planned(SUITE, ROOT / "recordings" / "h200")
    assert plan.profile == () and plan.processes == ()
    assert plan.notes[0].startswith("no GPU here: planning for the recording's NVIDIA H200 (sm_90, ")
