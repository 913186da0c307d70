import json

import pytest
import yaml
from conftest import DATA

from ncuverify.build import cache as cache_module
from ncuverify.build import programs
from ncuverify.build.cache import MARKER, CompileCache
from ncuverify.build.compile import build_spec
from ncuverify.errors import InputError
from ncuverify.spec import load


@pytest.fixture
def counted(monkeypatch):
    """Counts the real compilations."""
    calls = []
    real = programs._run_nvrtc

    def counting(unit, templates, options, readable, timeout_s):
        calls.append(unit.source_name)
        return real(unit, templates, options, readable, timeout_s)

    monkeypatch.setattr(programs, "_run_nvrtc", counting)
    return calls


def test_a_second_build_compiles_nothing(tmp_path, counted):
    cache = CompileCache(tmp_path / "cache")
    spec = load(DATA / "static.yaml")
    first = build_spec(spec, "sm_90", cache)
    compiled = len(counted)
    assert compiled == 1  # three kernels, one shared source
    second = build_spec(spec, "sm_90", cache)
    assert len(counted) == compiled
    for name in first:
        assert second[name].cubin == first[name].cubin
        assert second[name].facts == first[name].facts
        assert second[name].symbol == first[name].symbol


def test_options_and_headers_are_part_of_the_key(tmp_path, counted):
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    header = project / "kernels" / "scale.cuh"
    header.write_text("#define FACTOR 2.0f\n")
    (project / "kernels" / "k.cu").write_text(
        '#include "scale.cuh"\nextern "C" __global__ void k(float* o) { o[threadIdx.x] *= FACTOR; }\n'
    )
    content = {
        "kernels": {"k": {"file": "kernels/k.cu", "entry": "k"}},
        "cases": {"c": {"kernel": "k", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 32}]}},
        "claims": [
            {
                "id": "x",
                "case": "c",
                "metric": "static__barriers",
                "expect": {"equals": 0},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = project / "k.yaml"
    path.write_text(yaml.safe_dump(content))
    cache = CompileCache(tmp_path / "cache")
    build_spec(load(path), "sm_90", cache)
    build_spec(load(path), "sm_90", cache)
    assert len(counted) == 1
    header.write_text("#define FACTOR 3.0f\n")  # a header changed: compile again
    build_spec(load(path), "sm_90", cache)
    assert len(counted) == 2
    content["kernels"]["k"]["max_registers"] = 32  # an option changed: compile again
    path.write_text(yaml.safe_dump(content))
    build_spec(load(path), "sm_90", cache)
    assert len(counted) == 3


def test_a_damaged_entry_is_compiled_again(tmp_path, counted):
    cache = CompileCache(tmp_path / "cache")
    spec = load(DATA / "static.yaml")
    build_spec(spec, "sm_90", cache)
    for entry in (tmp_path / "cache").glob("*.json"):
        entry.write_text("{not json")
    build_spec(spec, "sm_90", cache)
    assert len(counted) == 2


def test_clean_removes_the_entries_and_keeps_the_marked_folder(tmp_path):
    cache = CompileCache(tmp_path / "cache")
    build_spec(load(DATA / "static.yaml"), "sm_90", cache)
    assert cache.clean() == 1
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [MARKER]
    assert cache.clean() == 0


# --- the include graph is the key --------------------------------------------------------------------------------


def test_a_header_in_a_sibling_folder_is_part_of_the_key(tmp_path, counted):
    import shutil

    project = tmp_path / "project"
    shutil.copytree(DATA / "includes" / "project", project)
    path = project / "expectations" / "scale.yaml"
    cache = CompileCache(tmp_path / "cache")
    build_spec(load(path), "sm_90", cache)
    build_spec(load(path), "sm_90", cache)
    assert len(counted) == 1
    # kernels/scale.cu reaches it as ../common/factor.cuh: outside its own folder and include_dirs.
    (project / "common" / "factor.cuh").write_text("#pragma once\n#define FACTOR 3.0f\n")
    build_spec(load(path), "sm_90", cache)
    assert len(counted) == 2


# --- damaged entries ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compiled_cache(tmp_path_factory):
    """A cache folder holding the entry of static.yaml's program, compiled once for the module's tests."""
    folder = tmp_path_factory.mktemp("compiled") / "cache"
    build_spec(load(DATA / "static.yaml"), "sm_90", CompileCache(folder))
    return folder


@pytest.fixture
def entry(tmp_path, counted, compiled_cache):
    """A cache of the test's own holding the entry of static.yaml's program, and that entry's file."""
    import shutil

    shutil.copytree(compiled_cache, tmp_path / "cache")
    cache = CompileCache(tmp_path / "cache")
    (path,) = (tmp_path / "cache").glob("*.json")
    return cache, path


def rebuilt_with(cache, counted) -> tuple[str, ...]:
    before = len(counted)
    builds = build_spec(load(DATA / "static.yaml"), "sm_90", cache)
    assert len(counted) == before + 1
    (warnings,) = {b.warnings for b in builds.values()}
    return warnings


def test_a_tampered_entry_is_compiled_again_with_a_warning(entry, counted):
    cache, path = entry
    record = json.loads(path.read_text())
    record["log"] = record["log"].replace("Used ", "Used 1")  # more registers than ptxas said
    path.write_text(json.dumps(record))
    assert rebuilt_with(cache, counted) == (
        f"static.yaml:inline: the compile cache's entry {path} is damaged (its digest does not match its content); "
        "compiled again",
    )
    before = len(counted)
    build_spec(load(DATA / "static.yaml"), "sm_90", cache)  # the entry was written again: trusted now
    assert len(counted) == before


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda record: "{not json", "is damaged (not JSON)"),
        (lambda record: "[1, 2]", "is damaged (not a JSON object)"),
        (lambda record: json.dumps({**record, "lowered": ["x"]}), "is damaged (a field of the wrong type)"),
        (lambda record: json.dumps({**record, "cubin": "***"}), "is damaged (the cubin is not base64)"),
    ],
)
def test_a_damaged_entry_is_never_trusted(entry, counted, damage, reason):
    cache, path = entry
    record = json.loads(path.read_text())
    text = damage(record)
    if text.startswith("{") and not text.startswith(
        "{not"
    ):  # keep the digest right: only the content is wrong
        altered = json.loads(text)
        altered["digest"] = cache_module._content_digest(path.stem, altered)
        text = json.dumps(altered)
    path.write_text(text)
    assert rebuilt_with(cache, counted) == (
        f"static.yaml:inline: the compile cache's entry {path} {reason}; compiled again",
    )


