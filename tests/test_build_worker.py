"""The second wall: the worker reads only the project, the allowed folders and the CUDA headers."""

from pathlib import Path

import pytest
from build_projects import KERNEL, SECRET, kernel_file, refused


def confinement_problem(readable: Path) -> str | None:
    """Why a worker could not be confined on this machine, or None."""
    import subprocess
    import sys

    script = f"from ncuverify.build.worker import confine; print(confine([{str(readable)!r}]) or 'confined')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return None if done.stdout.strip() == "confined" else done.stdout.strip()


def test_a_confined_worker_reads_only_its_folders(tmp_path):
    import subprocess
    import sys

    if (problem := confinement_problem(tmp_path)) is not None:
        pytest.skip(problem)
    (tmp_path / "mine.txt").write_text("mine")
    script = (
        "from ncuverify.build.worker import confine\n"
        f"assert confine([{str(tmp_path)!r}]) is None\n"
        f"print(open({str(tmp_path / 'mine.txt')!r}).read())\n"
        "for path in ('/etc/passwd', '/proc/self/environ'):\n"
        "    try:\n"
        "        open(path).read(); print('read', path)\n"
        "    except PermissionError:\n"
        "        print('refused', path)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:3] == ["mine", "refused /etc/passwd", "refused /proc/self/environ"]


def test_a_project_header_that_a_cuda_header_picks_up_cannot_read_outside(repo, monkeypatch):
    # CCCL's headers test __has_include(<version>); a file of that name in the kernel's folder is
    # included by them, out of the walk's sight. Confined, NVRTC cannot open what that file includes.
    root, _ = repo
    if (problem := confinement_problem(root)) is not None:
        pytest.skip(problem)
    monkeypatch.setenv("NCUVERIFY_TEST_TOKEN", SECRET)
    (root / "kernels" / "version").write_text('#include "/proc/self/environ"\n')
    message = refused(kernel_file(root, f"#include <cuda/std/cstdint>\n{KERNEL}"))
    assert 'cannot open source file "/proc/self/environ": Permission denied' in message
