"""Program cases profiled on the CPU through a stand-in ncu (tests/data/fake_ncu/program_ncu): the
program run in its folder with a minimal environment, its launches selected and combined, its failures
on its own claims, programs run only where allowed, and the run recorded and replayed."""

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import DATA, NO_GPU
from daemons import DAEMONS, assert_none_running, daemon_pids

from ncuverify.environment import Environment, Gpu
from ncuverify.errors import ExitCode
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.profile import NcuOptions
from ncuverify.results import FileResult, Verdict, exit_code

PROGRAM_NCU = DATA / "fake_ncu" / "program_ncu"
METRIC = "launch__registers_per_thread"  # the fake ncu reports len(name) + 1000 * launch ID: 28, 1028, ...
PROGRAM = """import sys
print("adding", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def program_file(folder: Path, case: str = "", exit_code: int = 0, expect: str = "{equals: 28}") -> Path:
    (folder / ".ncuverify-root").touch()
    (folder / "bench").mkdir(exist_ok=True)
    (folder / "bench" / "add.py").write_text(PROGRAM)
    path = folder / "programs.yaml"
    path.write_text(f"""
cases:
  add:
    program:
      command: [python3, add.py, "{exit_code}"]
      cwd: bench
      env: {{FAKE_LAUNCHES: "void copy(float*),void add_kernel<4>(float*),void add_kernel<4>(float*)",
             FAKE_NOTES: {folder / "notes.json"}, CHOSEN: "yes"}}
      timeout_s: 20
    kernel: add_kernel
{case}
claims:
  - id: add_registers
    case: add
    metric: {METRIC}
    expect: {expect}
    cite: {{document: d.txt, section: "1", figure: registers}}