def test_an_entry_that_is_a_link_is_not_followed(entry, counted, tmp_path):
    cache, path = entry
    target = tmp_path / "elsewhere.json"
    target.write_text(path.read_text())
    path.unlink()
    path.symlink_to(target)
    assert rebuilt_with(cache, counted) == (
        f"static.yaml:inline: the compile cache's entry {path} is a symbolic link; compiled again",
    )


def test_an_entry_of_an_earlier_format_is_compiled_again_quietly(entry, counted):
    cache, path = entry
    record = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in record.items() if k not in ("format", "digest")}))
    assert rebuilt_with(cache, counted) == ()


def test_a_cache_that_cannot_be_written_is_said_so(tmp_path, counted):
    (tmp_path / "file").write_text("")
    cache = CompileCache(tmp_path / "file" / "cache")
    builds = build_spec(load(DATA / "static.yaml"), "sm_90", cache)
    (warnings,) = {b.warnings for b in builds.values()}
    assert warnings == (
        f"static.yaml:inline: the compile cache in {tmp_path / 'file' / 'cache'} cannot be written "
        "(Not a directory); compiled without it",
    )


# --- the folder --------------------------------------------------------------------------------------------------


def test_entries_go_into_a_marked_folder(tmp_path):
    cache = CompileCache(tmp_path / "deep" / "cache")
    build_spec(load(DATA / "static.yaml"), "sm_90", cache)
    assert (tmp_path / "deep" / "cache" / MARKER).read_text() == cache_module.MARKER_TEXT


def test_the_marker_is_not_written_through_a_link(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / MARKER).symlink_to(tmp_path / "victim")
    cache_module.prepare_folder(folder)
    assert not (tmp_path / "victim").exists()


