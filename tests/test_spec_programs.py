"""Program cases in an expectation file: their command, folder, environment and launch selectors."""

import os

import pytest
from expectation_edits import SAMPLE, problems, write

from ncuverify.spec import load
from ncuverify.spec.programs import ProgramCase, ProgramSpec, named_files

CITE = "cite: {document: d.txt, section: '1', figure: coalesced}"


def program_file(case: str, metric: str = "gpu__time_duration.sum") -> str:
    return f"""
cases:
  add:
{case}
claims:
  - id: add_time
    case: add
    metric: {metric}
    expect: {{at_least: 0}}
    {CITE}
"""


ADD = """    program:
      command: [python3, add.py, --n, "1048576"]
      env: {TORCH_SHOW: "1"}
      timeout_s: 120
    kernel: elementwise
    launch_skip: 2
"""


def test_a_file_of_program_cases_needs_no_kernels(tmp_path):
    spec = load(write(tmp_path, program_file(ADD)))
    assert spec.content.kernels == {} and spec.content.cases == {}
    case = spec.content.programs["add"]
    assert case.program.command == ["python3", "add.py", "--n", "1048576"]
    assert case.program.env == {"TORCH_SHOW": "1"} and case.program.timeout_s == 120
    assert (case.kernel, case.launch_skip, case.launch_count, case.combine) == ("elementwise", 2, 1, "first")
    assert case.target_processes == "all"


def test_program_cases_sit_beside_built_cases_and_claims_compare_them(tmp_path):
    text = SAMPLE.replace("cases:\n", "cases:\n  add:\n" + ADD, 1)
    text += (
        """
  - id: add_vs_stride1
    metric: gpu__time_duration.sum / gpu__time_duration.sum@stride1
    expect: {at_least: 0}
    control: stride32
    case: add
    """
        + CITE
        + "\n"
    )
    spec = load(write(tmp_path, text))
    assert "add" in spec.content.programs and "add" not in spec.content.cases
    assert "stride1" in spec.content.cases


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            "      env: {LD_PRELOAD: /x.so}",
            "cases.add.program.env.LD_PRELOAD: LD_PRELOAD may not be set: the dynamic loader",
        ),
        ("      env: {PYTHONPATH: /x}", "PYTHONPATH may not be set"),
        ("      env: {PATH: /x}", "PATH may not be set"),
        ("      env: {'A B': x}", "'A B' may not be set: only upper-case names"),
        ("      command: 'python3 add.py'", "cases.add.program.command: Input should be a valid list"),
        ("      command: []", "cases.add.program.command: List should have at least 1 item"),
        ("      timeout_s: 0", "cases.add.program.timeout_s: Input should be greater than 0"),
    ],
)
def test_what_a_program_may_not_be_given(tmp_path, change, message):
    case = ADD.replace('      env: {TORCH_SHOW: "1"}', change) if "env" in change else ADD
    if "command" in change:
        case = case.replace('      command: [python3, add.py, --n, "1048576"]', change)
    if "timeout_s" in change:
        case = case.replace("      timeout_s: 120", change)
    assert message in problems(write(tmp_path, program_file(case)))


def test_one_kernel_selector_and_an_re2_pattern(tmp_path):
    both = ADD.replace("    kernel: elementwise", "    kernel: a\n    kernel_exact: b")
    assert "give exactly one of 'kernel'" in problems(write(tmp_path, program_file(both)))
    bad = ADD.replace("    kernel: elementwise", "    kernel: 'add('")
    assert "is not a regular expression" in problems(write(tmp_path, program_file(bad)))
    unknown = ADD + "    grid: 1\n"
    assert "cases.add.grid: unknown key 'grid'" in problems(write(tmp_path, program_file(unknown)))


def test_static_facts_and_buffers_are_refused_on_a_program_case(tmp_path):
    for metric in ("static__registers_per_thread", "sass('LDG')", "buffer__out.sum"):
        said = problems(write(tmp_path, program_file(ADD, metric)))
        assert "case add runs a program, which ncuverify neither builds nor reads buffers of" in said


def test_the_folder_and_a_program_path_stay_in_the_project(tmp_path):
    (tmp_path / ".ncuverify-root").touch()
    outside = ADD.replace("      timeout_s: 120", "      cwd: ../..")
    assert "cases.add.program.cwd: ../.. lies outside the project" in problems(
        write(tmp_path, program_file(outside))
    )
    escaping = ADD.replace("[python3, add.py", "[../../bin/sh, add.py")
    assert "cases.add.program.command[0]: ../../bin/sh lies outside the project" in problems(
        write(tmp_path, program_file(escaping))
    )


def test_the_model_key_for_program_cases_cannot_be_written(tmp_path):
    text = program_file(ADD) + "'cases (programs)': {}\n"
    assert "unknown key 'cases (programs)'" in problems(write(tmp_path, text))


def test_matches_searches_the_demangled_name_or_compares_it_exactly():
    program = {"command": ["x"]}
    pattern = ProgramCase.model_validate({"program": program, "kernel": "elementwise_kernel<4"})
    assert pattern.matches("void at::native::vectorized_elementwise_kernel<4, Add>(int)")
    assert not pattern.matches("void copy(float*)")
    exact = ProgramCase.model_validate({"program": program, "kernel_exact": "add_kernel"})
    assert exact.matches("add_kernel") and not exact.matches("add_kernel2")


def test_the_files_a_command_names_are_its_whole_words_that_are_files_of_the_project(tmp_path):
    """The first word where it holds a / (from the expectation file's folder), every later word that is
    a regular file from the folder the program runs in; nothing else is taken for a path."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "bench" / "data").mkdir(parents=True)
    outside.mkdir()
    (project / ".ncuverify-root").touch()
    for name in ("run", "bench/add.py", "bench/data/x.bin", "bench/python3", "bench/--n"):
        (project / name).write_text("")
    (outside / "secret.py").write_text("")
    (project / "bench" / "linked.py").symlink_to(outside / "secret.py")
    os.mkfifo(project / "bench" / "pipe")
    command = [
        "./run",  # from the file's folder
        "add.py",  # from cwd: bench/add.py
        "add.py",  # each once
        "data/x.bin",
        "--input=data/x.bin",  # not a whole word that is a path
        "data",  # a folder
        "pipe",  # not a regular file
        "linked.py",  # a link to a file outside the project
        "../../outside/secret.py",
        "absent.py",
        "x" * 4000,  # a name the OS finds too long
    ]
    program = ProgramSpec(command=command, cwd="bench")
    assert named_files(program, project, project.resolve()) == [
        (project / name).resolve() for name in ("run", "bench/add.py", "bench/data/x.bin")
    ]
    # a first word without / is looked up on the PATH, even where the folder holds a file of its name
    on_path = ProgramSpec(command=["python3", "--n"], cwd="bench")
    assert named_files(on_path, project, project.resolve()) == [(project / "bench" / "--n").resolve()]