""")
    return path


def checked(path: Path, explain: bool = False, **options: object) -> FileResult:
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(PROGRAM_NCU), None, gpu_count=1)
    run = CheckOptions(ncu=NcuOptions(executable=str(PROGRAM_NCU)), explain=explain, **options)  # type: ignore[arg-type]
    [result] = check_files([path], run, environment)
    assert result.input_error is None and result.internal_error is None
    return result


def test_a_program_case_is_run_by_ncu_in_its_folder_with_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("NOT_FOR_PROGRAMS", "1")
    result = checked(program_file(tmp_path), allow_programs=True)
    [claim] = result.claims
    assert claim.verdict is Verdict.PASSED, claim.reason
    notes = json.loads((tmp_path / "notes.json").read_text())
    assert notes["cwd"] == str((tmp_path / "bench").resolve())
    assert notes["env"]["CHOSEN"] == "yes" and notes["env"]["LC_ALL"] == "C"
    assert "NOT_FOR_PROGRAMS" not in notes["env"]  # only the kept variables and the case's own
    assert notes["env"]["CUDA_VISIBLE_DEVICES"] == "0"
    arguments = notes["arguments"]
    assert arguments[arguments.index("--kernel-name") + 1] == "regex:add_kernel"
    assert arguments[arguments.index("--") + 1 :] == [
        shutil.which("python3"),
        "add.py",
        "0",
    ]  # found on the PATH


def test_without_allow_programs_nothing_runs_and_the_claims_say_how(tmp_path):
    result = checked(program_file(tmp_path))
    [claim] = result.claims
    assert claim.verdict is Verdict.ERROR
    assert "pass --allow-programs" in str(claim.reason)
    assert not (tmp_path / "notes.json").exists()


def test_a_program_that_fails_fails_its_claims_with_its_command_and_standard_error(tmp_path):
    [claim] = checked(program_file(tmp_path, exit_code=3), allow_programs=True).claims
    assert claim.verdict is Verdict.ERROR
    assert "the program `python3 add.py 3` exited with 3 under ncu" in str(claim.reason)
    assert "its standard error ends: adding" in str(claim.reason)


def test_a_program_that_launches_nothing_selected_fails_its_claims(tmp_path):
    path = program_file(tmp_path)
    path.write_text(path.read_text().replace("kernel: add_kernel", "kernel_exact: absent"))
    [claim] = checked(path, allow_programs=True).claims
    assert claim.verdict is Verdict.ERROR
    assert "ncu profiled no launch that the case selects" in str(claim.reason)


def test_a_program_past_its_time_limit_is_stopped(tmp_path):
    path = program_file(tmp_path)
    (tmp_path / "bench" / "add.py").write_text("import time\ntime.sleep(60)\n")
    path.write_text(path.read_text().replace("timeout_s: 20", "timeout_s: 1"))
    [claim] = checked(path, allow_programs=True).claims
    assert "did not end within 1 s under ncu; stopped" in str(claim.reason)


@pytest.mark.parametrize("limit", ["20", "1"])
def test_a_program_s_daemons_end_with_its_case(tmp_path, limit):
    """Daemons the program starts in sessions of their own: gone once check returns, whether the program
    ended on its own or was stopped at its time limit."""
    path = program_file(tmp_path)
    wait = "" if limit == "20" else "time.sleep(60)\n"
    script = DAEMONS.format(folder=tmp_path)
    (tmp_path / "bench" / "add.py").write_text(
        f"import subprocess, time\nsubprocess.run(['sh', '-c', {script!r}])\n{wait}"
    )
    path.write_text(path.read_text().replace("timeout_s: 20", f"timeout_s: {limit}"))
    [claim] = checked(path, allow_programs=True).claims
    assert (claim.verdict is Verdict.PASSED) == (limit == "20"), claim.reason
    assert_none_running(daemon_pids(tmp_path))


@pytest.mark.parametrize(
    ("combine", "value"), [("first", 28), ("last", 1028), ("max", 1028), ("median", 528)]
)
def test_combine_makes_the_launches_one_value(tmp_path, combine, value):
    path = program_file(
        tmp_path, f"    launch_count: 2\n    combine: {combine}", expect=f"{{equals: {value}}}"
    )
    [claim] = checked(path, allow_programs=True).claims
    assert claim.verdict is Verdict.PASSED, claim.reason


def test_combine_each_judges_every_launch_as_a_case_of_its_own(tmp_path):
    path = program_file(tmp_path, "    launch_count: 2\n    combine: each", expect="{at_most: 100}")
    claims = checked(path, allow_programs=True).claims
    assert [(c.claim.id, c.claim.case, c.verdict) for c in claims] == [
        ("add_registers#1", "add#1", Verdict.PASSED),
        ("add_registers#2", "add#2", Verdict.FAILED),  # 1028: the second launch
    ]


def test_one_launch_of_a_case_that_profiles_each_is_named_with_a_hash(tmp_path):
    """`metric@add#2` reads the second launch alone: here 1028 against the first's 28."""
    path = program_file(tmp_path, "    launch_count: 2\n    combine: each", expect="{at_most: 100}")
    text = (
        path.read_text()
        + f"""  - id: second_over_first
    metric: {METRIC}@add#2 - {METRIC}@add#1
    expect: {{equals: 1000}}
    cite: {{document: d.txt, section: "1", figure: registers}}
"""
    )
    path.write_text(text)
    claims = {c.claim.id: c for c in checked(path, allow_programs=True).claims}
    assert (claims["second_over_first"].verdict, claims["second_over_first"].measured) == (
        Verdict.PASSED,
        1000,
    )


def test_a_claim_s_case_may_be_one_launch_of_a_case_that_profiles_each(tmp_path):
    path = program_file(tmp_path, "    launch_count: 2\n    combine: each", expect="{at_most: 100}")
    path.write_text(path.read_text().replace("case: add\n", "case: add#1\n"))
    [claim] = checked(path, allow_programs=True).claims
    assert (claim.claim.case, claim.verdict, claim.measured) == ("add#1", Verdict.PASSED, 28)
    path.write_text(path.read_text().replace("case: add#1\n", "case: add#3\n"))
    from ncuverify.errors import InputError
    from ncuverify.spec import load

    with pytest.raises(
        InputError, match=re.escape("add#3: program case add profiles 2 launches (launch_count: 2)")
    ):
        load(path)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        (f"{METRIC}@add#0", "a launch number after '#' (1, 2, ...)"),
        (f"{METRIC}@nothing#2", "no program case named 'nothing'"),
        (f"{METRIC}@add#2", "add#2: program case add gives one value (combine: first); only `combine: each`"),
    ],
)
def test_a_launch_named_with_a_hash_must_be_one_of_a_case_that_profiles_each(tmp_path, metric, message):
    from ncuverify.errors import InputError
    from ncuverify.spec import load

    path = program_file(tmp_path)
    path.write_text(path.read_text().replace(f"metric: {METRIC}\n", f"metric: {metric}\n"))
    with pytest.raises(InputError, match=re.escape(message)):
        load(path)