def test_clean_refuses_a_folder_without_the_marker(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    (folder / ("a" * 64 + ".json")).write_text("{}")
    with pytest.raises(InputError) as error:
        CompileCache(folder).clean()
    assert str(error.value) == (
        f"{folder}: not an ncuverify cache folder (no CACHEDIR.TAG written by ncuverify); refusing to delete anything in it"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["a" * 64 + ".json", "notes.txt"]
    (folder / MARKER).write_text("Signature: 8a477f597d28d172789f06886806bc55\n# another tool's cache\n")
    with pytest.raises(InputError):
        CompileCache(folder).clean()


def test_clean_spares_what_ncuverify_did_not_write(tmp_path):
    folder = cache_module.prepare_folder(tmp_path / "cache")
    outside = tmp_path / "outside.json"
    outside.write_text("keep")
    ours = ["b" * 64 + ".json", "c" * 64 + ".json.partial-123-ab12"]
    foreign = ["notes.txt", "abc.json", "B" * 64 + ".json", "d" * 64 + ".json.bak"]
    for name in ours + foreign:
        (folder / name).write_text("x")
    (folder / ("e" * 64 + ".json")).symlink_to(outside)  # named like an entry, but a link: left alone
    (folder / "sub").mkdir()
    (folder / "sub" / ("f" * 64 + ".json")).write_text("x")
    (folder / "profile").mkdir()
    (folder / "profile" / "passes.json").write_text("{}")
    (folder / "profile" / "mine.txt").write_text("x")
    assert CompileCache(folder).clean() == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [MARKER, *foreign, "e" * 64 + ".json", "sub", "profile"]
    )
    assert outside.read_text() == "keep"
    assert sorted(p.name for p in (folder / "profile").iterdir()) == ["mine.txt"]
    assert (folder / "sub" / ("f" * 64 + ".json")).exists()


def test_clean_removes_the_profile_folder_when_it_empties(tmp_path):
    folder = cache_module.prepare_folder(tmp_path / "cache")
    (folder / "profile").mkdir()
    (folder / "profile" / "passes.json").write_text("{}")
    assert CompileCache(folder).clean() == 0
    assert sorted(p.name for p in folder.iterdir()) == [MARKER]


@pytest.mark.parametrize(
    "variables, expected",
    [
        ({"NCUVERIFY_CACHE_DIR": "/c/n", "XDG_CACHE_HOME": "/c/x", "HOME": "/h"}, "/c/n"),
        ({"NCUVERIFY_CACHE_DIR": "", "XDG_CACHE_HOME": "/c/x", "HOME": "/h"}, "/c/x/ncuverify"),
        ({"NCUVERIFY_CACHE_DIR": "", "XDG_CACHE_HOME": "", "HOME": "/h"}, "/h/.cache/ncuverify"),
        ({"XDG_CACHE_HOME": "relative", "HOME": "/h"}, "/h/.cache/ncuverify"),
    ],
)
def test_the_cache_folder_comes_from_the_environment(monkeypatch, variables, expected):
    for name in ("NCUVERIFY_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert str(cache_module.default_folder()) == expected


def test_no_home_folder_is_no_crash(monkeypatch):
    import os
    import tempfile
    from pathlib import Path

    for name in ("NCUVERIFY_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_home(cls):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", classmethod(no_home))
    assert cache_module.default_folder() == Path(tempfile.gettempdir()) / f"ncuverify-cache-{os.getuid()}"


def test_the_compiler_and_its_versions_are_part_of_the_key():
    parts = (b"src", [], ["-arch=sm_90"], (13, 0), [("project", "a.h", "0" * 64)])
    nvrtc = cache_module.key(*parts)
    assert cache_module.key(*parts, ()) == nvrtc  # NVRTC's entries keep their keys
    nvcc = cache_module.key(*parts, ("nvcc", "release 13.5", "g++ 12.2.0"))
    assert nvcc != nvrtc
    assert cache_module.key(*parts, ("nvcc", "release 13.6", "g++ 12.2.0")) != nvcc
    assert cache_module.key(*parts, ("nvcc", "release 13.5", "g++ 13.1.0")) != nvcc
