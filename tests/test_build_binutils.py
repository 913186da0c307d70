"""Running cuobjdump and nvdisasm on a cubin: within a time limit, in a temporary folder removed after."""

import pytest
from conftest import disassemblies, ended

# --- the tools' runs -------------------------------------------------------------------------------------------


@pytest.fixture
def tool(stand_in_tool):
    """A stand-in for cuobjdump or nvdisasm, written per test, and an empty temporary folder to watch."""
    return stand_in_tool


def test_a_tool_that_does_not_end_is_stopped(tool, tmp_path):
    from ncuverify.build.binutils import _run_on_cubin
    from ncuverify.processes import TimedOut

    # The tool leaves a child behind that would outlive it.
    path, scratch = tool(f"sleep 300 & echo $! > {tmp_path}/child\nsleep 300")
    with pytest.raises(TimedOut, match=r"fake-tool did not finish within 0\.5 s; stopped"):
        _run_on_cubin(path, ["-c"], b"\x7fELF", timeout_s=0.5)
    assert ended(int((tmp_path / "child").read_text()))
    assert list(scratch.iterdir()) == []


def test_a_tool_that_fails_says_why(tool):
    from ncuverify.build.binutils import _run_on_cubin

    path, scratch = tool("echo 'fake-tool: not a cubin' >&2; exit 1")
    with pytest.raises(RuntimeError, match="fake-tool failed: fake-tool: not a cubin"):
        _run_on_cubin(path, [], b"junk")
    assert list(scratch.iterdir()) == []


def test_both_tools_run_within_the_limit(tool, monkeypatch):
    from ncuverify.build import binutils
    from ncuverify.processes import TimedOut

    path, scratch = tool("sleep 300")
    monkeypatch.setattr(binutils, "find_tool", lambda name: path)
    with pytest.raises(TimedOut):
        binutils.tool_outputs(b"\x7fELF", timeout_s=0.5)
    assert list(scratch.iterdir()) == []


# --- SASS where asked ----------------------------------------------------------------------------------------


def test_a_build_disassembles_only_where_asked_and_keeps_the_sass_it_made(tmp_path, monkeypatch):
    from conftest import DATA

    from ncuverify.build import BuildLimits, build_spec
    from ncuverify.build.cache import CompileCache
    from ncuverify.spec import load

    spec, cache = load(DATA / "static.yaml"), CompileCache(tmp_path / "cache")
    seen = disassemblies(monkeypatch)
    plain = build_spec(spec, "sm_90", cache)
    assert seen == [] and all(build.facts.sass is None for build in plain.values())
    assert "static__sass_instructions" not in plain["scalar_copy"].facts.metrics()
    assert plain["scalar_copy"].facts.metrics()["static__registers_per_thread"] > 0
    # The entries kept without SASS get it once it is asked for, and keep it.
    with_sass = build_spec(spec, "sm_90", cache, BuildLimits(sass=True))
    assert len(seen) == len({build.cubin for build in plain.values()}) > 0
    scalar = with_sass["scalar_copy"].facts
    assert scalar.count("LDG") == 1 and scalar.metrics()["static__sass_instructions"] == len(scalar.sass)
    assert build_spec(spec, "sm_90", cache, BuildLimits(sass=True)) == with_sass
    assert len(seen) == len({build.cubin for build in plain.values()}), "the SASS came from the cache"
    assert build_spec(spec, "sm_90", cache)["scalar_copy"].facts.sass == scalar.sass


def test_an_artifact_is_disassembled_only_where_asked(tmp_path, monkeypatch):
    from artifact_builds import build_artifact

    from ncuverify.build.artifacts import read_artifact
    from ncuverify.build.cache import CompileCache

    path, cache = build_artifact("kernels.cubin", tmp_path), CompileCache(tmp_path / "cache")
    seen = disassemblies(monkeypatch)
    assert all(kernel.facts.sass is None for kernel in read_artifact(path, "sm_90", cache=cache))
    assert seen == []
    kernels = read_artifact(path, "sm_90", cache=cache, sass=True)
    assert len(seen) == 1 and all(kernel.facts.sass for kernel in kernels)
