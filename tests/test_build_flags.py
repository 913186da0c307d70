"""The flags and defines a kernel may hand NVRTC: only options that neither read nor write files, macro
definitions that cannot test a path, include folders inside the project."""

import pytest
from build_projects import KERNEL, refused, spec_with

from ncuverify.build import BuildLimits, build_spec
from ncuverify.build.flags import checked_flags, define_value, nvrtc_flags
from ncuverify.build.nvcc_flags import NVCC_OPTIONS
from ncuverify.build.resolve import Roots
from ncuverify.errors import InputError
from ncuverify.names import outside_project


def test_include_folders_in_flags_are_checked_like_include_dirs(repo):
    root, away = repo
    for flags in (["-I/etc"], ["-I", "/etc"], ["--include-path=/etc"]):
        spec = spec_with(root, {"k": {"source": KERNEL, "entry": "k", "flags": flags}})
        assert refused(spec) == (
            f"{spec.path}: kernels.k.flags: {' '.join(flags)} lies {outside_project(root.resolve())}; an "
            "include folder must be inside it, or beside it and allowed with --allow-include DIR"
        )
    (away / "lib.h").write_text("#define LIB 1\n")
    spec = spec_with(
        root, {"k": {"source": "#include <lib.h>\n" + KERNEL, "entry": "k", "flags": [f"-I{away}"]}}
    )
    assert "lies outside the project" in refused(spec)
    assert "k" in build_spec(spec, "sm_90", limits=BuildLimits(allowed_roots=(away,)))


@pytest.mark.parametrize(
    "flags",
    [
        ["--pre-include=/etc/passwd"],
        ["-include", "/etc/passwd"],
        ["--create-pch=k.pch"],
        ["--use-pch=k.pch"],
        ["--pch"],
        ["--pch-dir=/tmp"],
        ["-time=times.csv"],
        ["--time=-"],
        ["--fdevice-time-trace=trace.json"],
        ["--use-bundled-headers=headers"],
        ["--dependency-output=deps"],
        ["--no-such-option"],
    ],
)
def test_flags_that_read_or_write_files_are_refused(repo, flags):
    root, _ = repo
    spec = spec_with(root, {"k": {"source": KERNEL, "entry": "k", "flags": flags}})
    assert refused(spec) == (
        f"{spec.path}: kernels.k.flags: {flags[0]} is not allowed: ncuverify passes NVRTC only options that "
        "neither read nor write files (docs/expectation-files.md lists them)"
    )
    assert sorted(p.name for p in root.iterdir()) == [".ncuverify-root", "k.yaml", "kernels"]


@pytest.mark.parametrize(
    "flags, problem",
    [
        (["-arch=sm_80"], "-arch=sm_80 is not allowed: ncuverify sets it from the kernel's 'arch' key"),
        (["--std", "c++14"], "--std c++14 is not allowed: ncuverify sets it from the kernel's 'std' key"),
        (["--fmad=maybe"], "--fmad=maybe: not a value NVRTC's --fmad takes"),
        (
            ["--ptxas-options=--output-file=/tmp/x"],
            "--ptxas-options=--output-file=/tmp/x: not a value NVRTC's --ptxas-options takes",
        ),
        (["--use_fast_math=yes"], "--use_fast_math=yes: not a value NVRTC's --use_fast_math takes"),
        (["-DX\n#include </etc/passwd>"], "-DX #include </etc/passwd>: not a macro definition"),
        (["-D"], "-D needs a value"),
        (
            ['-DP=__has_include("/etc/passwd")'],
            '-DP=__has_include("/etc/passwd"): a macro that uses __has_include (or another __has_ name) cannot be checked',
        ),
    ],
)
def test_flags_with_values_are_checked(repo, flags, problem):
    root, _ = repo
    spec = spec_with(root, {"k": {"source": KERNEL, "entry": "k", "flags": flags}})
    assert refused(spec) == f"{spec.path}: kernels.k.flags: {problem}"


def test_defines_are_checked(repo):

    root, _ = repo
    spec = spec_with(
        root, {"k": {"source": KERNEL, "entry": "k", "defines": {"P": '__has_include("/etc/passwd")'}}}
    )
    assert refused(spec) == (
        f"{spec.path}: kernels.k.defines.P: a macro that uses __has_include (or another __has_ name) cannot be checked"
    )
    # The expectation file's schema refuses these first; the build does not rely on it.
    with pytest.raises(
        InputError, match=r"^kernels.k.defines.X: the value holds a control character \(a newline\?\)$"
    ):
        define_value("X", "1\n#include </etc/passwd>", "kernels.k.defines")
    with pytest.raises(InputError, match=r"^kernels.k.defines: 'A B' is not a macro name$"):
        define_value("A B", 1, "kernels.k.defines")


def test_nvrtc_which_has_no_shell_takes_what_nvcc_refuses(repo):
    root, _ = repo
    (root / "kernels" / "a$b").mkdir()
    flags = ['-DS="$`\\"', "-Ikernels/a$b"]
    roots = Roots(project=root.resolve())
    assert nvrtc_flags(flags, root, roots, "kernels.k.flags") == (
        ['--define-macro=S="$`\\"'],
        [str((root / "kernels" / "a$b").resolve())],
    )
    with pytest.raises(InputError, match=r"""^kernels.k.flags: -DS="\$`\\": '"' would reach nvcc's shell"""):
        checked_flags(flags, root, roots, "kernels.k.flags", NVCC_OPTIONS)


def test_a_define_nvcc_shell_would_read_is_refused_for_nvcc_only(repo):
    root, _ = repo
    kernel = {"source": KERNEL, "entry": "k", "defines": {"D": '1 /* $`\\" */'}}
    assert "k" in build_spec(spec_with(root, {"k": kernel}), "sm_90")
    spec = spec_with(root, {"k": {**kernel, "compiler": "nvcc"}})
    assert refused(spec) == (
        f"{spec.path}: kernels.k.defines.D: '$' would reach nvcc's shell; nvcc runs its steps through sh, so"
        ' `$`, backticks, `\\`, `"` and control characters (newlines) are refused in anything passed to it'
    )
