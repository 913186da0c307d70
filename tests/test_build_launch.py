"""The compile worker's process: its time limit, its process group, its environment."""

from pathlib import Path

import pytest
from build_projects import KERNEL, SECRET, kernel_file, refused
from conftest import ended

from ncuverify.build import BuildLimits, build_spec

# --- the time limit --------------------------------------------------------------------------------------------

# Each macro doubles the one before: expanding the last would take longer than anyone waits.
MACRO_BOMB = "\n".join(
    ["#define A0 x x", *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 60)), "int y = A59;", ""]
)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The temporary folder the build uses, empty and watched."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if text in command and state != "Z":
                found.append(int(entry.name))
    return found


def test_a_compile_that_does_not_end_is_stopped(repo, scratch):
    root, _ = repo
    spec = kernel_file(root, MACRO_BOMB)
    assert refused(spec, BuildLimits(timeout_s=1.5)) == (
        f"{spec.path}: kernels/k.cu: did not compile within 1.5 s; stopped (a preprocessor that expands without bound?)"
    )
    assert list(scratch.iterdir()) == []
    assert processes_mentioning(str(scratch)) == []


@pytest.mark.slow
def test_the_whole_worker_group_is_killed_at_the_limit(repo, scratch, monkeypatch):
    import sys

    from ncuverify.build import launch

    root, _ = repo
    pids = scratch.parent / "pids"
    # A worker that starts a grandchild, and neither ever ends.
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    monkeypatch.setattr(
        launch, "_worker_command", lambda request: [sys.executable, "-c", script, str(request)]
    )
    spec = kernel_file(root, KERNEL)
    assert "did not compile within 2 s; stopped" in refused(spec, BuildLimits(timeout_s=2))
    assert ended(int(pids.read_text()))
    assert list(scratch.iterdir()) == []
    assert processes_mentioning(str(scratch)) == []


def test_a_worker_that_breaks_is_an_internal_error(repo, scratch, monkeypatch):
    import sys

    from ncuverify.build import launch

    root, _ = repo
    monkeypatch.setattr(
        launch,
        "_worker_command",
        lambda request: [sys.executable, "-c", "import sys; print('not json'); sys.exit(3)"],
    )
    with pytest.raises(RuntimeError, match=r"the compile worker for kernels/k.cu failed \(exit status 3\)"):
        build_spec(kernel_file(root, KERNEL), "sm_90")
    assert list(scratch.iterdir()) == []


def test_the_worker_does_not_see_the_environment(monkeypatch):
    from ncuverify.build.launch import worker_environment

    monkeypatch.setenv("CI_DEPLOY_TOKEN", SECRET)
    environment = worker_environment()
    assert SECRET not in environment.values()
    assert "PYTHONPATH" in environment


@pytest.mark.parametrize(
    ("printed", "problem"),
    [
        ([], "no result"),
        ({"status": "done"}, "no result"),
        ({"status": "compiled", "log": 3}, "a field that is not text"),
        ({"status": "compiled", "cubin": "not base64!"}, "Only base64 data"),
        ({"status": "compiled", "lowered": {"k": 1}}, "lowered: not names"),
    ],
)
def test_an_answer_the_worker_does_not_write_is_refused(printed, problem):
    from ncuverify.build.launch import _answer

    with pytest.raises(ValueError, match=problem):
        _answer(printed)


def test_the_worker_s_answer_is_typed():
    from ncuverify.build.launch import WorkerAnswer, _answer

    printed = {"status": "compiled", "log": "ok", "cubin": "AAE=", "lowered": {"k<1>": "_Z1kILi1EEvv"}}
    assert _answer(printed) == WorkerAnswer("compiled", "ok", b"\x00\x01", {"k<1>": "_Z1kILi1EEvv"})
