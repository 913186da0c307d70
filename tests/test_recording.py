"""Recordings as hostile input: every file a pull request can commit in one is read with a bound, only
inside the recording, field by field, and anything damaged ends in one line naming the file and the
field, with exit 2."""

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from conftest import DATA, FIXTURES, RECORDINGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ncuverify.cli import app
from ncuverify.errors import ExitCode, InputError
from ncuverify.profile import recording
from ncuverify.provenance import Provenance
from ncuverify.results import FileKey, run_keys


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of sample.yaml's recording, to damage."""
    folder = tmp_path / "rec"
    folder.mkdir()
    for name in ("ncu.log", "status.json", "provenance.json", "commands.json"):
        shutil.copy(FIXTURES / "sample" / name, folder / name)
    return folder


def replay(folder: Path) -> tuple[int, str]:
    """`ncuverify check --from-profile folder tests/data/sample.yaml`: its exit code and its input error."""
    result = CliRunner().invoke(app, ["check", "--from-profile", str(folder), str(DATA / "sample.yaml")])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stdout.strip().splitlines()
    return result.exit_code, lines[-1] if lines else ""


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    path.write_text(json.dumps(change(data)))


def test_the_copy_replays_whole(no_gpu, copy: Path):
    result = CliRunner().invoke(app, ["check", "--from-profile", str(copy), str(DATA / "sample.yaml")])
    assert result.exit_code == ExitCode.OK, result.stdout


def set_field(index: int, key: str, value):
    def change(data):
        data[index][key] = value
        return data

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda data: {"cases": data}, "not a list of cases"),
        (set_field(0, "ok", "true"), "[0].ok: not true or false"),
        (set_field(1, "launches", -3), "[1].launches: not a whole number from 1 to 10000"),
        (set_field(1, "launches", 10**15), "[1].launches: not a whole number from 1 to 10000"),
        (set_field(0, "case", 12), "[0].case: not a name"),
        (set_field(2, "error", ["x"]), "[2].error: not a string or null"),
        (
            set_field(0, "values", {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4}),
            "[0].values: 'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum' is not a buffer read back (buffer__NAME.STATISTIC)",
        ),
        (lambda data: [*data, data[0]], "[4].case: 'sample::stride1' appears twice"),
        (lambda data: [*data, 0], "[4]: not an object"),
    ],
)
def test_a_damaged_status_is_an_input_error_naming_its_field(no_gpu, copy: Path, change, message):
    edit_json(copy / "status.json", change)
    assert replay(copy) == (ExitCode.BAD_INPUT, f"{copy}/status.json: not a runner status: {message}")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not JSON (Expecting value: line 1 column 1 (char 0))"),
        ("[" * 50_000, "not JSON (nested too deeply)"),
        (
            '[{"case": "sample::stride1", "ok": true}] trailing',
            "not JSON (Extra data: line 1 column 43 (char 42))",
        ),
    ],
)
def test_a_status_that_is_not_json_is_an_input_error(no_gpu, copy: Path, text: str, message: str):
    (copy / "status.json").write_text(text)
    assert replay(copy) == (ExitCode.BAD_INPUT, f"{copy}/status.json: not a runner status: {message}")


