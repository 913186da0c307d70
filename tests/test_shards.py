"""Shards of a run: the shares of the claims, their files read back, and a merge that takes only one
whole run."""

import json
import os
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ncuverify import export
from ncuverify.cli import app
from ncuverify.errors import ExitCode, InputError
from ncuverify.export import Shard, ShardOf
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.profile.shares import share_of
from ncuverify.results import FileResult
from ncuverify.spec import load

SAMPLE = DATA / "sample.yaml"
SUITE = export.suite_digest([SAMPLE])
# Written by check --shard 1/2 --json before the JSON named its run.
BEFORE_RUN_IDENTITY = DATA / "shard-before-run-identity.json"


def test_shares_partition_the_claims_the_same_way_every_time():
    spec = load(SAMPLE)
    shares = [{c.id for c in share_of(spec, k, 3).content.claims} for k in (1, 2, 3)]
    assert set().union(*shares) == {c.id for c in spec.content.claims}
    assert sum(len(s) for s in shares) == len(spec.content.claims)
    assert shares == [{c.id for c in share_of(load(SAMPLE), k, 3).content.claims} for k in (1, 2, 3)]


def judged(shard: tuple[int, int] | None = None) -> FileResult:
    return check_file(SAMPLE, CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES, shard=shard), NO_GPU)


@pytest.fixture(scope="module")
def whole() -> FileResult:
    return judged()


@pytest.fixture(scope="module")
def thirds() -> dict[int, str]:
    """The JSON of shards 1/3, 2/3 and 3/3 of the sample, as check --shard K/3 --json writes it."""
    return {k: export.to_json([judged((k, 3))], shard=ShardOf(k, 3, SUITE)) for k in (1, 2, 3)}


def written(folder: Path, texts: dict[str, str]) -> list[Path]:
    for name, text in texts.items():
        (folder / name).write_text(text)
    return [folder / name for name in texts]


def shards(folder: Path, texts: dict[str, str]) -> list[Shard]:
    return [export.read_shard(path) for path in written(folder, texts)]


def verdicts(results: list[FileResult]) -> dict[str, tuple[str, float | None]]:
    (result,) = results
    return {c.claim.id: (c.verdict.value, c.measured) for c in result.claims}


def test_the_shards_of_a_whole_run_merge_into_the_whole_run(whole, thirds, tmp_path: Path):
    given = shards(tmp_path, {f"shard{k}.json": thirds[k] for k in (3, 1, 2)})
    assert [s.shard for s in given] == [ShardOf(3, 3, SUITE), ShardOf(1, 3, SUITE), ShardOf(2, 3, SUITE)]
    merged, warnings = export.merge(given)
    assert warnings == []
    assert verdicts(merged) == verdicts([whole]) and len(merged[0].claims) == 8
    # Every measurement of the shards, each case's metric once (each shard holds every case's static facts).
    rows = [row for s in given for row in s.results[0].measurements.rows]
    assert {row[:3] for row in merged[0].measurements.rows} == {row[:3] for row in rows}
    assert len(merged[0].measurements.rows) == len({row[:3] for row in rows}) < len(rows)
    # The run took as long as its longest shard, not their sum.
    assert merged[0].seconds == max(s.results[0].seconds for s in given)
    assert export.run_seconds(given) == max(s.results[0].seconds for s in given)


def test_an_incomplete_run_is_refused(thirds, tmp_path: Path):
    given = shards(tmp_path, {"shard1.json": thirds[1], "shard3.json": thirds[3]})
    with pytest.raises(InputError) as error:
        export.merge(given)
    assert str(error.value) == (
        f"merge: shard 2/3 missing: {tmp_path}/shard1.json, {tmp_path}/shard3.json are 2 of 3 shards"
        " of the run (merge --partial merges them anyway)"
    )
    with pytest.raises(InputError, match=r"shards 2/3, 3/3 missing: .*shard1.json is 1 of 3 shards"):
        export.merge(given[:1])


