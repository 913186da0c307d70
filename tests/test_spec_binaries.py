"""`check --binary KERNEL=PATH`: the artifact a build made, judged for a file's `binary:` kernel instead
of the path the file writes; a pair not so written, or a kernel the file has not as `binary:`, is exit 2
with one line, and the path given is held to the project and the allowed folders as a written one is."""

from pathlib import Path

import pytest
import yaml
from artifact_builds import build_artifact
from cli_invoke import invoke, invoke_command

from ncuverify.errors import ExitCode, InputError
from ncuverify.spec import load
from ncuverify.spec.binaries import parse_binaries, with_binaries


def _expectations(project: Path) -> Path:
    """An expectation file whose `copy` kernel names an artifact that is not there: only --binary can
    give it; `inline` is a source kernel."""
    (project / ".ncuverify-root").touch()
    content = {
        "arch": "sm_90",
        "kernels": {
            "copy": {"binary": "build/missing.cubin", "match": "ns::copy"},
            "inline": {"source": "__global__ void k(float* x) { x[0] = 1.f; }\n", "entry": "k"},
        },
        "claims": [
            {
                "id": "no_stack",
                "kernels": "copy",
                "metric": "static__stack_frame_bytes",
                "expect": {"equals": 0},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = project / "k.yaml"
    path.write_text(yaml.safe_dump(content))
    return path


def test_pairs_are_parsed_made_absolute_and_refused_when_malformed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_binaries(["copy=out/lib.so"]) == {"copy": tmp_path / "out" / "lib.so"}
    for wrong in (["copy"], ["=lib.so"], ["copy="], ["copy=a", "copy=b"]):
        with pytest.raises(InputError, match="--binary"):
            parse_binaries(wrong)


def test_the_named_kernel_takes_the_path_and_a_source_kernel_is_refused(tmp_path):
    spec = load(_expectations(tmp_path))
    given = with_binaries(spec, {"copy": Path("/elsewhere/lib.so")})
    assert given.content.kernels["copy"].binary == "/elsewhere/lib.so"
    assert spec.content.kernels["copy"].binary == "build/missing.cubin"  # the file as read is unchanged
    assert with_binaries(spec, {}) is spec
    for key in ("inline", "nosuch"):
        with pytest.raises(InputError, match=f"k.yaml: --binary {key}: the file has no kernel {key}"):
            with_binaries(spec, {key: Path("/x")})


def test_check_judges_the_artifact_given(tmp_path, no_gpu):
    project, build = tmp_path / "project", tmp_path / "build"
    project.mkdir()
    build.mkdir()
    path = _expectations(project)
    cubin = build_artifact("kernels.cubin", build)
    given = ["--binary", f"copy={cubin}", "--allow-include", str(build)]
    result = invoke("--static-only", str(path), *given)
    assert result.exit_code == ExitCode.OK, result.output
    assert "1 passed" in result.output
    # without it, the path the file writes is judged: there is none
    result = invoke("--static-only", str(path))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "no such file: build/missing.cubin" in result.output
    # outside the project and the allowed folders, a path given is refused as a written one is
    result = invoke("--static-only", str(path), "--binary", f"copy={cubin}")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "lies outside the project" in result.output


def test_a_kernel_not_in_the_file_is_one_line_and_exit_2(tmp_path, no_gpu):
    path = _expectations(tmp_path)
    result = invoke("--static-only", str(path), "--binary", "cpy=/x.cubin")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--binary cpy: the file has no kernel cpy with a 'binary:'" in result.output
    assert "Traceback" not in result.output
    result = invoke("--static-only", str(path), "--binary", "nopath")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--binary: 'nopath': write KERNEL=PATH" in result.output


def test_baseline_save_records_the_artifact_given(tmp_path, no_gpu):
    project, build = tmp_path / "project", tmp_path / "build"
    project.mkdir()
    build.mkdir()
    path = _expectations(project)
    cubin = build_artifact("kernels.cubin", build)
    saved = tmp_path / "base.json"
    given = ["--binary", f"copy={cubin}", "--allow-include", str(build)]
    result = invoke_command("baseline", "save", str(saved), str(path), *given)
    assert result.exit_code == ExitCode.OK, result.output
    assert "ns::copy" in saved.read_text()
