"""A file's identity in a run, and the exit code of a run."""

import os
from pathlib import Path

from conftest import DATA
from exported_results import static_only

from ncuverify.errors import ExitCode
from ncuverify.results import (
    ClaimResult,
    FileKey,
    FileResult,
    Verdict,
    exit_code,
    file_key,
    judged_nothing,
    nothing_judged_line,
    run_keys,
    set_aside,
)


def test_a_file_is_known_by_its_path_in_its_project_wherever_the_run_starts(tmp_path: Path, monkeypatch):
    assert file_key(DATA / "sample.yaml") == "tests/data/sample.yaml"
    monkeypatch.chdir(DATA)
    assert file_key(Path("sample.yaml")) == "tests/data/sample.yaml"
    monkeypatch.chdir(tmp_path)
    assert file_key(Path(os.path.relpath(DATA / "sample.yaml"))) == "tests/data/sample.yaml"


def test_a_file_outside_any_project_is_known_by_its_name(tmp_path: Path):
    (tmp_path / "deep").mkdir()
    assert file_key(tmp_path / "deep" / "x.yml") == "x.yml"


def test_a_project_is_marked_by_its_root_file(tmp_path: Path):
    (tmp_path / ".ncuverify-root").touch()
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert file_key(tmp_path / "a" / "b" / "x.yaml") == "a/b/x.yaml"


def test_files_of_one_name_in_two_folders_are_two_files(tmp_path: Path):
    (tmp_path / ".ncuverify-root").touch()
    keys = run_keys([tmp_path / "one" / "a.yaml", tmp_path / "two" / "a.yaml"])
    # the stems are numbered as earlier versions numbered them in their recordings
    assert keys == [FileKey("one/a.yaml", "a"), FileKey("two/a.yaml", "a.2")]


def test_the_same_key_from_two_projects_is_numbered(tmp_path: Path):
    for project in ("p", "q"):
        (tmp_path / project).mkdir()
        (tmp_path / project / ".ncuverify-root").touch()
    keys = run_keys([tmp_path / "p" / "a.yaml", tmp_path / "q" / "a.yaml"])
    assert [key.name for key in keys] == ["a.yaml", "a.yaml.2"]


def test_a_result_without_a_key_is_known_by_its_path():
    assert FileResult(DATA / "static.yaml", []).key == "tests/data/static.yaml"
    assert FileResult(DATA / "static.yaml", [], key="given").key == "given"


def test_a_run_whose_every_claim_was_set_aside_is_not_measurable():
    only_profiler = static_only(DATA / "sample.yaml")  # eight claims, every one on the profiler
    some_static = static_only(DATA / "static.yaml")  # six on static facts, one on the profiler
    assert (only_profiler.claims, only_profiler.set_aside) == ([], 8)
    assert judged_nothing([only_profiler]) == 8 and exit_code([only_profiler]) == ExitCode.NOT_MEASURABLE
    # judged some, set others aside: the judged claims decide
    assert judged_nothing([only_profiler, some_static]) == 0
    assert exit_code([only_profiler, some_static]) == ExitCode.OK
    assert set_aside([only_profiler, some_static]) == 9
    # claims about other architectures are not judged either
    elsewhere = [ClaimResult(c.claim, Verdict.OTHER_ARCH) for c in some_static.claims]
    assert exit_code([FileResult(some_static.path, elsewhere, set_aside=1)]) == ExitCode.NOT_MEASURABLE
    assert exit_code([FileResult(some_static.path, [])]) == ExitCode.OK  # nothing to judge, none set aside
    assert (
        nothing_judged_line(1)
        == "nothing could be judged here: 1 claim needs a GPU (--static-only set it aside)"
    )