def test_partial_merges_an_incomplete_run_and_says_what_is_missing(thirds, tmp_path: Path):
    given = shards(tmp_path, {"shard2.json": thirds[2]})
    merged, warnings = export.merge(given, partial=True)
    assert warnings == ["merge: shards 1/3, 3/3 missing: the results are those of 1 of 3 shards of the run"]
    assert len(merged[0].claims) == len(given[0].results[0].claims)


def test_a_shard_given_twice_is_refused_even_when_partial(thirds, tmp_path: Path):
    copy = tmp_path / "copy"
    copy.mkdir()
    given = shards(tmp_path, {"shard1.json": thirds[1]}) + shards(copy, {"shard1.json": thirds[1]})
    for partial in (False, True):
        with pytest.raises(InputError) as error:
            export.merge(given, partial=partial)
        assert str(error.value) == (
            f"{copy}/shard1.json: run.shard: shard 1/3 again (also {tmp_path}/shard1.json)"
        )


def test_shards_of_another_suite_are_refused(thirds, tmp_path: Path):
    # The same files split the same way, but the second shard was run on edited expectation files.
    edited = json.loads(thirds[2])
    edited["run"]["suite"] = export.suite_digest([DATA / "explain.yaml"])
    given = shards(tmp_path, {"shard1.json": thirds[1], "shard2.json": json.dumps(edited)})
    with pytest.raises(InputError) as error:
        export.merge(given, partial=True)
    assert str(error.value) == (
        f"{tmp_path}/shard2.json: run.suite: a shard of another suite than {tmp_path}/shard1.json"
        " (other expectation files, or edited ones)"
    )


def test_shards_of_runs_split_differently_are_refused(thirds, tmp_path: Path):
    half = export.to_json([judged((2, 2))], shard=ShardOf(2, 2, SUITE))
    given = shards(tmp_path, {"shard1.json": thirds[1], "half.json": half})
    with pytest.raises(InputError) as error:
        export.merge(given)
    assert str(error.value) == (
        f"{tmp_path}/half.json: run.shard: shard 2/2, but {tmp_path}/shard1.json is shard 1/3:"
        " not shards of one run"
    )


def test_shards_over_other_files_are_refused(thirds, tmp_path: Path):
    other = json.loads(thirds[2])
    other["files"][0]["key"] = "elsewhere/sample.yaml"
    given = shards(tmp_path, {"shard1.json": thirds[1], "shard2.json": json.dumps(other)})
    with pytest.raises(InputError) as error:
        export.merge(given, partial=True)
    assert str(error.value) == (
        f"{tmp_path}/shard2.json: files: not the files of {tmp_path}/shard1.json (elsewhere/sample.yaml is"
        " in one of them only; run every shard from the same folder on the same files)"
    )


def test_shards_name_their_files_by_key_so_a_path_given_otherwise_still_merges(thirds, tmp_path: Path):
    other = json.loads(thirds[2])
    other["files"][0]["path"] = str(DATA.resolve() / "sample.yaml")  # run from another folder
    given = shards(tmp_path, {"shard1.json": thirds[1], "shard2.json": json.dumps(other)})
    merged, _ = export.merge(given, partial=True)
    assert [result.key for result in merged] == ["tests/data/sample.yaml"]


def test_a_claim_judged_by_two_shards_is_refused(thirds, tmp_path: Path):
    # An edited shard 1/1 and an earlier one, both holding the same claims.
    old = json.loads(BEFORE_RUN_IDENTITY.read_text())
    first = old["files"][0]["claims"][0]["id"]
    given = shards(tmp_path, {"a.json": json.dumps(old), "b.json": json.dumps(old)})
    with pytest.raises(InputError) as error:
        export.merge(given, partial=True)
    assert str(error.value) == (
        f"{tmp_path}/b.json: claim {first} of tests/data/sample.yaml is also in {tmp_path}/a.json"
    )
    # The same file named twice.
    with pytest.raises(InputError, match=f"a.json: claim {first} of .* is also in .*a.json$"):
        export.merge([given[0], given[0]], partial=True)


