"""merge and the run's identity."""

from pathlib import Path

from cli_invoke import invoke, invoke_command
from conftest import DATA

from ncuverify.errors import ExitCode

# --- merge and the run's identity ---------------------------------------------------------------------------


def shard_of_sample(tmp_path: Path, k: int, n: int) -> Path:
    from conftest import FIXTURES

    part = tmp_path / f"shard{k}.json"
    result = invoke(
        "--from-profile", str(FIXTURES), "--shard", f"{k}/{n}", "--json", str(part), str(DATA / "sample.yaml")
    )
    assert result.exit_code == ExitCode.OK, result.output
    return part


def test_an_incomplete_set_of_shards_is_refused_unless_partial(tmp_path):
    import json

    from ncuverify import export

    part = shard_of_sample(tmp_path, 1, 2)
    refused = invoke_command("merge", str(part))
    assert (refused.exit_code, refused.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"merge: shard 2/2 missing: {part} is 1 of 2 shards of the run (merge --partial merges them anyway)",
    )
    out = tmp_path / "merged.json"
    partial = invoke_command("merge", "--partial", str(part), "--json", str(out))
    assert partial.exit_code == ExitCode.OK
    assert partial.stdout.startswith(
        "warning: merge: shard 2/2 missing: the results are those of 1 of 2 shards of the run\n"
    )
    # The partial merge says what it lacks, so that it never passes for a whole run later.
    assert json.loads(out.read_text())["run"]["missing"] == ["2/2"]
    again = invoke_command("merge", str(out))
    assert (again.exit_code, again.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"{out}: a partial merge, without shard 2/2 (merge --partial merges it anyway)",
    )
    whole = invoke_command("merge", str(part), str(shard_of_sample(tmp_path, 2, 2)), "--json", str(out))
    assert whole.exit_code == ExitCode.OK and "warning" not in whole.stdout
    suite = export.suite_digest([DATA / "sample.yaml"])
    assert json.loads(out.read_text())["run"] == {"suite": suite, "shard": [1, 1]}


def test_check_says_which_share_of_which_suite_it_ran(no_gpu, tmp_path):
    import json

    from ncuverify import export

    out = tmp_path / "r.json"
    invoke("--static-only", "--shard", "2/3", "--json", str(out), str(DATA / "static.yaml"))
    suite = export.suite_digest([DATA / "static.yaml"])
    assert json.loads(out.read_text())["run"] == {"suite": suite, "shard": [2, 3]}
    invoke("--static-only", "--json", str(out), str(DATA / "static.yaml"), str(DATA / "shared.yaml"))
    suite = export.suite_digest([DATA / "static.yaml", DATA / "shared.yaml"])
    assert json.loads(out.read_text())["run"] == {"suite": suite, "shard": [1, 1]}


def test_a_damaged_shard_is_one_line_exit_2(tmp_path):
    import json

    part = shard_of_sample(tmp_path, 1, 1)
    document = json.loads(part.read_text())
    document["files"][0]["claims"][0]["verdict"] = "pased"
    part.write_text(json.dumps(document))
    result = invoke_command("merge", str(part))
    assert (result.exit_code, result.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"{part}: not a result of check --json: files[0].claims[0].verdict: 'pased' is not a verdict",
    )


def test_merged_shards_count_what_each_set_aside(no_gpu, tmp_path):
    import json

    parts = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        invoke("--static-only", "--shard", f"{k}/2", "--json", str(part), str(DATA / "sample.yaml"))
    out = tmp_path / "merged.json"
    merged = invoke_command("merge", *map(str, parts), "--json", str(out))
    # every claim of sample.yaml is on the profiler: each shard set its share aside, the run judged none
    assert merged.exit_code == ExitCode.NOT_MEASURABLE, merged.output
    assert "nothing could be judged here: 8 claims need a GPU (--static-only set them aside)" in merged.stdout
    document = json.loads(out.read_text())
    assert document["set_aside"] == 8 and document["files"][0]["set_aside"] == 8


def test_a_shard_whose_failed_verdict_was_rewritten_to_passed_is_refused(no_gpu, tmp_path):
    import json

    # A real failure: a local array of 32 floats has a 128-byte stack frame, not 64.
    spec = tmp_path / "static.yaml"
    spec.write_text(
        (DATA / "static.yaml").read_text().replace("expect: {equals: 128}", "expect: {equals: 64}")
    )
    part = tmp_path / "shard.json"
    checked = invoke("--static-only", "--json", str(part), str(spec))
    assert checked.exit_code == ExitCode.CLAIM_FAILED, checked.output
    document = json.loads(part.read_text())
    (claim,) = [c for c in document["files"][0]["claims"] if c["verdict"] == "failed"]
    assert (claim["id"], claim["measured"]) == ("local_array_has_a_stack", 128)
    # Everything that says it failed is rewritten; the measured figures are left as they were.
    claim |= {"verdict": "passed", "reason": None}
    document["exit_code"] = 0
    document["counts"] |= {"passed": document["counts"]["passed"] + 1, "failed": 0}
    document["files"][0]["counts"] = document["counts"]
    part.write_text(json.dumps(document))
    merged = invoke_command("merge", str(part))
    assert (merged.exit_code, merged.stdout) == (
        ExitCode.BAD_INPUT,
        f"{part}: {spec}: claim local_array_has_a_stack: 'passed' in the shard, but its measured values"
        " give 'failed' (measured 128, expected == 64): the shard was edited, or judged by another"
        " ncuverify\n",
    )


def test_merge_writes_sarif_at_the_lines_of_the_files_here(tmp_path):
    import json

    from conftest import FIXTURES
    from test_export_sarif import valid_sarif

    from ncuverify.spec import load

    parts = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        explained = ("--from-profile", str(FIXTURES), "--shard", f"{k}/2", "--json", str(part))
        invoke(*explained, str(DATA / "explain.yaml"))
    out, summary = tmp_path / "merged.sarif", tmp_path / "merged.md"
    merged = invoke_command(
        "merge",
        *map(str, parts),
        "--sarif",
        str(out),
        "--markdown",
        str(summary),
        "--markdown-max-bytes",
        "1024",
    )
    assert merged.exit_code == ExitCode.CLAIM_FAILED
    results = valid_sarif(out.read_text())["runs"][0]["results"]
    lines = load(DATA / "explain.yaml").lines
    regions = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert regions == [lines.claim("gather_is_coalesced"), lines.claim("tile_is_conflict_free")]
    assert all(
        r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tests/data/explain.cu"
        for r in results
    )
    assert len(summary.read_bytes()) <= 1024 and "not shown" in summary.read_text()
    assert json.loads(out.read_text())["runs"][0]["tool"]["driver"]["name"] == "ncuverify"