def test_a_huge_status_is_refused_before_it_is_read(no_gpu, copy: Path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_JSON_BYTES", 10_000)
    (copy / "status.json").write_text("[" + " " * 20_000 + "]")
    limit = f"{copy}/status.json: larger than 10000 bytes; no recording holds such a file"
    assert replay(copy) == (ExitCode.BAD_INPUT, limit)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda data: [data], "not an object"),
        (lambda data: {**data, "gpu": 200}, "gpu: not a string"),
        (lambda data: {k: v for k, v in data.items() if k != "cuda_driver"}, "cuda_driver: missing"),
        (lambda data: {**data, "ncu_version": 2025}, "ncu_version: not a string or null"),
        (
            lambda data: {**data, "arch": "sm_90 --include-path=/etc"},
            "arch: not a build target such as sm_90",
        ),
        (lambda data: {**data, "ncu_command": "ncu --csv"}, "ncu_command: not a list of strings"),
        (
            lambda data: {**data, "kernels": {"sample::scale": 7}},
            "kernels: not an object of digests (strings)",
        ),
        (lambda data: {**data, "cases": ["sample::stride1"]}, "cases: not an object of digests (strings)"),
        (
            lambda data: {**data, "cases": {"sample::stride1": {"grid": 1}}},
            "cases: not an object of digests (strings)",
        ),
        (
            lambda data: {**data, "program_files": {"sample::run": "0f3c"}},
            "program_files: not an object of objects of digests (strings)",
        ),
        (
            lambda data: {**data, "program_files": {"sample::run": {"run.py": 1}}},
            "program_files: not an object of objects of digests (strings)",
        ),
        (lambda data: {**data, "nvcc": {"sample::k": 13}}, "nvcc: not an object of digests (strings)"),
        (
            lambda data: {**data, "measurement_keys": {"sample::stride1": 7}},
            "measurement_keys: not an object of digests (strings)",
        ),
        (lambda data: {**data, "host": "ci-7"}, "'host': not a field of a provenance"),
        (lambda data: {**data, "gpu": "x" * 70_000}, "gpu: longer than 65536 characters"),
    ],
)
def test_a_damaged_provenance_is_an_input_error_naming_its_field(no_gpu, copy: Path, change, message):
    edit_json(copy / "provenance.json", change)
    assert replay(copy) == (ExitCode.BAD_INPUT, f"{copy}/provenance.json: not a provenance: {message}")


UNTIED = (
    ": its recorded figures may not be today's; record them again (check --save-profile), or pass"
    " --allow-stale to judge them anyway"
)


@pytest.mark.parametrize(
    ("change", "missing"),
    [
        (
            lambda data: {k: v for k, v in data.items() if k != "kernels"},
            "kernel read_stride1 of case stride1 (and 2 more)",
        ),
        (lambda data: {**data, "kernels": {}}, "kernel read_stride1 of case stride1 (and 2 more)"),
        (
            lambda data: {
                **data,
                "kernels": {k: v for k, v in data["kernels"].items() if k != "sample::scale"},
            },
            "kernel scale of case scale_2d",
        ),
        (  # the digests are there, but of another file's kernels
            lambda data: {
                **data,
                "kernels": {f"other::{k.split('::')[1]}": v for k, v in data["kernels"].items()},
            },
            "kernel read_stride1 of case stride1 (and 2 more)",
        ),
    ],
)
def test_a_recording_without_the_digests_of_its_kernels_is_refused_naming_what_it_lacks(
    no_gpu, copy: Path, change, missing
):
    """Figures that no digest ties to today's kernels are stale, as those of a kernel that changed are:
    one line names the provenance, the kernel and its case."""
    edit_json(copy / "provenance.json", change)
    expected = f"{copy}/provenance.json: the recording holds no digest of {missing}{UNTIED}"
    assert replay(copy) == (ExitCode.BAD_INPUT, expected)


def test_allow_stale_judges_figures_without_digests_naming_each_in_a_warning(no_gpu, copy: Path):
    edit_json(copy / "provenance.json", lambda data: {**data, "kernels": {}})
    result = CliRunner().invoke(
        app, ["check", "--from-profile", str(copy), "--allow-stale", str(DATA / "sample.yaml")]
    )
    assert result.exit_code == ExitCode.OK, result.stdout
    shown = " ".join(result.stdout.split())
    assert (
        "warning: the recording holds no digest of kernel scale of case scale_2d: its figures may be stale"
        in shown
    )


