"""A swept file through a whole run: every later stage sees plain cases and claims, and a recording of
it replays to the same verdicts, in the JSON, JUnit and Markdown outputs too."""

import json
import zlib
from pathlib import Path

from conftest import DATA, fake_profiled
from typer.testing import CliRunner

from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.names import QualifiedCase
from ncuverify.results import Verdict, file_key
from ncuverify.spec.expansion import expand

SWEEP = DATA / "sweep.yaml"
SIZES = (1024, 2048, 4096)


def fake_value(metric: str, case: str) -> int:
    """What the fake ncu gives with FAKE_NCU_VALUES=by_case: the name's length, 1000 times the case's number."""
    return len(metric) + 1000 * (zlib.crc32(str(QualifiedCase(file_key(SWEEP), case)).encode()) % 997)


def test_a_swept_file_is_profiled_case_by_case_and_replays_to_the_same_verdicts(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    [live] = fake_profiled([SWEEP], tmp_path / "saved")
    assert live.input_error is None
    profiled = {
        name
        for line in (tmp_path / "notes.jsonl").read_text().splitlines()
        for name in json.loads(line)["cases"]
    }
    cases = [f"{kind}__n_{n}" for kind in ("copy", "strided") for n in SIZES]
    assert profiled == {str(QualifiedCase(file_key(SWEEP), case)) for case in cases}
    by_id = {c.claim.id: c for c in live.claims}
    assert list(by_id) == [f"{claim}__n_{n}" for claim in ("time", "same_time") for n in SIZES]
    time = "gpu__time_duration.sum"
    for n in SIZES:  # each claim read its own case of the sweep, and the other sweep at the same n
        assert by_id[f"time__n_{n}"].measured == fake_value(time, f"copy__n_{n}")
        expected = fake_value(time, f"strided__n_{n}") - fake_value(time, f"copy__n_{n}")
        assert by_id[f"same_time__n_{n}"].measured == expected
    assert {c.verdict for c in live.claims} == {Verdict.PASSED}

    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(
        app,
        [
            "check",
            "-v",
            "--from-profile",
            str(tmp_path / "saved"),
            "--json",
            str(out / "r.json"),
            "--junit-xml",
            str(out / "r.xml"),
            "--markdown",
            str(out / "r.md"),
            str(SWEEP),
        ],
    )
    assert result.exit_code == ExitCode.OK, result.output
    assert "time__n_4096" in result.output and "6 passed, 0 failed" in result.output
    exported = json.loads((out / "r.json").read_text())
    claims = [claim for file in exported["files"] for claim in file["claims"]]
    assert [(c["id"], c["measured"]) for c in claims] == [(c.claim.id, c.measured) for c in live.claims]
    junit = (out / "r.xml").read_text()
    assert all(f'name="{c.claim.id}"' in junit for c in live.claims)
    assert "every claim holds" in (out / "r.md").read_text()  # the summary lists claims that fail

    # A baseline of the recording names the swept cases; checking against it finds nothing worse.
    saved = ["--from-profile", str(tmp_path / "saved")]
    result = CliRunner().invoke(app, ["baseline", "save", *saved, str(out / "b.json"), str(SWEEP)])
    assert result.exit_code == ExitCode.OK, result.output
    assert "copy__n_2048" in (out / "b.json").read_text()
    result = CliRunner().invoke(app, ["check", *saved, "--baseline", str(out / "b.json"), str(SWEEP)])
    assert result.exit_code == ExitCode.OK, result.output
    # Two shards of the swept claims merge back to every claim.
    for k in (1, 2):
        shard = ["--shard", f"{k}/2", "--json", str(out / f"s{k}.json")]
        result = CliRunner().invoke(app, ["check", *saved, *shard, str(SWEEP)])
        assert result.exit_code == ExitCode.OK, result.output
    result = CliRunner().invoke(
        app, ["merge", "--json", str(out / "m.json"), str(out / "s1.json"), str(out / "s2.json")]
    )
    assert result.exit_code == ExitCode.OK, result.output
    merged = [c["id"] for f in json.loads((out / "m.json").read_text())["files"] for c in f["claims"]]
    assert sorted(merged) == sorted(by_id)


def test_a_file_without_vars_or_sweeps_is_left_as_it_is():
    data = {"cases": {"a": {"kernel": "k", "grid": "1"}}, "claims": [{"case": "a"}]}
    lines = {("cases", "a", "grid"): 3}
    expanded = expand(data, lines)
    assert expanded.data is data and expanded.lines is lines and expanded.claim_origin is None
    assert list(expanded.written([(("claims", 0, "id"), "m")])) == [(("claims", 0, "id"), "m")]
