"""Output paths, input files and folders are checked before anything runs."""

import os
from pathlib import Path

import cli_invoke
from cli_invoke import invoke, invoke_command
from conftest import DATA

from ncuverify.errors import ExitCode

nothing_runs = cli_invoke.nothing_runs


# --- output paths and folders are checked before anything runs ----------------------------------------------


def bad_outputs(tmp_path: Path) -> list[tuple[list[str], str]]:
    folder = tmp_path / "out"
    folder.mkdir()
    a_file = tmp_path / "plain.txt"
    a_file.write_text("")
    sample = str(DATA / "sample.yaml")
    return [
        (["--json", "/nonexistent/x.json"], "--json: /nonexistent/x.json: no such folder /nonexistent"),
        (["--json", str(folder)], f"--json: {folder}: is a folder"),
        (["--junit-xml", f"{a_file}/x.xml"], f"--junit-xml: {a_file}/x.xml: {a_file} is not a folder"),
        (["--markdown", sample], f"--markdown: {sample}: is an input of this run; refusing to overwrite it"),
        (
            ["--json", str(tmp_path / "r"), "--markdown", str(tmp_path / "r")],
            f"--markdown: {tmp_path / 'r'}: is also the output of --json",
        ),
        (["--html", str(folder)], f"--html: {folder}: is a folder"),
        (["--html", sample], f"--html: {sample}: is an input of this run; refusing to overwrite it"),
        (
            ["--markdown", str(tmp_path / "p"), "--html", str(tmp_path / "p")],
            f"--html: {tmp_path / 'p'}: is also the output of --markdown",
        ),
        (["--save-profile", sample], f"--save-profile: {sample}: is not a folder"),
        (
            ["--save-profile", f"{a_file}/profile"],
            f"--save-profile: {a_file}/profile: cannot make it: {a_file} is not a folder",
        ),
        (["--from-profile", str(tmp_path / "none")], f"--from-profile: {tmp_path / 'none'}: no such folder"),
        (["--reuse", str(tmp_path / "none")], f"--reuse: {tmp_path / 'none'}: no such folder"),
        (
            ["--allow-include", str(tmp_path / "none")],
            f"--allow-include: {tmp_path / 'none'}: no such folder",
        ),
        (["--allow-include", str(a_file)], f"--allow-include: {a_file}: is not a folder"),
    ]


def test_each_bad_output_path_exits_2_before_anything_is_compiled(no_gpu, nothing_runs, tmp_path):
    for options, message in bad_outputs(tmp_path):
        result = invoke(*options, str(DATA / "sample.yaml"))
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), options


def test_a_baseline_given_as_an_output_is_refused(no_gpu, nothing_runs, tmp_path):
    base = tmp_path / "base.json"
    base.write_text('{"files": {}}')
    result = invoke("--baseline", str(base), "--json", str(base), str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout.strip() == f"--json: {base}: is an input of this run; refusing to overwrite it"


def test_an_unwritable_output_is_refused(no_gpu, nothing_runs, monkeypatch, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "old.json").write_text("")
    real_access = os.access

    def access(path, mode) -> bool:
        # As chmod 0o500 makes the folder for any user but root, whom it does not stop.
        inside = Path(path) == locked or locked in Path(path).parents
        return real_access(path, mode) and not (inside and mode & os.W_OK)

    monkeypatch.setattr(os, "access", access)
    for output, message in [
        (locked / "r.json", f"--json: {locked / 'r.json'}: cannot write in {locked}"),
        (locked / "old.json", f"--json: {locked / 'old.json'}: is not writable"),
    ]:
        result = invoke("--json", str(output), str(DATA / "sample.yaml"))
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), result.output


def test_the_other_commands_check_their_outputs_first(no_gpu, nothing_runs, tmp_path):
    sample = str(DATA / "sample.yaml")
    cases = [
        (
            ["baseline", "save", "/nonexistent/b.json", sample],
            "/nonexistent/b.json: no such folder /nonexistent",
        ),
        (
            ["baseline", "save", sample, sample],
            f"{sample}: is an input of this run; refusing to overwrite it",
        ),
        (["audit", "--markdown", str(tmp_path), sample], f"--markdown: {tmp_path}: is a folder"),
        (["audit", "--from-profile", sample, sample], f"--from-profile: {sample}: is not a folder"),
        (["schema", "/nonexistent/s.json"], "/nonexistent/s.json: no such folder /nonexistent"),
        (
            ["merge", sample, "--json", sample],
            f"--json: {sample}: is an input of this run; refusing to overwrite it",
        ),
    ]
    for args, message in cases:
        result = invoke_command(*args)
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), args


# --- paths --------------------------------------------------------------------------------------------------


def test_a_folder_without_expectation_files_is_an_input_error_everywhere(no_gpu, nothing_runs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("")
    message = f"{empty}/: no expectation files (*.yaml, *.yml) in this folder"
    for command in (
        ["check"],
        ["lint"],
        ["audit"],
        ["baseline", "save", str(tmp_path / "b.json")],
    ):
        result = invoke_command(*command, str(empty))
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), command
    # build also takes a folder of sources and artifacts: it says it found none of those either
    result = invoke_command("build", str(empty))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout.strip().splitlines()[-1] == (
        f"{empty}/: nothing to build in this folder (no *.yaml, *.yml, *.cu, *.cubin, *.fatbin, *.o, *.a, *.so)"
    )


def test_a_path_that_does_not_exist_stops_the_run_before_it_starts(no_gpu, nothing_runs, tmp_path):
    result = invoke(str(DATA / "sample.yaml"), str(tmp_path / "absent.yaml"), str(tmp_path / "gone"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout.strip().splitlines() == [
        f"{tmp_path / 'absent.yaml'}: no such expectation file or folder",
        f"{tmp_path / 'gone'}: no such expectation file or folder",
    ]


def test_a_baseline_or_shard_that_is_not_a_regular_file_is_refused_not_read(no_gpu, nothing_runs, tmp_path):
    fifo = tmp_path / "base.json"
    os.mkfifo(fifo)
    result = invoke("--baseline", str(fifo), str(DATA / "sample.yaml"))
    assert (result.exit_code, result.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"--baseline: {fifo}: not a regular file",
    )
    merged = invoke_command("merge", str(fifo), "/dev/zero")
    assert merged.exit_code == ExitCode.BAD_INPUT
    assert merged.stdout.strip().splitlines() == [
        f"{fifo}: not a regular file",
        "/dev/zero: not a regular file",
    ]
