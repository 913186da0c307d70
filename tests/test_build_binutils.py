"""Running cuobjdump and nvdisasm on a cubin: within a time limit, in a temporary folder removed after."""

import pytest
from conftest import ended

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
