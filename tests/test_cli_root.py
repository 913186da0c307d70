"""The root command: no traceback, ever; one line and the documented exit code."""

import pytest
from cli_invoke import invoke, invoke_command, traceback_file
from conftest import DATA

from ncuverify.environment import Environment
from ncuverify.errors import ExitCode

# --- no traceback, ever ---------------------------------------------------------------------------------


def test_a_bug_is_one_line_naming_its_traceback_and_exit_4(monkeypatch):
    def broken(cls, ncu):
        raise ValueError("probe broke on \x1b[2J [bold red]x")

    monkeypatch.setattr(Environment, "probe", classmethod(broken))
    result = invoke("--static-only", str(DATA / "static.yaml"))
    assert result.exit_code == ExitCode.INTERNAL_ERROR
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        "ncuverify: internal error: ValueError: probe broke on \\x1b[2J [bold red]x, please report it with "
    )
    saved = traceback_file(line).read_text()
    assert "Traceback (most recent call last)" in saved and "in broken" in saved
    assert "ValueError: probe broke on \\x1b[2J [bold red]x" in saved
    assert "Traceback" not in result.stdout and "\x1b" not in result.stdout + result.stderr


def test_main_turns_what_escapes_the_commands_into_one_line(monkeypatch, capsys):
    from ncuverify.cli import root

    def broken() -> None:
        raise KeyError("outside any command")

    monkeypatch.setattr(root, "app", broken)
    with pytest.raises(SystemExit) as exited:
        root.main()
    assert exited.value.code == ExitCode.INTERNAL_ERROR
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(
        "ncuverify: internal error: KeyError: 'outside any command', please report it with"
    )
    assert "KeyError: 'outside any command'" in traceback_file(line).read_text()


def test_the_command_prints_no_traceback_of_its_own(tmp_path):
    """The installed command (typer's pretty tracebacks, which show local variables, are off)."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from ncuverify.environment import Environment\n"
        "def broken(cls, ncu):\n"
        "    secret = 'hunter2'\n"
        "    raise RuntimeError('injected')\n"
        "Environment.probe = classmethod(broken)\n"
        "from ncuverify.cli import main\n"
        "sys.argv = ['ncuverify', 'check', '--static-only', sys.argv[1]]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(DATA / "static.yaml")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == ExitCode.INTERNAL_ERROR
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("ncuverify: internal error: RuntimeError: injected, please report it with ")
    assert "hunter2" not in done.stdout + done.stderr  # no local variables shown
    assert "RuntimeError: injected" in traceback_file(line).read_text()


def test_ctrl_c_outside_the_run_exits_3(monkeypatch):
    def interrupted(cls, ncu):
        raise KeyboardInterrupt

    monkeypatch.setattr(Environment, "probe", classmethod(interrupted))
    result = invoke_command("lint", str(DATA / "static.yaml"))
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert result.stderr.strip() == "interrupted"


@pytest.mark.parametrize(
    ("columns", "is_terminal", "width"),
    [
        ("80", False, 80),
        ("200", True, 200),
        (" 120 ", False, 120),
        ("3", False, 40),  # too narrow to lay out: the narrowest width
        ("99999999", False, 1000),
        ("9" * 5000, False, 160),  # not a width (Python refuses to read 5000 digits quickly)
        ("eighty", False, 160),
        ("٨٠", False, 160),  # Arabic-Indic digits are not a width either
        ("", True, None),
        ("", False, 160),
    ],
)
def test_the_report_is_laid_out_for_columns_or_the_terminal(columns, is_terminal, width):
    from ncuverify.cli.terminal import output_width

    assert output_width({"COLUMNS": columns}, is_terminal) == width


def test_check_at_80_columns_cuts_no_id_and_prints_no_table(no_gpu, monkeypatch):
    from conftest import FIXTURES

    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("-v", "--from-profile", str(FIXTURES), str(DATA / "explain.yaml"))
    assert "┃" not in result.stdout and "passed gather_one_request_per_warp\n" in result.stdout
    assert "    metric    l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum /\n" in result.stdout
