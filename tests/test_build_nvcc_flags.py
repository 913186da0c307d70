"""The nvcc options a kernel's flags may hold."""

from pathlib import Path

import pytest

from ncuverify.build.nvcc_flags import nvcc_argument_problem, nvcc_flags, nvcc_list_item
from ncuverify.build.resolve import Roots
from ncuverify.errors import InputError


def flags_of(tmp_path: Path, *flags: str) -> list[str]:
    return nvcc_flags(list(flags), tmp_path, Roots(project=tmp_path.resolve()), "kernels.k.flags")[0]


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["-O3"], ["--optimize=3"]),
        (["-O", "2"], ["--optimize=2"]),
        (["--use_fast_math"], ["--use_fast_math"]),
        (["-lineinfo"], ["--generate-line-info"]),
        (["--expt-relaxed-constexpr", "--extended-lambda"], ["--expt-relaxed-constexpr", "--extended-lambda"]),
        (["-ftz=true", "-prec-div=false", "-prec-sqrt=true", "-fmad=false"],
         ["--ftz=true", "--prec-div=false", "--prec-sqrt=true", "--fmad=false"]),
        (["-Xptxas", "-O3"], ["--ptxas-options=-O3"]),
        (["-Xptxas=-v"], ["--ptxas-options=-v"]),
        (["-DN=4", "-U", "M"], ["--define-macro=N=4", "--undefine-macro=M"]),
        (["-diag-suppress=177,550"], ["--diag-suppress=177,550"]),
    ],
)  # fmt: skip
def test_allowed_flags_are_written_out_in_full(tmp_path, flags, options):
    assert flags_of(tmp_path, *flags) == options


@pytest.mark.parametrize(
    "flags",
    [
        ["-ccbin", "/tmp/evil"],
        ["--compiler-bindir=/tmp"],
        ["-Xcompiler", "-fplugin=/tmp/p.so"],
        ["-include", "/etc/passwd"],
        ["-o", "/tmp/x"],
        ["-odir", "/tmp"],
        ["--options-file", "/tmp/opts"],
        ["-keep"],
        ["--run"],
        ["-lcuda"],
        ["-L/tmp"],
        ["-Xlinker", "x"],
        ["--dependency-output", "/tmp/d"],
        ["-M"],
    ],
)
def test_flags_that_read_write_or_run_are_refused(tmp_path, flags):
    with pytest.raises(InputError, match="is not allowed: ncuverify passes nvcc only options"):
        flags_of(tmp_path, *flags)


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (["-Xptxas", "--output-file=/tmp/x"], "not a value nvcc's --ptxas-options takes"),
        (["-O9"], "not a value nvcc's --optimize takes"),
        (["-arch=sm_80"], "sets it from the kernel's 'arch' key"),
        (["-std=c++20"], "sets it from the kernel's 'std' key"),
        (["-maxrregcount=32"], "sets it from the kernel's 'max_registers' key"),
        (["-DX=__has_include(</etc/passwd>)"], "__has_include"),
    ],
)
def test_values_and_owned_options_are_checked(tmp_path, flags, problem):
    with pytest.raises(InputError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        flags_of(tmp_path, *flags)


def test_an_include_folder_outside_the_project_is_refused(tmp_path):
    (tmp_path / "project").mkdir()
    with pytest.raises(InputError, match="lies outside the project"):
        nvcc_flags(["-I.."], tmp_path / "project", Roots(project=(tmp_path / "project").resolve()), "k")


# nvcc runs its steps through sh with each argument inside double quotes (tests/test_hostile_nvcc.py):
# these would be expanded, would end the quotes or the command.
SHELL_SPECIAL = ["$", "`", "\\", '"', "\n", "\r", "\t", "\x00", "\x1b", "\x7f"]
# Literal inside double quotes (tried with nvcc: each reaches g++ and cicc as written).
LITERAL = ["'", "!", ";", "&", "|", "<", ">", " ", "*", "?", "(", ")", "#", "%", "~", "{", "}", "[", "]", "="]


@pytest.mark.parametrize("character", SHELL_SPECIAL)
def test_what_nvcc_shell_would_read_is_refused_in_any_argument(character):
    problem = nvcc_argument_problem(f"a{character}b")
    assert problem is not None and problem.startswith(
        f"{character!r} would reach nvcc's shell; nvcc runs its"
    )
    assert nvcc_argument_problem(f"a{character}b", folder=True) == problem


@pytest.mark.parametrize("character", [*LITERAL, ","])
def test_what_sh_reads_literally_inside_double_quotes_passes(character):
    assert nvcc_argument_problem(f"X=a{character}b") is None


@pytest.mark.parametrize("character", [",", "'"])
def test_a_folder_nvcc_would_split_or_misquote_is_refused(character):
    problem = nvcc_argument_problem(f"/p/a{character}b", folder=True)
    assert problem is not None and problem.startswith(f"{character!r} would change the folder nvcc reads")


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["-DN=$(touch x)"], "-DN=$(touch x): '$'"),
        (["-D", "N=`id`"], "-D N=`id`: '`'"),
        (["--define-macro=N=a\\b"], "--define-macro=N=a\\b: '\\\\'"),
        (['-DS="s"'], '-DS="s": \'"\''),
        (["-UX=$(id)"], "-UX=$(id): '$'"),
        (["-Ia$b"], "-Ia$b: '$'"),
        (["--include-path=a,b"], "--include-path=a,b: ','"),
    ],
)
def test_flags_nvcc_shell_would_read_are_refused_with_the_flag_named(tmp_path, flags, shown):
    with pytest.raises(InputError) as error:
        flags_of(tmp_path, *flags)
    assert str(error.value).startswith(f"kernels.k.flags: {shown} would ")


def test_an_include_folder_is_checked_as_it_resolves(tmp_path):
    (tmp_path / "a$b").mkdir()
    (tmp_path / "clean").symlink_to(tmp_path / "a$b")
    with pytest.raises(InputError, match=r"^kernels.k.flags: -Iclean: '\$' would reach nvcc's shell"):
        nvcc_flags(["-Iclean"], tmp_path, Roots(project=tmp_path.resolve()), "kernels.k.flags")


def test_a_define_value_keeps_its_commas_as_nvcc_reads_lists():
    assert nvcc_list_item("F(a,b)=((a)+(b))") == "F(a\\,b)=((a)+(b))"
    assert nvcc_list_item("N=4") == "N=4"
