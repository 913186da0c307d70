"""What a case launches with, as a digest: the same wherever the project lies, another for another
grid, other arguments, other bytes in a .npy fill or another program; and a replay that says which
cases changed since they were recorded."""

import shutil
from pathlib import Path

import numpy as np
import yaml
from conftest import COMPILE_CACHE, DATA, NO_GPU, fake_profiled

from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.spec import load
from ncuverify.spec.digests import case_digests

KERNEL = 'extern "C" __global__ void k(const float* x) {}'


def project(folder: Path, grid: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".ncuverify-root").write_text("")
    (folder / "data").mkdir(exist_ok=True)
    if not (folder / "data" / "x.npy").exists():
        np.save(folder / "data" / "x.npy", np.arange(8, dtype=np.float32))
    args = [{"buffer": "float32", "count": 8, "fill": {"npy": "data/x.npy"}}]
    content = {
        "kernels": {"k": {"source": KERNEL, "entry": "k"}},
        "cases": {
            "c": {"kernel": "k", "grid": grid, "block": 1, "args": args},
            "other": {"kernel": "k", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 8}]},
            "run": {"program": {"command": ["python3", "x.py"]}, "kernel": "k"},
        },
        "claims": [
            {
                "id": "grid",
                "case": "c",
                "metric": "launch__grid_size",
                "expect": {"equals": grid},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = folder / "e.yaml"
    path.write_text(yaml.safe_dump(content))
    return path


def test_a_case_s_digest_follows_its_inputs_not_where_the_project_lies(tmp_path: Path):
    here = case_digests(load(project(tmp_path / "a")))
    assert set(here) == {"c", "other", "run"}
    assert case_digests(load(project(tmp_path / "b"))) == here, "another folder, the same inputs"
    regridded = case_digests(load(project(tmp_path / "a", grid=2)))
    assert regridded["c"] != here["c"] and regridded["other"] == here["other"]
    np.save(tmp_path / "a" / "data" / "x.npy", np.arange(8, dtype=np.float32) * 2)
    refilled = case_digests(load(project(tmp_path / "a")))
    assert refilled["c"] != here["c"] and refilled["other"] == here["other"]
    path = project(tmp_path / "a")
    path.write_text(path.read_text().replace("x.py", "y.py"))
    assert case_digests(load(path))["run"] != here["run"]


def test_a_replay_says_which_cases_changed_since_they_were_recorded(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".ncuverify-root").write_text("")
    path = tmp_path / "p" / "sample.yaml"
    shutil.copy(DATA / "sample.yaml", path)
    fake_profiled([path], tmp_path / "rec")
    replay = CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path / "rec", explain=False)
    [same] = check_files([path], replay, NO_GPU)
    assert not [w for w in same.warnings if "changed since it was recorded" in w]
    path.write_text(path.read_text().replace("    grid: [256, 4]\n", "    grid: [128, 4]\n"))
    [changed] = check_files([path], replay, NO_GPU)
    assert [w for w in changed.warnings if "changed since it was recorded" in w] == [
        "case scale_2d changed since it was recorded (its launch, arguments or program): its figures may be stale"
    ]
    # its claim is not judged on the figures of the old launch
    [on_it] = [c for c in changed.claims if c.claim.case == "scale_2d"]
    assert (on_it.verdict.value, on_it.reason.split(";")[0]) == (
        "error",
        "stale: case scale_2d changed since it was recorded (its launch, arguments or program)",
    )
    assert not [c for c in changed.claims if c is not on_it and "stale" in (c.reason or "")]
    assert [c.verdict for c in same.claims if c.claim.case != "scale_2d"] == [
        c.verdict for c in changed.claims if c is not on_it
    ]
