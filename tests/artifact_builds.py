"""Built artifacts for the tests, made from tests/fixtures/artifacts/kernels.cu with nvcc from the CUDA
wheels (and g++ behind it). Each is built once per test run, on first use, however many test processes
ask for it (shared_build); a test that needs one skips, saying why, where nvcc or g++ is missing.

The commands, from tests/fixtures/artifacts:
  nvcc -cubin -arch=sm_90 kernels.cu -o kernels.cubin
  nvcc -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 kernels.cu -o kernels.fatbin
  nvcc -c -arch=sm_90 kernels.cu -o kernels.o; ar rcs libkernels.a kernels.o
  nvcc -shared -Xcompiler -fPIC -arch=sm_90 kernels.cu -o libkernels.so
  nvcc -arch=sm_90 kernels.cu main.cu -o program
  nvcc -fatbin -gencode arch=compute_90,code=compute_90 kernels.cu -o ptx_only.fatbin
  nvcc -fatbin --compress-mode=size (the two -gencode of kernels.fatbin) kernels.cu -o compressed.fatbin
  nvcc -fatbin --concat (the same) kernels.cu -o concatenated.fatbin
"""

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "artifacts"


def _nvcc() -> str | None:
    try:
        import nvidia.cu13

        found = Path(next(iter(nvidia.cu13.__path__))) / "bin" / "nvcc"
        if found.is_file():
            return str(found)
    except ImportError:
        pass
    return shutil.which("nvcc")


SOURCE = FIXTURES / "kernels.cu"
COMMANDS = {
    "kernels.cubin": ["-cubin", "-arch=sm_90", "kernels.cu"],
    "kernels.fatbin": [
        "-fatbin",
        "-gencode",
        "arch=compute_80,code=sm_80",
        "-gencode",
        "arch=compute_90,code=sm_90",
        "kernels.cu",
    ],
    "kernels.o": ["-c", "-arch=sm_90", "kernels.cu"],
    "libkernels.so": ["-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", "kernels.cu"],
    "program": ["-arch=sm_90", "kernels.cu", "main.cu"],
    "ptx_only.fatbin": ["-fatbin", "-gencode", "arch=compute_90,code=compute_90", "kernels.cu"],
}
# Each cubin compressed, and the two cubins concatenated in one compressed entry.
COMMANDS["compressed.fatbin"] = ["--compress-mode=size", *COMMANDS["kernels.fatbin"]]
COMMANDS["concatenated.fatbin"] = ["--concat", *COMMANDS["kernels.fatbin"]]


def shared_build(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder that build(folder) filled, filled once per test run: the test processes of one run
    (pytest-xdist's workers) share the run's base folder, and take turns under a lock."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / f"shared-{name}"
    folder.mkdir(exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            build(folder)
            (folder / ".built").touch()
    return folder


def build_artifact(name: str, into: Path, tmp_path_factory=None) -> Path:
    """The artifact, built into the folder (once; once per test run, copied, with tmp_path_factory);
    skips where nvcc or g++ is missing."""
    target = into / name
    if target.exists():
        return target
    for source in ("kernels.cu", "main.cu"):
        if not (into / source).exists():
            shutil.copy(FIXTURES / source, into / source)
    if name == "libkernels.a":  # the object, archived
        objects = build_artifact("kernels.o", into, tmp_path_factory)
        subprocess.run(["ar", "rcs", str(target), str(objects)], check=True, timeout=120)
        return target
    if tmp_path_factory is not None:
        key = name.replace(".", "-")
        built = shared_build(tmp_path_factory, key, lambda folder: build_artifact(name, folder))
        shutil.copy(built / name, target)
        return target
    nvcc = _nvcc()
    if nvcc is None or shutil.which("g++") is None:
        pytest.skip("needs nvcc (the CUDA wheels' or a toolkit's) and g++ to build the artifacts")
    subprocess.run(
        [nvcc, *COMMANDS[name], "-o", name], cwd=into, check=True, timeout=300, capture_output=True
    )
    return target


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory):
    """build(name) -> the artifact's path, in one folder (a project of its own) for the session."""
    folder = tmp_path_factory.mktemp("artifacts")
    (folder / ".ncuverify-root").touch()
    return lambda name: build_artifact(name, folder, tmp_path_factory)