def test_results_written_before_the_run_identity_merge_only_when_partial(tmp_path: Path):
    old = export.read_shard(BEFORE_RUN_IDENTITY)
    assert old.shard is None and len(old.results[0].claims) == 4
    with pytest.raises(InputError) as error:
        export.merge([old])
    assert str(error.value) == (
        f"{BEFORE_RUN_IDENTITY}: written by an earlier ncuverify, without the run it belongs to: cannot"
        " check that the shards make one run (merge --partial merges it anyway)"
    )
    merged, warnings = export.merge([old], partial=True)
    assert warnings == [
        f"{BEFORE_RUN_IDENTITY}: written by an earlier ncuverify, without the run it belongs to: not"
        " checked to be a shard of this run"
    ]
    assert [c.claim.id for c in merged[0].claims] == [c.claim.id for c in old.results[0].claims]


@pytest.mark.parametrize("path", ["x\u0000.yaml", "/proc/self/fd/0\u0000/a.yaml", "a/" * 300 + "b.yaml"])
def test_an_earlier_version_s_results_with_a_hostile_path_merge_partially(tmp_path: Path, path: str):
    """Results without keys are known by their paths: one no file system takes is still a file's name."""
    document = json.loads(BEFORE_RUN_IDENTITY.read_text())
    document["files"][0]["path"] = path
    (given,) = written(tmp_path, {"old.json": json.dumps(document)})
    merged, _ = export.merge([export.read_shard(given)], partial=True)
    assert [str(result.path) for result in merged] == [path] and merged[0].key


def test_a_run_without_shards_is_the_whole_of_its_suite(whole, tmp_path: Path):
    (path,) = written(tmp_path, {"run.json": export.to_json([whole])})
    shard = export.read_shard(path)
    assert shard.shard == ShardOf(1, 1, SUITE)
    merged, warnings = export.merge([shard])
    assert verdicts(merged) == verdicts([whole]) and warnings == []


def test_a_failing_shard_fails_the_merge(whole, tmp_path: Path):
    document = json.loads(export.to_json([whole]))
    document["files"][0]["claims"][0]["verdict"] = "failed"
    (path,) = written(tmp_path, {"shard.json": json.dumps(document)})
    merged, _ = export.merge([export.read_shard(path)])
    assert merged[0].claims[0].verdict.value == "failed"


def test_no_shards_is_an_error():
    with pytest.raises(InputError, match=r"^merge: no shards given$"):
        export.merge([])


# --- reading a shard's file --------------------------------------------------------------------------


def test_files_that_are_not_results(tmp_path: Path):
    def refused(name: str) -> str:
        with pytest.raises(InputError) as error:
            export.read_shard(tmp_path / name)
        return str(error.value).removeprefix(f"{tmp_path}/")

    assert refused("absent.json") == "absent.json: no such file"
    (tmp_path / "folder.json").mkdir()
    assert refused("folder.json") == "folder.json: not a result of check --json: not a regular file"
    os.mkfifo(tmp_path / "fifo.json")  # opening it to read would wait for a writer for ever
    assert refused("fifo.json") == "fifo.json: not a result of check --json: not a regular file"
    (tmp_path / "huge.json").write_bytes(b" " * (export.MAX_RESULT_BYTES + 1))
    assert refused("huge.json") == "huge.json: not a result of check --json: larger than 64 MiB"
    (tmp_path / "latin1.json").write_bytes(b'{"ncuverify": "\xe9"}')
    assert refused("latin1.json") == "latin1.json: not a result of check --json: not UTF-8 text (byte 15)"
    (tmp_path / "junk.json").write_text("{not json")
    assert refused("junk.json") == (
        "junk.json: not a result of check --json: not JSON: Expecting property name enclosed in double"
        " quotes: line 1 column 2 (char 1)"
    )
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert refused("deep.json") == "deep.json: not a result of check --json: nested too deeply"
    (tmp_path / "empty.json").write_text("{}")
    assert refused("empty.json") == "empty.json: not a result of check --json: missing 'counts'"


