"""A shared library of the tests' own, gated end to end from the command line as a team's CI would:
tests/fixtures/library/libops.yaml holds claims over its 45 `ops::` kernels with an allow entry; the
check passes, `baseline save` records every kernel, and a rebuild from a changed source is caught.

The library is built once per module with nvcc from the CUDA wheels (and g++ behind it), as a build
system would, one object per source; in tests/fixtures/library:
  nvcc -c -Xcompiler -fPIC -arch=sm_90 gemm.cu -o gemm.o      (and elementwise.cu, reduce.cu)
  nvcc -shared -arch=sm_90 gemm.o elementwise.o reduce.o -o libops.so
The variants rebuild gemm.o from an edited gemm.cu: `unrolled` with `#define GEMM_ACC 32` (the
accumulator of ops::register_gemm unrolled 16 times more: 32 registers become 48), `fewer` without the
instantiation of ops::tiled_gemm<int, 32>.
"""

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from artifact_builds import _nvcc, shared_build
from cli_invoke import invoke_command

from ncuverify.errors import ExitCode

pytestmark = pytest.mark.slow  # the module builds a shared library of 45 kernels first

FIXTURES = Path(__file__).parent / "fixtures" / "library"
SOURCES = ("gemm.cu", "elementwise.cu", "reduce.cu")
EDITS = {
    "unrolled": ("#define GEMM_ACC 2\n", "#define GEMM_ACC 32\n"),
    "fewer": ("template __global__ void tiled_gemm<int, 32>(const int*, const int*, int*, int);\n", ""),
}
REGISTER_GEMM = "library[ops::register_gemm]"


def _run(nvcc: str, arguments: list[str], folder: Path) -> None:
    subprocess.run([nvcc, *arguments], cwd=folder, check=True, timeout=300, capture_output=True)


def _compiled(nvcc: str, source: str, folder: Path) -> str:
    target = source.replace(".cu", ".o")
    _run(nvcc, ["-c", "-Xcompiler", "-fPIC", "-arch=sm_90", source, "-o", target], folder)
    return target


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    """The library as committed (`as_is`) and each variant: name -> its libops.so."""
    nvcc = _nvcc()
    if nvcc is None or shutil.which("g++") is None:
        pytest.skip("needs nvcc (the CUDA wheels' or a toolkit's) and g++ to build the library")
    variants = {"as_is": ("", ""), **EDITS}

    def build(folder: Path) -> None:
        for source in SOURCES:
            shutil.copy(FIXTURES / source, folder / source)
        objects = [_compiled(nvcc, source, folder) for source in SOURCES]
        for variant, (before, after) in variants.items():
            text = (FIXTURES / "gemm.cu").read_text()
            assert before in text
            (folder / "gemm.cu").write_text(text.replace(before, after))
            if variant != "as_is":
                _compiled(nvcc, "gemm.cu", folder)
            (folder / variant).mkdir()
            _run(
                nvcc, ["-shared", "-arch=sm_90", *objects, "-o", str(folder / variant / "libops.so")], folder
            )

    # Built once per test run, whichever test processes run this module's tests; only read after.
    folder = shared_build(tmp_path_factory, "library", build)
    return {variant: folder / variant / "libops.so" for variant in variants}


@pytest.fixture
def project(tmp_path, monkeypatch, libraries) -> Callable[[str], None]:
    """A project holding libops.yaml; install(variant) puts that build of libops.so beside it."""
    (tmp_path / ".ncuverify-root").write_text("")
    shutil.copy(FIXTURES / "libops.yaml", tmp_path / "libops.yaml")
    monkeypatch.chdir(tmp_path)
    return lambda variant: shutil.copy(libraries[variant], tmp_path / "libops.so")


def _allowing(entry: dict[str, str]) -> None:
    content = yaml.safe_load(Path("libops.yaml").read_text())
    content["allow"].append(entry)
    Path("libops.yaml").write_text(yaml.safe_dump(content, sort_keys=False))


def test_the_library_passes_with_its_known_exception_shown_with_the_reason(no_gpu, project):
    project("as_is")
    checked = invoke_command("check", "libops.yaml")
    assert checked.exit_code == ExitCode.OK, checked.output
    assert "libops.yaml: 3 passed, 0 failed, 0 errors, 0 skipped" in checked.output
    assert "passed no_stack_frame: holds for 45 kernels (1 allowed), expected == 0" in checked.output
    assert (
        "static__stack_frame_bytes = 256 for ops::local_scan (allowed: its 64-entry array is indexed at"
        " run time, so it lives on the stack)"
    ) in checked.output
    assert "accepts nothing" not in checked.output