def test_a_kernel_that_no_replayed_claim_reads_needs_no_digest(no_gpu, copy: Path, tmp_path: Path):
    """Only the kernels whose recorded figures are judged must be tied to today's."""
    content = yaml.safe_load((DATA / "sample.yaml").read_text())
    content["claims"] = [claim for claim in content["claims"] if claim.get("case") != "scale_2d"]
    edited = tmp_path / "sample.yaml"  # known by its name, as the recording's `sample` is
    edited.write_text(yaml.safe_dump(content))
    without = {
        k: v
        for k, v in json.loads((copy / "provenance.json").read_text())["kernels"].items()
        if k != "sample::scale"
    }
    edit_json(copy / "provenance.json", lambda data: {**data, "kernels": without})
    result = CliRunner().invoke(app, ["check", "--from-profile", str(copy), str(edited)])
    assert result.exit_code == ExitCode.OK, result.stdout
    assert "passed, 0 failed" in result.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"ncu": []}', "not a list"),
        ('[["ncu", 5]]', "[0]: not a list of strings"),
        ("[[", "not JSON (Expecting value: line 1 column 3 (char 2))"),
    ],
)
def test_damaged_commands_are_an_input_error(no_gpu, copy: Path, text: str, message: str):
    (copy / "commands.json").write_text(text)
    assert replay(copy) == (ExitCode.BAD_INPUT, f"{copy}/commands.json: not the runs' commands: {message}")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('"ID","Kernel Name","m","m"\n"0","k","1","2"\n', "the column 'm' appears twice"),
        ('"ID","Kernel Name","m"\n"zero","k","1"\n', "the launch ID 'zero' is not a number"),
        ('"ID","Kernel Name","m"\n"0","k"\n', "row 1 has 2 fields, the header 3"),
    ],
)
def test_an_ncu_log_that_is_not_ncu_s_csv_is_an_input_error(no_gpu, copy: Path, text: str, reason: str):
    (copy / "ncu.log").write_text(text)
    expected = f"{copy}/ncu.log: ncu's CSV could not be read ({reason})"
    assert replay(copy) == (ExitCode.BAD_INPUT, expected)


def test_an_ncu_log_whose_launches_are_not_the_status_s_cases_is_an_input_error(no_gpu, copy: Path):
    edit_json(copy / "status.json", lambda data: [data[1], data[0], *data[2:]])
    assert replay(copy) == (
        ExitCode.BAD_INPUT,
        f"{copy}/ncu.log: launch 0 ran _Z11read_strideILi1EEvPKfPf, expected _Z11read_strideILi32EEvPKfPf: "
        "is another profiler or kernel filter in the way?",
    )


SAMPLE_LOG = (FIXTURES / "sample" / "ncu.log").read_bytes()
LOG_LINES = SAMPLE_LOG.split(b"\n")  # 3 lines of ncu's messages, the header, the units, 6 launches, ""
HEADER, FIRST_LAUNCH = 3, 5
FIRST_ID = SAMPLE_LOG.index(b'"0","681"') + 2  # just after the first launch's ID


def case_named(case: str) -> str:
    """A case of sample.yaml as a replay names it."""
    [key] = run_keys([DATA / "sample.yaml"])
    return f"'{key.name}::{case}'"


def lines_but(*dropped: int) -> bytes:
    return b"\n".join(line for number, line in enumerate(LOG_LINES) if number not in dropped)


def row_changed(number: int, change) -> bytes:
    return b"\n".join(change(line) if at == number else line for at, line in enumerate(LOG_LINES))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (SAMPLE_LOG[: len(SAMPLE_LOG) * 2 // 3], "ncu's CSV could not be read (row 3 has 193 fields, the header 289)"),
        (lines_but(10), f"damaged: it lacks the launches of case {case_named('misaligned')}, which the recorded status says ran; the log was cut short, or edited"),
        (lines_but(8, 9, 10), f"damaged: it lacks the launches of case {case_named('stride32')}, which the recorded status says ran; the log was cut short, or edited"),
        (b"\n".join(LOG_LINES[:HEADER]) + b"\n", f"damaged: it lacks the launches of case {case_named('stride1')}, which the recorded status says ran; the log was cut short, or edited"),
        (b"", f"damaged: it lacks the launches of case {case_named('stride1')}, which the recorded status says ran; the log was cut short, or edited"),
        (row_changed(FIRST_LAUNCH, lambda line: line.rsplit(b",", 1)[0]), "ncu's CSV could not be read (row 2 has 288 fields, the header 289)"),
        (row_changed(FIRST_LAUNCH, lambda line: line + b',"1"'), "ncu's CSV could not be read (row 2 has 290 fields, the header 289)"),
        (row_changed(HEADER, lambda line: line + b"\n" + line), "ncu's CSV could not be read (row 1 repeats the header)"),
        (SAMPLE_LOG + bytes(range(128, 256)), f"damaged: not UTF-8 text at byte {len(SAMPLE_LOG)} (ncuverify saves ncu's log as UTF-8)"),
        (SAMPLE_LOG[:100] + b"\xc3" + SAMPLE_LOG[100:], "damaged: not UTF-8 text at byte 100 (ncuverify saves ncu's log as UTF-8)"),
        (SAMPLE_LOG[:FIRST_ID] + b"\0" + SAMPLE_LOG[FIRST_ID:], f"damaged: a NUL at byte {FIRST_ID} (ncu's log is text)"),
    ],
    ids=["cut_in_a_row", "cut_at_a_launch", "cut_in_a_case", "cut_before_the_csv", "empty", "a_field_lost",
         "a_field_more", "header_twice", "binary_junk", "a_byte_not_utf8", "a_nul"],
)  # fmt: skip
def test_a_damaged_ncu_log_is_an_input_error_saying_what_is_wrong(
    no_gpu, copy: Path, data: bytes, message: str
):
    """Not the claim errors of a live run whose ncu wrote such a log: a recorded log is what ncuverify
    saved, and one that is not whole, or not ncu's CSV, has been damaged since."""
    (copy / "ncu.log").write_bytes(data)
    assert replay(copy) == (ExitCode.BAD_INPUT, f"{copy}/ncu.log: {message}")