def empty_shard(k: int, n: int, suite: str) -> Shard:
    return Shard(
        Path(f"shard-{k}-{n}-{suite[:1]}.json"), [FileResult(Path("a.yaml"), [])], ShardOf(k, n, suite)
    )


SUITES = ["a" * 64, "b" * 64]


SHARD_SETS = st.lists(
    st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from(SUITES)), min_size=1, max_size=6
)


@settings(max_examples=200, deadline=None)
@given(SHARD_SETS)
def test_merge_accepts_exactly_the_complete_runs(drawn):
    given = [empty_shard(min(k, n), n, suite) for k, n, suite in drawn]
    one_run = len({s.shard.suite for s in given}) == 1 and len({s.shard.n for s in given}) == 1
    once_each = len({s.shard.k for s in given}) == len(given)
    complete = one_run and sorted(s.shard.k for s in given) == list(range(1, given[0].shard.n + 1))
    try:
        merged, warnings = export.merge(given)
    except InputError:
        assert not complete
    else:
        assert complete and warnings == [] and [r.path for r in merged] == [Path("a.yaml")]
    # Partial takes any set of distinct shards of one run, and names what is missing.
    try:
        _, warnings = export.merge(given, partial=True)
    except InputError:
        assert not (one_run and once_each)
    else:
        assert one_run and once_each and (warnings == []) == complete


# --- the command line --------------------------------------------------------------------------------


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_bad_shard_options():
    assert run("check", str(SAMPLE), "--shard", "3/2").exit_code == ExitCode.BAD_INPUT


# --- every verdict judged again, every kernel and case of one version ---------------------------------


@pytest.fixture(scope="module")
def whole_run(whole) -> dict:
    """The sample's whole run (1/1) as check --json writes it, to tamper with."""
    return json.loads(export.to_json([whole], shard=ShardOf(1, 1, SUITE)))


REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"


def with_row(document: dict, case: str, metric: str, value: float) -> dict:
    """The document with the case's value of metric replaced: the shard's figures say something else."""
    edited = json.loads(json.dumps(document))
    (row,) = [m for m in edited["files"][0]["measurements"] if (m["case"], m["metric"]) == (case, metric)]
    row["value"] = value
    return edited


def claim_record(document: dict, claim_id: str) -> dict:
    return next(c for c in document["files"][0]["claims"] if c["id"] == claim_id)


@pytest.mark.parametrize("verdict", ["passed", "xfailed", "skipped", "other_arch"])
def test_a_verdict_that_its_own_measured_values_do_not_give_is_refused(whole_run, tmp_path: Path, verdict):
    # Twice the requests for stride1: 4 sectors a request become 2, and `== 4` fails; the verdict
    # field still says what the shard wants.
    edited = with_row(whole_run, "stride1", REQUESTS, 16384.0)
    claim_record(edited, "contiguous_four_sectors")["verdict"] = verdict
    given = shards(tmp_path, {"shard.json": json.dumps(edited)})
    with pytest.raises(InputError) as error:
        export.merge(given)
    given_instead = (
        "the claim is about every architecture, and the figures were measured on sm_90"
        if verdict == "other_arch"
        else "its measured values give 'failed' (measured 2, expected == 4)"
    )
    assert str(error.value) == (
        f"{tmp_path}/shard.json: {SAMPLE}: claim contiguous_four_sectors: {verdict!r} in the shard, but"
        f" {given_instead}: the shard was edited, or judged by another ncuverify"
    )


