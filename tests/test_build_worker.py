"""The second wall: the worker reads only the project, the allowed folders and the CUDA headers, and
where Landlock has network rules (ABI 4) it can neither bind nor connect over TCP."""

import base64
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from build_projects import KERNEL, SECRET, kernel_file, refused
from confinement import confinement, run_python, seccomp_problem

from ncuverify.build.launch import WORKER_SCRIPT, worker_environment
from ncuverify.build.worker import landlock_abi


def confinement_problem(readable: Path) -> str | None:
    """Why a worker could not be confined on this machine, or None."""
    return confinement(readable)[0]


def test_a_confined_worker_reads_only_its_folders(tmp_path):
    if (problem := confinement_problem(tmp_path)) is not None:
        pytest.skip(problem)
    (tmp_path / "mine.txt").write_text("mine")
    script = (
        "from ncuverify.build.worker import confine\n"
        f"assert confine([{str(tmp_path)!r}]).problem is None\n"
        f"print(open({str(tmp_path / 'mine.txt')!r}).read())\n"
        "for path in ('/etc/passwd', '/proc/self/environ'):\n"
        "    try:\n"
        "        open(path).read(); print('read', path)\n"
        "    except PermissionError:\n"
        "        print('refused', path)\n"
    )
    assert run_python(script).split("\n")[:3] == ["mine", "refused /etc/passwd", "refused /proc/self/environ"]


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


def connect_and_bind(tmp_path: Path, port: int) -> list[str]:
    """What a confined process gets when it connects to port on 127.0.0.1 and binds a port of its own."""
    script = (
        "import socket\n"
        "from ncuverify.build.worker import confine\n"
        f"assert confine([{str(tmp_path)!r}]).problem is None\n"
        "for attempt in ('connect', 'bind'):\n"
        "    with socket.socket() as s:\n"
        "        try:\n"
        f"            s.connect(('127.0.0.1', {port})) if attempt == 'connect' else s.bind(('127.0.0.1', 0))\n"
        "            print(attempt, 'done')\n"
        "        except PermissionError:\n"
        "            print(attempt, 'refused')\n"
    )
    return run_python(script).split("\n")[:2]


def test_a_confined_worker_can_neither_connect_nor_bind_over_tcp(tmp_path):
    if (abi := landlock_abi()) < 4:
        pytest.skip(f"Landlock ABI {abi} here: network rules need ABI 4 (Linux 6.7)")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # the listener takes a connection unconfined
            pass
        assert connect_and_bind(tmp_path, port) == ["connect refused", "bind refused"]


def test_the_worker_says_the_network_is_closed_only_where_it_is(tmp_path):
    problem, closed = confinement(tmp_path)
    assert closed == (problem is None and landlock_abi() >= 4)
    if (problem := seccomp_problem()) is not None:
        pytest.skip(problem)
    assert confinement(tmp_path, landlock_refused=True) == (
        "no Landlock here (Function not implemented)",
        False,
    )


def test_the_nvrtc_worker_reports_its_confinement_in_its_answer(tmp_path):
    (tmp_path / "cwd").mkdir()
    request = {
        "source": base64.b64encode(KERNEL.encode()).decode(),
        "name": "k.cu",
        "options": ["-arch=sm_90"],
        "names": [],
        "readable": [str(tmp_path)],
    }
    (tmp_path / "request.json").write_text(json.dumps(request))
    done = subprocess.run(
        [sys.executable, "-P", str(WORKER_SCRIPT), str(tmp_path / "request.json")],
        capture_output=True,
        text=True,
        check=True,
        env=worker_environment(),
        cwd=tmp_path / "cwd",
    )
    answer = json.loads(done.stdout)
    assert answer["status"] == "compiled"
    assert (answer["confined"], answer["network_closed"]) == (
        confinement(tmp_path)[0] is None,
        confinement(tmp_path)[1],
    )


def test_nvrtc_ends_a_program_at_a_byte_0xff_or_a_nul():
    """What the build's refusal of these bytes stands on: NVRTC compiles a program given to it only up
    to either, with no word of the rest (a kernel, and an error). Should a later NVRTC read the whole
    program, this fails, and the refusal can go."""
    from ncuverify.build.worker import compile_program

    kernel = b'extern "C" __global__ void k(float* o) { o[0] = 1.0f; }\n'
    for cut in (b"\xff", b"\0"):
        source = kernel + b"// " + cut + b'\nextern "C" __global__ void k2(float* o) {}\nerror;\n'
        assert compile_program(source, "cut.cu", ["-arch=sm_90"], [])["status"] == "compiled"
        past = compile_program(source, "cut.cu", ["-arch=sm_90"], ["k2"])
        assert past["status"] in ("failed", "error") and "lowered" not in past
    # After a 0xff, NVRTC says the name of even the kernel before it was found, and gives none.
    answer = compile_program(kernel + b"// \xff\n", "cut.cu", ["-arch=sm_90"], ["k"])
    assert answer == {
        "status": "error",
        "call": "nvrtcGetLoweredName",
        "message": "NVRTC gave no name for 'k'",
    }
    whole = kernel + b'// \xfe\xe9\nextern "C" __global__ void k2(float* o) {}\n'  # other bytes: read on
    assert compile_program(whole, "whole.cu", ["-arch=sm_90"], ["k2"])["lowered"] == {"k2": "k2"}
