"""The host toolchain nvcc compiles with: the tools found, their versions, g++'s search list, and the
environment they get."""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from ncuverify.build import host
from ncuverify.build.resolve import Roots
from ncuverify.errors import InputError

SEARCH = """ignoring nonexistent directory "/usr/local/include/x86_64-linux-gnu"
#include "..." search starts here:
#include <...> search starts here:
 /usr/include/c++/12
 relative/ignored
 /usr/include
End of search list.
"""


def test_the_search_list_is_read_and_resolved():
    assert host.search_list(SEARCH) == (Path("/usr/include/c++/12").resolve(), Path("/usr/include").resolve())
    assert host.search_list("no list here") == ()


def test_the_environment_is_minimal():
    environment = host.minimal_environment((Path("/opt/cuda/bin/nvcc"), Path("/usr/bin/g++")), Path("/tmp/t"))
    assert environment == {"PATH": "/opt/cuda/bin:/usr/bin", "LC_ALL": "C", "TMPDIR": "/tmp/t"}


def test_a_missing_nvcc_is_one_message(monkeypatch):
    monkeypatch.setattr(host, "find_tool", lambda name: None)
    with pytest.raises(InputError, match=r"needs nvcc, which is neither in the CUDA wheels nor on the PATH"):
        host.host_toolchain()


def test_a_missing_host_compiler_is_one_message(monkeypatch):
    monkeypatch.setattr(host, "find_tool", lambda name: "/usr/bin/true")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(InputError, match=r"needs a host C\+\+ compiler, and there is no g\+\+ on the PATH"):
        host.host_toolchain()


def test_a_host_compiler_that_fails_is_one_message(tmp_path):
    with pytest.raises(InputError, match=r"--version failed \(exit status 1\)"):
        host._probed(Path("/bin/false"), Path("/bin/false"), 10.0)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_g_plus_plus_search_list_holds_its_cstdio(monkeypatch):
    monkeypatch.setenv("CPLUS_INCLUDE_PATH", "/nonexistent-folder")
    folders = host._probed(Path(shutil.which("true") or "/bin/true"), Path(shutil.which("g++") or ""), 30.0)
    assert any((folder / "cstdio").is_file() for folder in folders.include_dirs)
    assert Path("/nonexistent-folder") not in folders.include_dirs


# --- which toolkit's nvcc -------------------------------------------------------------------------------------


def _toolkit(folder: Path) -> Path:
    """A folder laid out as a toolkit: bin/nvcc, executable."""
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (folder / "bin" / "nvcc").chmod(0o755)
    return folder


def test_the_option_wins_then_the_file_then_cuda_home_then_cuda_path_then_the_wheels(tmp_path, monkeypatch):
    option, home, path = (_toolkit(tmp_path / name) for name in ("option", "home", "path"))
    monkeypatch.setattr(host, "find_tool", lambda name: "/wheels/bin/nvcc")
    monkeypatch.setattr(host, "trusted_toolkit_problem", lambda written, roots: None)
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setenv("CUDA_PATH", str(path))
    file = _toolkit(tmp_path / "file")
    assert host.chosen_nvcc(option, str(file), None) == str(option / "bin" / "nvcc")
    assert host.chosen_nvcc(None, str(file), None) == str(file / "bin" / "nvcc")
    assert host.chosen_nvcc(None, None, None) == str(home / "bin" / "nvcc")
    monkeypatch.delenv("CUDA_HOME")
    assert host.chosen_nvcc(None, None, None) == str(path / "bin" / "nvcc")
    monkeypatch.setenv("CUDA_PATH", "")  # set but empty: as if unset
    assert host.chosen_nvcc(None, None, None) == "/wheels/bin/nvcc"


def test_a_variable_that_names_no_toolkit_is_one_message(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    with pytest.raises(
        InputError, match=rf"^CUDA_HOME {tmp_path}: no CUDA toolkit there \(no bin/nvcc to run\)"
    ):
        host.chosen_nvcc(None, None, None)


def test_a_toolkit_the_file_names_must_be_installed_outside_the_project(tmp_path):
    project = tmp_path / "project"
    inside = _toolkit(project / "cuda")
    roots = Roots(project=project)
    assert "not an absolute path" in (host.trusted_toolkit_problem("cuda", roots) or "")
    assert f"inside {project}" in (host.trusted_toolkit_problem(str(inside), roots) or "")
    allowed = Roots(project=tmp_path / "elsewhere", allowed=(project,))
    assert f"inside {project}" in (host.trusted_toolkit_problem(str(inside), allowed) or "")
    outside = _toolkit(tmp_path / "outside")
    outside.chmod(0o777)  # others may write it: a step before could have put its own nvcc there
    problem = host.trusted_toolkit_problem(str(outside), roots) or ""
    assert problem.startswith(f"{outside} is not owned by root, or others may write it")


@pytest.mark.skipif(
    not Path("/usr/local/cuda/bin/nvcc").is_file()
    or os.stat(os.path.realpath("/usr/local/cuda")).st_uid != 0,
    reason="needs a CUDA toolkit installed by root in /usr/local/cuda",
)
def test_an_installed_toolkit_may_be_named_by_the_file(tmp_path):
    assert host.trusted_toolkit_problem("/usr/local/cuda", Roots(project=tmp_path)) is None


def test_the_release_and_the_toolkit_are_what_provenance_records():
    version = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n"
    toolchain = host.HostToolchain(Path("/opt/cuda/bin/nvcc"), Path("/usr/bin/g++"), version, "g++", ())
    assert toolchain.release == "13.0.88"
    assert toolchain.described == "nvcc 13.0.88 at /opt/cuda"
    assert replace(toolchain, nvcc_version="garbled").release == "unknown"
