import json
from pathlib import Path

from conftest import DATA, FIXTURES
from typer.testing import CliRunner

from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.pipeline import share_of
from ncuverify.spec import load


def test_shares_partition_the_claims_the_same_way_every_time():
    spec = load(DATA / "sample.yaml")
    shares = [{c.id for c in share_of(spec, k, 3).content.claims} for k in (1, 2, 3)]
    assert set().union(*shares) == {c.id for c in spec.content.claims}
    assert sum(len(s) for s in shares) == len(spec.content.claims)
    assert shares == [
        {c.id for c in share_of(load(DATA / "sample.yaml"), k, 3).content.claims} for k in (1, 2, 3)
    ]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_merged_shards_give_the_whole_run(tmp_path: Path):
    whole = tmp_path / "whole.json"
    assert (
        run(
            "check", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES), "--json", str(whole)
        ).exit_code
        == 0
    )
    parts = []
    for k in (1, 2):
        part = tmp_path / f"shard{k}.json"
        result = run(
            "check",
            str(DATA / "sample.yaml"),
            "--from-profile",
            str(FIXTURES),
            "--shard",
            f"{k}/2",
            "--json",
            str(part),
        )
        assert result.exit_code == ExitCode.OK
        parts.append(str(part))
    merged_file = tmp_path / "merged.json"
    merged = run("merge", *parts, "--json", str(merged_file))
    assert merged.exit_code == ExitCode.OK
    assert "8 passed, 0 failed, 0 errors, 0 skipped" in merged.stdout

    def verdicts(path: Path) -> dict[str, tuple[str, float]]:
        (record,) = json.loads(path.read_text())["files"]
        return {c["id"]: (c["verdict"], c["measured"]) for c in record["claims"]}

    assert verdicts(merged_file) == verdicts(whole)


def test_a_failing_shard_fails_the_merge(tmp_path: Path):
    part = tmp_path / "shard.json"
    run("check", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES), "--json", str(part))
    document = json.loads(part.read_text())
    document["files"][0]["claims"][0]["verdict"] = "failed"
    part.write_text(json.dumps(document))
    assert run("merge", str(part)).exit_code == ExitCode.CLAIM_FAILED


def test_bad_shard_options_and_files(tmp_path: Path):
    assert run("check", str(DATA / "sample.yaml"), "--shard", "3/2").exit_code == ExitCode.BAD_INPUT
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    result = run("merge", str(junk))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "not a result of check --json" in result.stdout