def test_the_baseline_records_every_kernel_of_the_set(no_gpu, project):
    project("as_is")
    saved = invoke_command("baseline", "save", "base.json", "libops.yaml")
    assert saved.exit_code == ExitCode.OK, saved.output
    assert "baseline written to base.json" in saved.output
    recorded = json.loads(Path("base.json").read_text())["files"]["libops.yaml"]
    kernels = [case for case in recorded if case.startswith("library[")]
    assert len(kernels) == 45 and "library[saxpy]" not in kernels
    assert recorded[REGISTER_GEMM]["static__registers_per_thread"] == 32


def _checked_after_rebuild(project: Callable[[str], None], variant: str):
    """check --baseline on the variant, against a baseline saved from the library as committed."""
    project("as_is")
    assert invoke_command("baseline", "save", "base.json", "libops.yaml").exit_code == ExitCode.OK
    project(variant)
    return invoke_command("check", "libops.yaml", "--baseline", "base.json")


def test_a_rebuild_that_grows_a_kernels_registers_fails_until_an_allow_entry_accepts_it(no_gpu, project):
    grown = _checked_after_rebuild(project, "unrolled")
    assert grown.exit_code == ExitCode.CLAIM_FAILED, grown.output
    assert "3 passed, 0 failed" in grown.output  # every claim holds: only the baseline catches it
    assert REGISTER_GEMM in grown.output and "static__registers_per_thread" in grown.output
    assert "baseline: 1 regressed" in grown.output
    reason = "32 partial sums in registers, on purpose"
    _allowing({"kernel": "ops::register_gemm", "metric": "static__registers_per_thread", "reason": reason})
    allowed = invoke_command("check", "libops.yaml", "--baseline", "base.json")
    assert allowed.exit_code == ExitCode.OK, allowed.output
    assert f"allowed: {reason}" in allowed.output
    assert "accepts nothing" not in allowed.output


def test_a_kernel_removed_since_the_baseline_is_reported_and_does_not_fail(no_gpu, project):
    checked = _checked_after_rebuild(project, "fewer")
    assert checked.exit_code == ExitCode.OK, checked.output
    assert "baseline: 1 kernels removed since (not a failure)" in checked.output
    assert "libops.yaml: library[ops::tiled_gemm<int, 32>]" in checked.output
    assert "holds for 44 kernels (1 allowed)" in checked.output


def _shards(project: Callable[[str], None], variants: tuple[str, str]) -> list[str]:
    """check --static-only --shard K/2 --json of libops.yaml, shard K on the library's variants[K-1]."""
    written = []
    for k, variant in enumerate(variants, 1):
        project(variant)
        checked = invoke_command(
            "check", "--static-only", "--shard", f"{k}/2", "--json", f"{k}.json", "libops.yaml"
        )
        assert checked.exit_code == ExitCode.OK, checked.output
        written.append(f"{k}.json")
    return written


def test_merge_judges_the_claims_over_kernels_again_from_the_shards_figures(no_gpu, project):
    parts = _shards(project, ("as_is", "as_is"))
    merged = invoke_command("merge", *parts)
    assert merged.exit_code == ExitCode.OK, merged.output
    assert "3 passed, 0 failed" in merged.output and "ops::local_scan (allowed:" in merged.output
    # A kernel's figure that fails its claim, in the shard that built the set (the set's claims are one
    # group: one shard builds it), under the verdict that still says it holds.
    for part in parts:
        document = json.loads(Path(part).read_text())
        for row in document["files"][0]["measurements"] or []:
            if (row["case"], row["metric"]) == (REGISTER_GEMM, "static__registers_per_thread"):
                row["value"] = 96
        Path(part).write_text(json.dumps(document))
    refused = invoke_command("merge", *parts)
    assert refused.exit_code == ExitCode.BAD_INPUT, refused.output
    assert refused.stdout.endswith(
        "claim gemm_registers: 'passed' in the shard, but its measured values give 'failed' (fails for 1"
        " of 13 kernels, expected <= 64: static__registers_per_thread = 96 for ops::register_gemm): the"
        " shard was edited, or judged by another ncuverify\n"
    )


def test_one_shard_builds_the_set_so_a_rebuild_between_shards_mixes_no_builds(no_gpu, project):
    # The set's three claims are one group: shard 1 builds the library as committed and judges them all,
    # shard 2 (on a rebuilt library) builds and judges nothing of it.
    parts = _shards(project, ("as_is", "unrolled"))
    first, second = (json.loads(Path(part).read_text())["files"][0] for part in parts)
    assert len(first["claims"]) == 3 and second["claims"] == [] and not second["measurements"]
    merged = invoke_command("merge", *parts)
    assert merged.exit_code == ExitCode.OK, merged.output
    assert "3 passed, 0 failed" in merged.output