def test_a_whole_log_that_lacks_a_metric_a_claim_reads_fails_that_claim(no_gpu, copy: Path):
    """A log that is whole but lacks a metric's column (a recording made for other claims) is no damage:
    the claim that reads it is an error, as in a live run, and the others are judged."""
    import csv
    import io

    metric = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    rows = list(csv.reader(io.StringIO(b"\n".join(LOG_LINES[HEADER:]).decode())))
    at = rows[0].index(metric)
    written = io.StringIO()
    csv.writer(written, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        row[:at] + row[at + 1 :] for row in rows
    )
    (copy / "ncu.log").write_bytes(b"\n".join(LOG_LINES[:HEADER]) + b"\n" + written.getvalue().encode())
    result = CliRunner().invoke(app, ["check", "--from-profile", str(copy), str(DATA / "sample.yaml")])
    assert result.exit_code == ExitCode.CLAIM_FAILED, result.stdout
    assert f"error one_request_per_warp: no value of {metric} from ncu for case stride1" in result.stdout
    assert "input error" not in result.stdout and ": 3 passed, 0 failed, 5 errors" in result.stdout


def test_a_huge_ncu_log_is_refused_before_it_is_read(no_gpu, copy: Path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_LOG_BYTES", 1000)
    assert replay(copy) == (
        ExitCode.BAD_INPUT,
        f"{copy}/ncu.log: larger than 1000 bytes; no recording holds such a file",
    )


def test_a_file_linked_from_outside_the_recording_is_not_read(no_gpu, copy: Path, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text('"ID","Kernel Name","password"\n"0","k","hunter2"\n')
    (copy / "ncu.log").unlink()
    (copy / "ncu.log").symlink_to(secret)
    code, line = replay(copy)
    assert (code, line) == (
        ExitCode.BAD_INPUT,
        f"{copy}/ncu.log: a symbolic link; a recording holds plain files",
    )
    assert "hunter2" not in line


def test_a_per_file_folder_linked_from_elsewhere_is_not_read(no_gpu, copy: Path, tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "sample").symlink_to(copy)
    assert replay(root) == (
        ExitCode.BAD_INPUT,
        f"{root}/sample/provenance.json: lies outside the recording {root}; a recording holds its own files",
    )


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(no_gpu, copy: Path):
    (copy / "status.json").unlink()
    os.mkfifo(copy / "status.json")
    assert replay(copy) == (ExitCode.BAD_INPUT, f"{copy} is not a whole recording: it lacks status.json")
    (copy / "commands.json").unlink()
    os.mkfifo(copy / "commands.json")
    with pytest.raises(InputError, match=r"commands\.json: not a plain file; a recording holds plain files$"):
        recording._commands(copy / "commands.json", copy)


def test_a_log_without_its_status_is_an_input_error(no_gpu, copy: Path):
    shutil.copy(copy / "ncu.log", copy / "ncu.1.log")
    expected = f"{copy} is not a whole recording: it lacks status.1.json beside ncu.1.log"
    assert replay(copy) == (ExitCode.BAD_INPUT, expected)


def test_a_missing_recording_names_what_it_lacks(no_gpu, tmp_path: Path):
    expected = f"no recording of sample in {tmp_path}: {tmp_path}/sample lacks ncu.log"
    assert replay(tmp_path) == (ExitCode.BAD_INPUT, expected)


def test_a_file_key_cannot_reach_above_the_recording(tmp_path: Path, copy: Path):
    inner = copy / "inner"
    inner.mkdir()
    with pytest.raises(InputError, match=r"lies outside the recording"):
        recording.load_provenance(inner, FileKey("..", ".."))


def test_saving_never_writes_through_a_link(tmp_path: Path):
    whole = recording.load(FIXTURES, run_keys([DATA / "sample.yaml"]))
    folder = tmp_path / "saved"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (folder / "ncu.log").symlink_to(victim)
    with pytest.raises(InputError) as refused:
        recording.save(folder, whole.runs, whole.provenance)
    assert (
        str(refused.value) == f"{folder}/ncu.log: a symbolic link; refusing to write the recording through it"
    )
    assert victim.read_text() == "keep me"


def test_the_provenance_shows_no_escape_sequences(copy: Path):
    edit_json(copy / "provenance.json", lambda data: {**data, "gpu": "\x1b]0;owned\x07NVIDIA H200"})
    assert (
        recording.load_provenance(copy, run_keys([DATA / "sample.yaml"])[0])
        .describe()
        .startswith("\\x1b]0;owned\\x07NVIDIA H200 (sm_90")
    )


def test_the_committed_recordings_load_and_save_to_the_same_statuses(tmp_path: Path):
    whole = recording.load(RECORDINGS, [])
    recording.save(tmp_path, whole.runs, whole.provenance)
    for path in RECORDINGS.glob("status*.json"):
        assert json.loads((tmp_path / path.name).read_text()) == json.loads(path.read_text())
    assert json.loads((tmp_path / "provenance.json").read_text()) == json.loads(
        (RECORDINGS / "provenance.json").read_text()
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("580.159.04\n", "580.159.04"), ("\x1b[31m580\n", None), ("", None), ("No devices", None)],
)
def test_the_driver_version_is_what_nvidia_smi_says_when_it_says_one(tmp_path, monkeypatch, answer, expected):
    (tmp_path / "answer").write_text(answer)
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nexec /bin/cat {tmp_path / 'answer'}\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert recording.nvidia_driver_version() == expected


def test_an_nvidia_smi_that_never_answers_is_stopped(tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nsleep 600 &\nexec sleep 600\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setattr(recording, "NVIDIA_SMI_TIMEOUT_S", 1)
    assert recording.nvidia_driver_version() is None


# --- any content whatever -------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
SAMPLE_STATUS = json.loads((FIXTURES / "sample" / "status.json").read_text())
SAMPLE_PROVENANCE = json.loads((FIXTURES / "sample" / "provenance.json").read_text())


def mutated(original: dict, draw) -> dict:
    """original with some fields replaced by arbitrary JSON, or dropped."""
    changed = dict(original)
    for key in draw(st.lists(st.sampled_from(sorted(original)), max_size=3)):
        if draw(st.booleans()):
            changed[key] = draw(json_values)
        else:
            changed.pop(key, None)
    return changed


FILES = ["status.json", "provenance.json", "commands.json", "ncu.log"]
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.data(), name=st.sampled_from(FILES))
def test_any_content_of_any_file_loads_or_is_an_input_error_naming_it(tmp_path_factory, data, name):
    folder = tmp_path_factory.mktemp("rec")
    for file in FILES:
        shutil.copy(FIXTURES / "sample" / file, folder / file)
    if name == "status.json":
        content = [mutated(entry, data.draw) for entry in SAMPLE_STATUS] if data.draw(st.booleans()) else None
        text = json.dumps(content if content is not None else data.draw(json_values))
    elif name == "provenance.json":
        text = json.dumps(
            mutated(SAMPLE_PROVENANCE, data.draw) if data.draw(st.booleans()) else data.draw(json_values)
        )
    elif name == "commands.json":
        text = json.dumps(data.draw(json_values))
    else:
        text = data.draw(st.text(max_size=300))
    (folder / name).write_text(text)
    try:
        loaded = recording.load(folder, run_keys([DATA / "sample.yaml"]))
        measured = pipeline_measurements(loaded)
    except InputError as error:
        assert str(error).startswith((f"{folder}/", f"{folder} ")), str(error)
        return
    assert measured is not None


def pipeline_measurements(loaded: recording.Recording):
    from ncuverify.profile.per_file import measurements_by_file

    symbols = {f"sample::{name}": symbol for name, symbol in SAMPLE_SYMBOLS.items()}
    return measurements_by_file(loaded.runs, ["sample"], symbols)


SAMPLE_SYMBOLS = {
    "stride1": "_Z11read_strideILi1EEvPKfPf",
    "stride32": "_Z11read_strideILi32EEvPKfPf",
    "scale_2d": "scale",
    "misaligned": "_Z11read_strideILi1EEvPKfPf",
}


@FUZZ
@given(at=st.integers(0, len(SAMPLE_LOG)), cut=st.integers(0, 2000), junk=st.binary(max_size=20))
def test_a_log_cut_or_spliced_anywhere_is_refused_naming_it_or_measures_every_case(
    tmp_path_factory, at, cut, junk
):
    """Whatever part of a recorded log is lost, and whatever bytes take its place: an input error naming
    the log, or a measurement of every case the status says ran, never a case left unmeasured."""
    folder = tmp_path_factory.mktemp("rec")
    for file in FILES:
        shutil.copy(FIXTURES / "sample" / file, folder / file)
    (folder / "ncu.log").write_bytes(SAMPLE_LOG[:at] + junk + SAMPLE_LOG[at + cut :])
    from ncuverify.profile.per_file import measurements_by_file

    [key] = run_keys([DATA / "sample.yaml"])
    symbols = {f"{key.name}::{name}": symbol for name, symbol in SAMPLE_SYMBOLS.items()}
    try:
        measured = measurements_by_file(recording.load(folder, [key]).runs, [key.name], symbols)
    except InputError as error:
        assert str(error).startswith(f"{folder}/ncu.log: "), str(error)
        return
    assert measured[key.name].cases == set(SAMPLE_SYMBOLS) and measured[key.name].unmeasured == ()


def test_a_recorded_name_is_given_its_file_s_key_and_a_name_of_no_case_is_left_as_it_is():
    renamed = recording.renamed
    keys = [FileKey("expectations/a::b.yaml", "a::b"), FileKey("x.yaml", "x")]
    assert renamed("x::add#2", keys) == "x.yaml::add#2"  # an earlier version named a file by its stem
    assert renamed("a::b::add (repeats)", keys) == "expectations/a::b.yaml::add (repeats)"
    assert renamed("x.yaml::add", keys) == "x.yaml::add" and renamed("add", keys) == "add"
    assert renamed("x::k[l]", keys) == "x::k[l]" and renamed("gemms[x::k]", keys) == "gemms[x::k]"


def test_which_nvcc_compiled_is_kept_and_shown_and_a_recording_without_it_saves_as_it_was(tmp_path: Path):
    key = run_keys([DATA / "sample.yaml"])[0]
    plain = recording.load_provenance(FIXTURES / "sample", key)
    assert plain.nvcc == {} and plain.compiled_with() is None and "nvcc" not in plain.describe()
    recording.save(tmp_path / "plain", [], plain)
    assert "nvcc" not in json.loads((tmp_path / "plain" / "provenance.json").read_text())
    which = {f"{key.name}::k": "nvcc 13.0.88 at /usr/local/cuda-13.0"}
    compiled = replace(plain, nvcc=which)
    assert compiled.compiled_with() == "nvcc 13.0.88 at /usr/local/cuda-13.0"
    assert "; nvcc 13.0.88 at /usr/local/cuda-13.0) on " in compiled.describe()
    recording.save(tmp_path / "nvcc", [], compiled)
    assert json.loads((tmp_path / "nvcc" / "provenance.json").read_text())["nvcc"] == which
    assert Provenance.from_json(json.loads((tmp_path / "nvcc" / "provenance.json").read_text())) == compiled