def test_a_recorded_program_case_replays_without_ncu(tmp_path):
    path = program_file(tmp_path, "    launch_skip: 1")
    live = checked(path, allow_programs=True, save_profile=tmp_path / "saved")
    assert [c.verdict for c in live.claims] == [Verdict.PASSED]
    commands = json.loads((tmp_path / "saved" / "commands.json").read_text())
    assert commands[-1][commands[-1].index("--launch-skip") + 1] == "1"
    run = CheckOptions(from_profile=tmp_path / "saved", explain=False)
    [replayed] = check_files([path], run, NO_GPU)
    assert replayed.replayed and [c.verdict for c in replayed.claims] == [Verdict.PASSED]
    assert replayed.measurements is not None
    assert replayed.measurements.value("add", METRIC) == 28


def test_a_recorded_program_case_whose_log_is_damaged_is_an_input_error(tmp_path):
    path = program_file(tmp_path)
    checked(path, allow_programs=True, save_profile=tmp_path / "saved")
    log = tmp_path / "saved" / "ncu.log"
    lines = log.read_text().splitlines()
    last = next(i for i in reversed(range(len(lines))) if lines[i].startswith('"'))
    log.write_text("\n".join([*lines[:last], lines[last].rsplit(",", 1)[0]]) + "\n")  # a field lost
    run = CheckOptions(from_profile=tmp_path / "saved", explain=False)
    [replayed] = check_files([path], run, NO_GPU)
    assert replayed.input_error is not None
    assert re.fullmatch(
        rf"{re.escape(str(log))}: ncu's CSV could not be read \(row \d+ has (\d+) fields, the header \d+\)",
        replayed.input_error,
    )


def test_a_program_that_is_not_there_fails_its_claims_when_it_would_run(tmp_path):
    path = program_file(tmp_path)
    path.write_text(path.read_text().replace("[python3, add.py", "[./vecadd, add.py"))
    [claim] = checked(path, allow_programs=True).claims
    assert claim.verdict is Verdict.ERROR
    assert "no program ./vecadd to run: not found, or not executable" in str(claim.reason)


def test_a_failed_memory_claim_on_a_program_launch_is_explained_from_that_launch_and_replays(
    tmp_path, monkeypatch
):
    """The program runs again under ncu with the explanation's sections for the claim's own launch
    (add#2: one past the first), and the explanation replays from the recording."""
    path = program_file(tmp_path, "    launch_count: 2\n    combine: each")
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    noted = f'CHOSEN: "yes", FAKE_SECTION_NOTES: {tmp_path / "sections.jsonl"}'
    path.write_text(
        path.read_text().replace('CHOSEN: "yes"', noted)
        + f"""  - id: second_is_coalesced
    metric: {sectors}@add#2
    expect: {{at_most: 10}}
    cite: {{document: d.txt, section: "1", figure: sectors}}
"""
    )
    live = checked(path, explain=True, allow_programs=True, save_profile=tmp_path / "saved")
    claim = next(c for c in live.claims if c.claim.id == "second_is_coalesced")
    assert claim.verdict is Verdict.FAILED and set(live.explanations) == {"second_is_coalesced"}
    explanation = live.explanations["second_is_coalesced"]
    # the first launch of the captured pages, as the report of that one launch holds it
    assert (explanation.topic, explanation.kernel) == ("global", "transpose_conflict")
    [run] = [json.loads(line) for line in (tmp_path / "sections.jsonl").read_text().splitlines()]
    arguments = run["arguments"]
    assert arguments[arguments.index("--launch-skip") + 1] == "1"
    assert arguments[arguments.index("--launch-count") + 1] == "1"
    assert "--metrics" not in arguments and arguments.count("--section") == 2
    assert run["chosen"] == ["void add_kernel<4>(float*)"]
    replay = CheckOptions(from_profile=tmp_path / "saved")
    [replayed] = check_files([path], replay, NO_GPU)
    assert replayed.explanations == live.explanations


