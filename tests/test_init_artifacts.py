"""`ncuverify init` on built artifacts of the tests' own (tests/artifact_builds.py builds them with
nvcc): the starter file names each kernel with `binary:` and `entry:`, claims only the facts an
artifact carries, and passes `ncuverify lint` and `check --static-only` as written; and the refusals."""

import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml
from artifact_builds import artifacts  # noqa: F401 (a fixture)
from cli_invoke import invoke_command
from test_cli_init import _one_line_refusal

from ncuverify.build.built import BuiltKernel
from ncuverify.build.static import StaticFacts
from ncuverify.errors import ExitCode
from ncuverify.init.artifacts import is_artifact
from ncuverify.init.sources import SourceKernel, SourceKernels
from ncuverify.init.starter import starter

ARTIFACT_FACTS = {"registers", "stack_frame", "shared_static"}


@pytest.fixture
def project(tmp_path, monkeypatch, artifacts):  # noqa: F811
    """A project with build/ holding the library and the cubin, and an empty expectations/."""
    (tmp_path / ".ncuverify-root").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "expectations").mkdir()
    for name in ("libkernels.so", "kernels.cubin"):
        shutil.copy(artifacts(name), tmp_path / "build" / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _initialised(artifact: str) -> tuple[str, dict]:
    made = invoke_command("init", f"build/{artifact}", "-o", "expectations/k.yaml")
    assert made.exit_code == ExitCode.OK, made.output
    assert made.stdout.strip() == "expectations/k.yaml: 3 kernels for sm_90"
    text = Path("expectations/k.yaml").read_text()
    return text, yaml.safe_load(text)


@pytest.mark.slow
@pytest.mark.parametrize("artifact", ["libkernels.so", "kernels.cubin"])
def test_the_written_file_names_binaries_and_passes_lint_and_the_static_check(no_gpu, project, artifact):
    text, content = _initialised(artifact)
    assert content["kernels"] == {
        "ns_copy": {"binary": f"../build/{artifact}", "entry": "ns::copy"},
        "scale": {"binary": f"../build/{artifact}", "entry": "scale"},
        "stride_float": {"binary": f"../build/{artifact}", "entry": "stride<float>"},
    }
    assert content["cases"]["ns_copy"]["args"] == [
        {"buffer": "float32", "count": 32},
        {"buffer": "float32", "count": 32},
        {"int32": 0},
    ]
    # extern "C": the symbol carries no types, so the cubin's sizes decide, marked to be replaced
    assert "- {buffer: float32, count: 32}  # replace: parameter 0: 8 bytes" in text
    assert "not here: twice: overloaded (2 kernels share the name)" in text
    claimed = {claim["id"].removeprefix(f"{claim['case']}_") for claim in content["claims"]}
    assert claimed == ARTIFACT_FACTS  # no spills: an artifact does not say them
    stride_shared = next(c for c in content["claims"] if c["id"] == "stride_float_shared_static")
    assert stride_shared["expect"] == {"at_most": 256 + 1024}  # the cubin's figure: 1 KiB reserved
    linted = invoke_command("lint", "expectations/k.yaml")
    assert linted.exit_code == ExitCode.OK, linted.output
    checked = invoke_command("check", "--static-only", "expectations/k.yaml")
    assert checked.exit_code == ExitCode.OK, checked.output
    assert "k.yaml: 9 passed, 0 failed, 0 errors, 0 skipped" in checked.output


def test_bad_artifacts_exit_2_with_one_line(no_gpu, project, tmp_path_factory, artifacts):  # noqa: F811
    said = _one_line_refusal("build/kernels.cubin", "--arch", "sm_80")
    assert said == "build/kernels.cubin: holds no cubin for sm_80; it holds cubins for sm_90"
    (project / "build" / "notes.so").write_text("not a library")
    assert "build/notes.so: not an artifact cuobjdump can read" in _one_line_refusal("build/notes.so")
    outside = tmp_path_factory.mktemp("outside") / "libkernels.so"
    shutil.copy(artifacts("libkernels.so"), outside)
    said = _one_line_refusal(str(outside), "-o", "expectations/k.yaml")
    assert said.startswith(
        f"{outside}: lies outside the project of expectations/k.yaml ({project}: the nearest"
    )
    assert said.endswith("or allow its folder with --allow-include DIR")
    assert (
        invoke_command("init", str(outside), "--allow-include", str(outside.parent)).exit_code == ExitCode.OK
    )
    assert list((project / "expectations").iterdir()) == []


def test_artifacts_are_told_from_sources_by_suffix_or_by_how_they_begin(tmp_path):
    for name, head in [
        ("lib.so", b"anything"),
        ("libops.so.1", b"anything"),
        ("program", b"\x7fELF\x02\x01"),
        ("archive", b"!<arch>\nrest"),
        ("bundle", bytes.fromhex("50ed55ba01001000")),
    ]:
        (tmp_path / name).write_bytes(head)
        assert is_artifact(tmp_path / name), name
    (tmp_path / "ops.cu").write_bytes(b"\x7fELF")
    (tmp_path / "notes").write_text("hello")
    assert not is_artifact(tmp_path / "ops.cu") and not is_artifact(tmp_path / "notes")
    assert not is_artifact(tmp_path / "missing")
    (tmp_path / "folder").mkdir()
    assert not is_artifact(tmp_path / "folder")


def test_a_kernel_in_several_cubins_is_left_out_with_the_reason():
    facts = StaticFacts(None, {"REG": 8, "STACK": 0, "SHARED": 0}, None)
    twice = SourceKernel(BuiltKernel("_Z4copyPf", "copy(float*)", "sm_90", facts), (8,))
    once = SourceKernel(BuiltKernel("_Z4fillPf", "fill(float*)", "sm_90", facts), (8,))
    made = starter(
        SourceKernels("lib.so", (twice, twice, once), (), binary=True), "sm_90", date(2025, 1, 2), "s"
    )
    assert [kernel.entry for kernel in made.kernels] == ["fill"]
    assert [(left.name, left.reason) for left in made.left_out] == [
        ("copy", "in 2 of the artifact's cubins: an entry names one kernel")
    ]
    assert made.source_key == "binary"
