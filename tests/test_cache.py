import pytest
import yaml
from conftest import DATA

from ncuverify import build
from ncuverify.cache import CompileCache
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


def test_clean_empties_the_cache(tmp_path):
    cache = CompileCache(tmp_path / "cache")
    build.build_spec(load(DATA / "static.yaml"), "sm_90", cache)
    assert cache.clean() == 1
    assert not (tmp_path / "cache").exists()
