import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

from ncuverify.build.cache import CompileCache
from ncuverify.environment import Environment, Gpu
from ncuverify.processes import group_ended

# build_projects holds the build tests' fixtures; loaded here, before any test module imports it
pytest_plugins = ["pytester", "build_projects"]

# The stand-ins for ncu (`#!/usr/bin/env python3`) and the programs the tests run as `python3` run on the
# tests' own interpreter, not whatever python3 comes first on the PATH (a version manager's shim costs a
# tenth of a second a start, and may lack ncuverify's dependencies).
os.environ["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", "")))
# The report is laid out for $COLUMNS, which pytest-xdist's workers set to 80: a test that shows a
# width sets its own.
os.environ.pop("COLUMNS", None)
# Inside a GitHub Actions job `check` annotates and appends to the job's summary: the tests that
# expect either set these variables themselves.
os.environ.pop("GITHUB_ACTIONS", None)
os.environ.pop("GITHUB_STEP_SUMMARY", None)
# The command line compiles through a cache in the user's folder; the tests keep theirs apart.
os.environ.setdefault("NCUVERIFY_CACHE_DIR", tempfile.mkdtemp(prefix="ncuverify-test-cache-"))
# The same cache for the in-process builds of the tests that do not test compiling or the cache itself:
# a kernel that many tests build is compiled once a run (parallel test processes share it too, as
# concurrent runs of the command line do).
COMPILE_CACHE = CompileCache(Path(os.environ["NCUVERIFY_CACHE_DIR"]))

ROOT = Path(__file__).resolve().parent.parent


def import_path() -> str:
    """This checkout's package first, then the PYTHONPATH the tests run with (where packages such as
    google-re2 may be installed beside the interpreter's own): for a script that runs ncuverify."""
    return os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def ncuverify_script(folder: Path, calls: Path | None = None) -> Path:
    """An `ncuverify` executable in folder that runs this checkout's package with this interpreter (for
    tests that put ncuverify on a PATH); with calls, it writes each call's arguments there, a line each."""
    script = folder / "ncuverify"
    noted = f'echo "$@" >> "{calls}"\n' if calls is not None else ""
    run = f'PYTHONPATH="{import_path()}" exec "{sys.executable}" -m ncuverify "$@"\n'
    script.write_text(f"#!/bin/sh\n{noted}{run}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def cmake_tools() -> tuple[str, str] | None:
    """cmake and ctest: the machine's, else the `cmake` wheel's (the dev extra's); None without."""
    cmake, ctest = shutil.which("cmake"), shutil.which("ctest")
    if cmake is None:
        try:
            import cmake as wheel  # type: ignore[import-not-found]
        except ImportError:
            return None
        cmake, ctest = (str(Path(wheel.CMAKE_BIN_DIR) / name) for name in ("cmake", "ctest"))
    return (cmake, ctest) if ctest is not None else None


DATA = ROOT / "tests" / "data"
FIXTURES = ROOT / "tests" / "fixtures"
EXPECTATIONS = ROOT / "expectations"
RECORDINGS = ROOT / "recordings" / "h200"
FAKE_NCU = DATA / "fake_ncu" / "ncu"
# The machine the tests replay recordings and check static claims on: no GPU, as Environment.probe finds
# one whose CUDA driver cannot be loaded.
NO_GPU = Environment(
    gpu=None, ncu=None, problem="no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded"
)

# The machine the stand-in ncu profiles on: one GPU, said to be an sm_90.
FAKE_GPU = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)


def fake_profiled(paths: list[Path], save_profile: Path, **options: object) -> list:
    """The files checked with the stand-in ncu (tests/data/fake_ncu/ncu) on a machine said to have one
    GPU, the profile kept in save_profile; more CheckOptions as given (no explanation pass unless
    `explain=True`)."""
    from ncuverify.options import CheckOptions
    from ncuverify.pipeline import check_files
    from ncuverify.profile import NcuOptions

    run = CheckOptions(
        cache=COMPILE_CACHE,
        ncu=NcuOptions(executable=str(FAKE_NCU)),
        save_profile=save_profile,
        **{"explain": False, **options},  # type: ignore[arg-type]
    )
    return check_files(paths, run, FAKE_GPU)


@pytest.fixture(scope="session")
def gpu_environment() -> Environment:
    """The machine's GPU and ncu; GPU tests skip, saying why, where either is missing."""
    environment = Environment.probe("ncu")
    if environment.problem is not None:
        pytest.skip(f"needs an NVIDIA GPU and Nsight Compute: {environment.problem}")
    return environment


@pytest.fixture
def no_gpu(monkeypatch):
    """The command line finds no GPU (NO_GPU), so that a test runs the same on any machine."""
    monkeypatch.setattr(Environment, "probe", classmethod(lambda cls, ncu: NO_GPU))


# Any JSON value, small: what a hostile results, baseline or pass-count file can hold.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def ended(pid: int) -> bool:
    """Whether the process is gone (or a zombie), waiting a moment for a SIGKILL to land."""
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def assert_group_ends(group: int) -> None:
    """The group was killed: soon no process of it can run (each gone, or a zombie init has yet to reap)."""
    for _ in range(600):
        if group_ended(group):
            return
        time.sleep(0.05)
    raise AssertionError(f"process group {group} is still there")


@pytest.fixture
def stand_in_tool(tmp_path, monkeypatch):
    """write(script, name) puts a shell script in place of a tool (cuobjdump, nvdisasm) and gives its
    path and the empty folder that temporary folders are made in, to watch that nothing is left."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def write(script: str, name: str = "fake-tool") -> tuple[str, Path]:
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\n{script}\n")
        path.chmod(0o755)
        return str(path), scratch

    return write


def disassemblies(monkeypatch) -> list[bytes]:
    """The cubins nvdisasm is run on from now on (it still runs)."""
    from ncuverify.build import binutils

    seen: list[bytes] = []
    real = binutils._run_on_cubin

    def watched(tool, arguments, cubin, timeout_s=binutils.TOOL_TIMEOUT_S):
        if tool.endswith("nvdisasm"):
            seen.append(cubin)
        return real(tool, arguments, cubin, timeout_s)

    monkeypatch.setattr(binutils, "_run_on_cubin", watched)
    return seen
