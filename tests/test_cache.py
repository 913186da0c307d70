import pytest
import yaml
from conftest import DATA

from ncuverify import build
from ncuverify import cache as cache_module
from ncuverify.cache import MARKER, CompileCache
from ncuverify.errors import InputError
from ncuverify.spec import load


@pytest.fixture
def counted(monkeypatch):
    """Counts the real compilations."""
    calls = []
    real = build._run_nvrtc

    def counting(unit, templates, options):
        calls.append(unit.source_name)
        return real(unit, templates, options)

    monkeypatch.setattr(build, "_run_nvrtc", counting)
    return calls


def test_a_second_build_compiles_nothing(tmp_path, counted):
    cache = CompileCache(tmp_path / "cache")
    spec = load(DATA / "static.yaml")
    first = build.build_spec(spec, "sm_90", cache)
    compiled = len(counted)
    assert compiled == 1  # three kernels, one shared source
    second = build.build_spec(spec, "sm_90", cache)
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
    build.build_spec(load(path), "sm_90", cache)
    build.build_spec(load(path), "sm_90", cache)
    assert len(counted) == 1
    header.write_text("#define FACTOR 3.0f\n")  # a header changed: compile again
    build.build_spec(load(path), "sm_90", cache)
    assert len(counted) == 2
    content["kernels"]["k"]["max_registers"] = 32  # an option changed: compile again
    path.write_text(yaml.safe_dump(content))
    build.build_spec(load(path), "sm_90", cache)
    assert len(counted) == 3


def test_a_damaged_entry_is_compiled_again(tmp_path, counted):
    cache = CompileCache(tmp_path / "cache")
    spec = load(DATA / "static.yaml")
    build.build_spec(spec, "sm_90", cache)
    for entry in (tmp_path / "cache").glob("*.json"):
        entry.write_text("{not json")
    build.build_spec(spec, "sm_90", cache)
    assert len(counted) == 2


def test_clean_removes_the_entries_and_keeps_the_marked_folder(tmp_path):
    cache = CompileCache(tmp_path / "cache")
    build.build_spec(load(DATA / "static.yaml"), "sm_90", cache)
    assert cache.clean() == 1
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [MARKER]
    assert cache.clean() == 0


# --- the folder --------------------------------------------------------------------------------------------------


def test_entries_go_into_a_marked_folder(tmp_path):
    cache = CompileCache(tmp_path / "deep" / "cache")
    build.build_spec(load(DATA / "static.yaml"), "sm_90", cache)
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