def test_without_allow_programs_no_program_runs_to_explain(tmp_path):
    path = program_file(tmp_path, expect="{at_most: 10}")
    noted = f'CHOSEN: "yes", FAKE_SECTION_NOTES: {tmp_path / "sections.jsonl"}'
    text = path.read_text().replace(METRIC, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    path.write_text(text.replace('CHOSEN: "yes"', noted))
    result = checked(path, explain=True)
    assert [c.verdict for c in result.claims] == [Verdict.ERROR]
    assert not (tmp_path / "sections.jsonl").exists()


def test_a_program_that_fails_when_it_runs_again_leaves_its_claim_unexplained_saying_why(tmp_path):
    path = program_file(tmp_path, expect="{at_most: 10}")
    path.write_text(path.read_text().replace(METRIC, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"))
    # the second run, the explanation's, exits 3
    (tmp_path / "bench" / "add.py").write_text(
        "import os, sys\nagain = os.path.exists('ran')\nopen('ran', 'w').close()\nsys.exit(3 if again else 0)\n"
    )
    result = checked(path, explain=True, allow_programs=True)
    assert [c.verdict for c in result.claims] == [Verdict.FAILED] and result.explanations == {}
    assert result.warnings == [
        "no explanation from ncu for add_registers: the program `python3 add.py 0` exited with 3 under ncu"
    ]


UNTIED = (
    ": its recorded figures may not be today's; record them again (check --save-profile), or pass"
    " --allow-stale to judge them anyway"
)


def saved_program_profile(tmp_path: Path) -> tuple[Path, Path]:
    """programs.yaml profiled through the stand-in ncu with --save-profile: the file and the recording."""
    path = program_file(tmp_path)
    live = checked(path, allow_programs=True, save_profile=tmp_path / "saved")
    assert [c.verdict for c in live.claims] == [Verdict.PASSED]
    return path, tmp_path / "saved"


def replayed(path: Path, saved: Path, **options: object) -> FileResult:
    run = CheckOptions(from_profile=saved, explain=False, **options)  # type: ignore[arg-type]
    [result] = check_files([path], run, NO_GPU)
    return result


def test_a_program_case_s_recording_keeps_the_digest_of_the_files_its_command_names(tmp_path):
    _, saved = saved_program_profile(tmp_path)
    provenance = json.loads((saved / "provenance.json").read_text())
    script = hashlib.sha256((tmp_path / "bench" / "add.py").read_bytes()).hexdigest()
    # python3 is found on the PATH, and "0" is no file: add.py, from the folder it runs in, is the one
    assert provenance["program_files"] == {"programs.yaml::add": {"bench/add.py": script}}


def test_a_program_file_changed_since_the_recording_refuses_the_replay(tmp_path):
    path, saved = saved_program_profile(tmp_path)
    unchanged = replayed(path, saved)
    assert unchanged.input_error is None and unchanged.warnings == []
    assert [c.verdict for c in unchanged.claims] == [Verdict.PASSED]
    (tmp_path / "bench" / "add.py").write_text(PROGRAM + "# one line more\n")
    refused = replayed(path, saved)
    assert refused.input_error == (
        f"{saved}/provenance.json: program file bench/add.py of case add changed since it was recorded{UNTIED}"
    )
    assert exit_code([refused]) == ExitCode.BAD_INPUT
    allowed = replayed(path, saved, allow_stale=True)
    assert [c.verdict for c in allowed.claims] == [Verdict.PASSED]
    assert allowed.warnings == [
        "program file bench/add.py of case add changed since it was recorded: its figures may be stale"
    ]


@pytest.mark.parametrize(
    ("change", "untied"),
    [
        (
            lambda data: {k: v for k, v in data.items() if k != "program_files"},
            "the recording holds no digest of the files of program case add",
        ),
        (
            lambda data: {**data, "program_files": {"programs.yaml::add": {}}},
            "the recording holds no digest of program file bench/add.py of case add",
        ),
        (
            lambda data: {
                **data,
                "program_files": {"other.yaml::add": data["program_files"]["programs.yaml::add"]},
            },
            "the recording holds no digest of the files of program case add",
        ),
        (
            lambda data: {k: v for k, v in data.items() if k != "cases"},
            "the recording holds no digest of case add",
        ),
        (
            lambda data: {
                **data,
                "program_files": {
                    "programs.yaml::add": {
                        **data["program_files"]["programs.yaml::add"],
                        "bench/\x1b[2Jold.py": "0f",
                    }
                },
            },
            "program file bench/\\x1b[2Jold.py of case add changed since it was recorded (its command no longer names it, or it is gone)",
        ),
    ],
)
def test_a_program_case_s_recording_without_its_digests_is_refused_naming_what_it_lacks(
    tmp_path, change, untied
):
    path, saved = saved_program_profile(tmp_path)
    provenance = saved / "provenance.json"
    provenance.write_text(json.dumps(change(json.loads(provenance.read_text()))))
    refused = replayed(path, saved)
    assert refused.input_error == f"{provenance}: {untied}{UNTIED}"
    assert exit_code([refused]) == ExitCode.BAD_INPUT


def test_only_the_program_cases_whose_figures_are_judged_must_be_tied_to_today_s_files(tmp_path):
    path, saved = saved_program_profile(tmp_path)
    other = "  other:\n    program: {command: [python3, other.py]}\n    kernel: add_kernel\n"
    path.write_text(path.read_text().replace("\nclaims:", f"\n{other}claims:"))
    (tmp_path / "bench" / "other.py").write_text("")
    assert replayed(path, saved).input_error is None  # no claim reads other, never recorded


def shared_file(folder: Path, copy: str = "", env: str = "") -> Path:
    """Two program cases on one command: add (the first add_kernel launch) and copy (the copy launch)."""
    path = program_file(folder)
    runs = folder / "runs.jsonl"
    text = path.read_text().replace('CHOSEN: "yes"}', f'CHOSEN: "yes", FAKE_RUNS: {runs}}}')
    copy_env = (
        text.split("      env: ", 1)[1].split("\n      timeout_s", 1)[0].replace(f"{runs}", f"{runs}{env}")
    )
    text = text.replace(
        "\nclaims:",
        f"""  copy:
    program:
      command: [python3, add.py, "0"]
      cwd: bench
      env: {copy_env}
      timeout_s: 20
    kernel: copy
{copy}
claims:""",
    )
    path.write_text(
        text
        + f"""  - id: copy_registers
    case: copy
    metric: {METRIC}
    expect: {{equals: 28}}
    cite: {{document: d.txt, section: "1", figure: registers}}
"""
    )
    return path


def ncu_runs(folder: Path, suffix: str = "") -> list[list[str]]:
    """The fake ncu's command lines, one per run (its FAKE_RUNS file)."""
    return [json.loads(line) for line in (folder / f"runs.jsonl{suffix}").read_text().splitlines()]


def test_program_cases_on_one_command_share_one_ncu_process_that_selects_both(tmp_path):
    # the fake numbers the launches it profiles: copy is launch 0 (28), the first add_kernel launch 1 (1028)
    result = checked(shared_file(tmp_path), allow_programs=True)
    [run] = ncu_runs(tmp_path)
    assert run[run.index("--kernel-name") + 1] == "regex:(add_kernel)|(copy)"
    assert run[run.index("--launch-count") + 1] == "2"
    verdicts = {c.claim.id: (c.verdict, c.measured) for c in result.claims}
    assert verdicts == {"add_registers": (Verdict.FAILED, 1028), "copy_registers": (Verdict.PASSED, 28)}


def test_program_cases_whose_commands_differ_in_their_environment_run_apart(tmp_path):
    result = checked(shared_file(tmp_path, env=".other"), allow_programs=True)
    assert len(ncu_runs(tmp_path)) == 1 and len(ncu_runs(tmp_path, ".other")) == 1
    assert all(c.verdict is Verdict.PASSED for c in result.claims)  # each alone: its launch 0


def test_a_shared_process_that_gives_a_case_fewer_launches_than_it_asks_for_runs_each_alone(tmp_path):
    # copy asks for two launches and the program makes one: the union's count may have cut it short
    result = checked(shared_file(tmp_path, copy="    launch_count: 2"), allow_programs=True)
    assert [run[run.index("--kernel-name") + 1] for run in ncu_runs(tmp_path)] == [
        "regex:(add_kernel)|(copy)",
        "regex:add_kernel",
        "regex:copy",
    ]
    assert all(c.verdict is Verdict.PASSED for c in result.claims)  # each alone: its launch 0


def test_a_case_that_skips_launches_runs_alone(tmp_path):
    # ncu counts launches after its skip: the union's skip would be every case's
    result = checked(shared_file(tmp_path, copy="    launch_skip: 1"), allow_programs=True)
    assert len(ncu_runs(tmp_path)) == 2
    verdicts = {c.claim.id: c.verdict for c in result.claims}
    assert verdicts == {"add_registers": Verdict.PASSED, "copy_registers": Verdict.ERROR}  # no second copy


def test_a_recorded_shared_process_replays_each_case_s_own_launches(tmp_path):
    saved = tmp_path / "saved"
    live = checked(shared_file(tmp_path), allow_programs=True, save_profile=saved)
    replayed = checked(tmp_path / "programs.yaml", from_profile=saved)
    assert [(c.verdict, c.measured) for c in replayed.claims] == [
        (c.verdict, c.measured) for c in live.claims
    ]
