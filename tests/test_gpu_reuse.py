"""check --reuse on a real GPU under Nsight Compute: a run after a kernel changed profiles that kernel's
cases alone (and not those of the other kernels of its .cu file, one cubin) and judges as a whole run
does; after a comment-only edit it profiles nothing; its dry run plans what it then profiles. Skipped,
with the reason, where there is no GPU."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, EXPECTATIONS, NO_GPU, ROOT

from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files, plan_files
from ncuverify.profile.session import RUNS
from ncuverify.results import FileResult

pytestmark = pytest.mark.gpu

SCALE = "if (i < n) out[i] = factor * in[i];"
CASES = ["misaligned", "scale_2d", "stride1", "stride32"]


def project(tmp_path: Path) -> Path:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".ncuverify-root").write_text("")
    path = tmp_path / "p" / "sample.yaml"
    shutil.copy(DATA / "sample.yaml", path)
    assert SCALE in path.read_text()
    return path


def checked(path: Path, environment, save: Path, reuse: Path | None = None) -> FileResult:
    options = CheckOptions(cache=COMPILE_CACHE, save_profile=save, reuse=reuse, explain=False)
    [result] = check_files([path], options, environment)
    assert result.input_error is None and result.internal_error is None, result
    return result


def profiled(save: Path) -> list[str]:
    """The cases the run's ncu processes profiled, as their plans name them."""
    plans = sorted((save / RUNS).rglob("plan.json")) if (save / RUNS).is_dir() else []
    names = [case["name"] for plan in plans for case in json.loads(plan.read_text())["cases"]]
    return sorted({name.partition("::")[2].removesuffix(" (repeats)") for name in names})


def verdicts(result: FileResult) -> list[tuple[str, str]]:
    return [(c.claim.id, c.verdict.value) for c in result.claims]


def test_a_changed_kernel_alone_is_profiled_again_and_the_verdicts_are_a_whole_run_s(
    gpu_environment, tmp_path
):
    path = project(tmp_path)
    checked(path, gpu_environment, tmp_path / "base")
    assert profiled(tmp_path / "base") == CASES
    # a real change: one more instruction (x + 0.0f is not x for x = -0.0f, so it stays)
    path.write_text(path.read_text().replace(SCALE, "if (i < n) out[i] = factor * in[i] + 0.0f;"))
    reusing = checked(path, gpu_environment, tmp_path / "reusing", reuse=tmp_path / "base")
    assert profiled(tmp_path / "reusing") == ["scale_2d"]
    assert reusing.reused_from is not None
    assert (list(reusing.reused_from.cases), reusing.reused_from.of) == (
        ["misaligned", "stride1", "stride32"],
        4,
    )
    whole = checked(path, gpu_environment, tmp_path / "whole")
    assert verdicts(reusing) == verdicts(whole)
    replay = CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path / "reusing", explain=False)
    [replayed] = check_files([path], replay, NO_GPU)
    assert replayed.input_error is None and not replayed.warnings
    assert verdicts(replayed) == verdicts(reusing)


def test_a_comment_only_edit_profiles_nothing(gpu_environment, tmp_path):
    path = project(tmp_path)
    base = checked(path, gpu_environment, tmp_path / "base")
    text = path.read_text().replace(SCALE, SCALE + "  // scaled by factor")
    path.write_text(
        text.replace(
            '      extern "C" __global__ void scale(',
            '      // scales in into out\n      extern "C" __global__ void scale(',
        )
    )
    again = checked(path, gpu_environment, tmp_path / "again", reuse=tmp_path / "base")
    assert profiled(tmp_path / "again") == []
    assert again.reused_from is not None and list(again.reused_from.cases) == CASES
    assert verdicts(again) == verdicts(base)


def test_the_dry_run_plans_on_this_gpu_what_the_reusing_run_then_profiles(gpu_environment, tmp_path):
    path = project(tmp_path)
    checked(path, gpu_environment, tmp_path / "base")
    path.write_text(path.read_text().replace(SCALE, "if (i < n) out[i] = factor * in[i] + 0.0f;"))
    options = CheckOptions(cache=COMPILE_CACHE, reuse=tmp_path / "base", explain=False)
    plan = plan_files([path], options, gpu_environment)
    assert plan.notes == (), "this GPU's identity, the recording read whole"
    assert sorted(r.case for r in plan.reuse) == ["misaligned", "stride1", "stride32"]
    assert [c.case for c in plan.profile] == ["scale_2d"]
    checked(path, gpu_environment, tmp_path / "reusing", reuse=tmp_path / "base")
    assert profiled(tmp_path / "reusing") == ["scale_2d"]


ADDED = "C[i] = A[i] + B[i];"  # of vecAddKernel, then of vecAddKernelGridStride, in kernels/vector_add.cu
VECADD_CASES = ["v1", "v1_big", "v1_odd", "v1_verify"]  # the cases of vector_add.yaml that launch it


def test_an_edit_of_one_kernel_of_a_cu_file_profiles_its_cases_alone(gpu_environment, tmp_path):
    project = tmp_path / "suite"
    (project / "expectations").mkdir(parents=True)
    (project / "kernels").mkdir()
    (project / ".ncuverify-root").write_text("")
    path = project / "expectations" / "vector_add.yaml"
    shutil.copy(EXPECTATIONS / "vector_add.yaml", path)
    source = project / "kernels" / "vector_add.cu"
    shutil.copy(ROOT / "kernels" / "vector_add.cu", source)
    checked(path, gpu_environment, tmp_path / "base")
    every = profiled(tmp_path / "base")
    assert set(VECADD_CASES) < set(every)
    source.write_text(source.read_text().replace(ADDED, ADDED.replace(";", " + 0.0f;"), 1))
    reusing = checked(path, gpu_environment, tmp_path / "reusing", reuse=tmp_path / "base")
    assert profiled(tmp_path / "reusing") == VECADD_CASES
    assert reusing.reused_from is not None
    assert sorted(reusing.reused_from.cases) == sorted(set(every) - set(VECADD_CASES))
