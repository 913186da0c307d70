"""The host toolchain nvcc compiles with: the tools found, their versions, g++'s search list, and the
environment they get."""

import shutil
from pathlib import Path

import pytest

from ncuverify.build import host
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
