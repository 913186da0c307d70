"""Every command's default output and help at 80 columns: no line wider than the terminal, nothing
cut with an ellipsis, and ids (claim ids, kernel names) whole on their lines, wrapped at spaces."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from rich.cells import cell_len
from typer.testing import CliRunner

from ncuverify.cli import app

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "recordings" / "h200"
FILES = [ROOT / "expectations" / name for name in ("occupancy.yaml", "vectorization.yaml")]
WIDTH = 80


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(WIDTH), "NO_COLOR": "1"})
    assert result.exit_code in (0, 1, 3), result.output
    return result.output


def _readable(output: str) -> list[str]:
    lines = output.splitlines()
    # A word wider than the terminal (a long temporary path) stands whole on a line of its own.
    too_wide = [line for line in lines if cell_len(line) > WIDTH and " " in line.strip()]
    assert too_wide == [], too_wide[:3]
    assert "…" not in output
    cut = [line for line in lines if line.rstrip().endswith("...") and not line.startswith("Usage:")]
    assert cut == []  # click's way of cutting a command's summary
    return lines


def _command_paths(command: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [path]
    if isinstance(getattr(command, "commands", None), dict):  # a group (typer carries its own click)
        for name, sub in command.commands.items():  # type: ignore[attr-defined]
            paths += _command_paths(sub, (*path, name))
    return paths


@pytest.mark.parametrize("path", _command_paths(typer.main.get_command(app)), ids=" ".join)
def test_help_fits_80_columns(path):
    lines = _readable(_run(*path, "--help"))
    assert lines[0].startswith("Usage:")


def _claim_ids(path: Path) -> list[str]:
    import yaml

    return [claim["id"] for claim in yaml.safe_load(path.read_text())["claims"]]


def test_check_replay_fits_80_columns_every_level():
    files = [str(f) for f in FILES]
    for level in ([], ["-q"]):
        _readable(_run("check", *files, "--from-profile", str(RECORDING), *level))
    verbose = _readable(_run("check", *files, "--from-profile", str(RECORDING), "-v"))
    words = {word for line in verbose for word in line.split()}
    assert set(_claim_ids(FILES[1])) <= words  # each id whole somewhere, never broken across lines
    summary = [line for line in verbose if line.startswith("ncuverify: ")]
    assert summary and "passed" in summary[0]


def test_a_check_with_nothing_to_measure_says_why_within_80_columns(no_gpu):
    lines = _readable(_run("check", str(FILES[1])))
    assert any(line.startswith("skipped ") for line in lines)


def test_static_only_summary_wraps_at_spaces():
    lines = _readable(_run("check", "--static-only", str(FILES[0])))
    said = " ".join(line.strip() for line in lines if line.startswith(str(FILES[0])) or line.startswith("  "))
    assert "set aside (they need a GPU: --static-only)" in said


def test_audit_fits_80_columns_with_ids_whole():
    lines = _readable(_run("audit", str(FILES[1]), "--from-profile", str(RECORDING)))
    for claim_id in _claim_ids(FILES[1]):
        assert any(line.split()[:1] == [claim_id] for line in lines), claim_id


def test_build_fits_80_columns_with_names_whole():
    lines = _readable(_run("build", str(ROOT / "expectations" / "async_copy.yaml"), "--arch", "sm_90"))
    assert any(line.startswith("tile_sum_pipeline, sm_90") for line in lines)


def test_dry_run_fits_80_columns_with_names_whole():
    lines = _readable(_run("check", "--dry-run", *map(str, FILES)))
    assert any(f"{FILES[0].name}::" in line for line in lines)


def test_lint_doctor_and_cache_fit_80_columns():
    _readable(_run("lint", *map(str, FILES)))
    _readable(_run("doctor", "--no-trial"))
    _readable(_run("cache", "where"))


def test_baseline_and_merge_fit_80_columns(tmp_path):
    baseline = tmp_path / "baseline.json"
    _readable(_run("baseline", "save", str(baseline), str(FILES[1]), "--static-only"))
    shards = []
    for k in (1, 2):
        shard = tmp_path / f"shard{k}.json"
        _run(
            "check",
            *map(str, FILES),
            "--from-profile",
            str(RECORDING),
            "--shard",
            f"{k}/2",
            "--json",
            str(shard),
        )
        shards.append(str(shard))
    assert all(json.loads(Path(s).read_text()) for s in shards)
    _readable(_run("merge", *shards))


def test_init_fits_80_columns(tmp_path):
    source = tmp_path / "copy.cu"
    shutil.copy(ROOT / "examples" / "sweep" / "copy.cu", source)
    _readable(_run("init", str(source), "-o", str(tmp_path / "copy.yaml"), "--arch", "sm_90"))