def test_a_failing_verdict_is_kept_and_a_passing_one_takes_the_values_judged_again(whole_run, tmp_path: Path):
    edited = with_row(whole_run, "stride1", REQUESTS, 16384.0)
    for claim_id in ("contiguous_four_sectors", "one_request_per_warp"):
        claim_record(edited, claim_id)["verdict"] = "failed"  # as check judged them on these figures
    claim_record(edited, "stride32_sectors")["measured"] = 4.0  # a figure the verdict does not rest on
    (merged,), _ = export.merge(shards(tmp_path, {"shard.json": json.dumps(edited)}))
    verdict = {c.claim.id: (c.verdict.value, c.measured) for c in merged.claims}
    assert verdict["contiguous_four_sectors"][0] == verdict["one_request_per_warp"][0] == "failed"
    assert verdict["stride32_sectors"] == ("passed", 32.0)
    # a stored error says what the figures cannot (a stale recording, a case that did not run)
    claim_record(edited, "stride32_sectors")["verdict"] = "error"
    (merged,), _ = export.merge(shards(tmp_path, {"shard.json": json.dumps(edited)}))
    assert next(c for c in merged.claims if c.claim.id == "stride32_sectors").verdict.value == "error"


@pytest.mark.parametrize(
    ("field", "what"),
    [
        (
            "kernels",
            "provenance.kernels[tests/data/sample.yaml::read_stride1] (the digest of its source and options)",
        ),
        (
            "cases",
            "provenance.cases[tests/data/sample.yaml::stride1] (the digest of its launch, arguments or program)",
        ),
    ],
)
def test_shards_of_two_versions_of_a_kernel_or_a_case_are_refused(thirds, tmp_path: Path, field, what):
    edited = json.loads(thirds[2])
    digests = edited["files"][0]["provenance"][field]
    name = what.split("[")[1].split("]")[0]
    before = digests.setdefault(name, "0123456789abcdef")  # recordings made before cases had digests
    digests[name] = "f" * 16
    first = json.loads(thirds[1])
    first["files"][0]["provenance"][field][name] = before
    given = shards(
        tmp_path,
        {"shard1.json": json.dumps(first), "shard2.json": json.dumps(edited), "shard3.json": thirds[3]},
    )
    with pytest.raises(InputError) as error:
        export.merge(given)
    assert str(error.value) == (
        f"{tmp_path}/shard2.json: {what} is {'f' * 16}, but {before} in {tmp_path}/shard1.json:"
        " the shards measured two versions of it, not one run"
    )


def test_shards_that_ran_two_versions_of_a_program_file_are_refused(thirds, tmp_path: Path):
    case, path = "tests/data/sample.yaml::stride1", "bench/run.py"
    first, edited = json.loads(thirds[1]), json.loads(thirds[2])
    first["files"][0]["provenance"]["program_files"] = {case: {path: "a" * 64}}
    edited["files"][0]["provenance"]["program_files"] = {case: {path: "b" * 64}}
    given = shards(
        tmp_path,
        {"shard1.json": json.dumps(first), "shard2.json": json.dumps(edited), "shard3.json": thirds[3]},
    )
    with pytest.raises(InputError) as error:
        export.merge(given)
    assert str(error.value) == (
        f"{tmp_path}/shard2.json: provenance.program_files[{case}][{path}] (the sha256 of a file its"
        f" command runs) is {'b' * 64}, but {'a' * 64} in {tmp_path}/shard1.json: the shards measured two"
        " versions of it, not one run"
    )


def test_shards_whose_kernels_have_other_static_facts_are_refused(thirds, tmp_path: Path):
    # A run of static claims alone carries no digests: the kernels' facts tell the builds apart, wherever
    # two shards built one kernel. Shard 2 made here to hold a fact of read_stride1 too, another one.
    first, second = json.loads(thirds[1]), json.loads(thirds[2])
    (row,) = [
        r
        for r in first["files"][0]["measurements"]
        if (r["case"], r["metric"]) == ("stride1", "static__registers_per_thread")
    ]
    second["files"][0]["measurements"].append({**row, "value": 40.0})
    given = shards(tmp_path, {"shard1.json": json.dumps(first), "shard2.json": json.dumps(second)})
    with pytest.raises(InputError) as error:
        export.merge(given, partial=True)
    assert str(error.value) == (
        f"{tmp_path}/shard2.json: {SAMPLE}: static__registers_per_thread of kernel read_stride1 (case"
        f" stride1) is 40.0, but 10.0 in {tmp_path}/shard1.json: the shards measured two versions of it,"
        " not one run"
    )
