"""An attacker's pull request against `compiler: nvcc`: nvcc runs its steps through sh, each argument
inside double quotes, so a `$(...)` or a backtick anywhere on its command line would run. A command is
planted in every field that reaches that command line; `check --static-only` and `build` refuse each
file with exit 2 and one line naming the field, and the command never runs, whether Landlock confines
the compile or the kernel refuses Landlock (tests/confinement.py). Need nvcc and g++, no GPU."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from confinement import checkout_environment, refuse_landlock, seccomp_problem

from ncuverify.build.toolkit import find_tool
from ncuverify.errors import ExitCode

pytestmark = pytest.mark.skipif(
    find_tool("nvcc") is None or shutil.which("g++") is None, reason="needs nvcc and g++"
)

# nvcc's steps run in the compile's empty folder, $TMPDIR/ncuverify-nvcc-*/cwd: two folders up is the
# TMPDIR the test gives ncuverify, where a command that ran leaves PLANTED (unconfined; Landlock lets it
# write only in the compile's own folders), and it prints PLANTED42 into the argument, which shows in
# nvcc's errors. No `/`, so that file and folder names can hold it too.
COMMANDS = {
    "dollar": "$(cd ..;cd ..;touch PLANTED;echo PLANTED$((6*7)))",
    "backtick": "`cd ..;cd ..;touch PLANTED;echo PLANTED$((6*7))`",
}
RAN = "PLANTED42"
KERNEL = "__global__ void k(float* o) { o[threadIdx.x] = 1.f; }\n"
# What nvcc is handed as it was before: defines of every kind, a shift, a comma in a macro's parameters.
HONEST_KERNEL = "__global__ void k(float* o) { o[threadIdx.x] = ADD(N, X) + sizeof(TYPE) + NAME; }\n"
HONEST_KERNEL_KEYS = {
    "defines": {"N": 1024, "TYPE": "float", "NAME": "a_b", "a_b": 2},
    "flags": ["-DX=(1<<4)", "-DADD(a,b)=((a)+(b))"],
}


def attacks(command: str) -> dict[str, tuple[str, dict, dict[str, str]]]:
    """Each attack: the field its message names, the kernel's keys, and the project's files it needs
    (path -> text; a path ending in / is a folder, one holding -> a link to what follows)."""
    folder = f"inc{command}"
    return {
        "defines": ("kernels.k.defines.N", {"defines": {"N": f"1{command}"}}, {}),
        "define_flag": ("kernels.k.flags: -DN=1", {"flags": [f"-DN=1{command}"]}, {}),
        "define_long": ("kernels.k.flags: --define-macro=N=1", {"flags": [f"--define-macro=N=1{command}"]}, {}),
        "define_apart": ("kernels.k.flags: -D N=1", {"flags": ["-D", f"N=1{command}"]}, {}),
        "undefine_flag": ("kernels.k.flags: -UM=", {"flags": [f"-UM={command}"]}, {}),
        "include_flag": ("kernels.k.flags: -Iinc", {"flags": [f"-I{folder}"]}, {f"{folder}/": ""}),
        "include_path": ("kernels.k.flags: --include-path=inc", {"flags": [f"--include-path={folder}"]}, {f"{folder}/": ""}),
        "include_dirs": ("kernels.k.include_dirs: inc", {"include_dirs": [folder]}, {f"{folder}/": ""}),
        "include_link": ("kernels.k.include_dirs: clean", {"include_dirs": ["clean"]}, {f"{folder}/": "", "clean": f"->{folder}"}),
        "file": ("kernels.k.file: ", {"file": f"k{command}.cu"}, {f"k{command}.cu": KERNEL}),
        "folder": ("kernels.k.file: ", {"file": f"kernels{command}/k.cu"}, {f"kernels{command}/k.cu": KERNEL}),
        "file_link": ("kernels.k.file: ", {"file": "k.cu"}, {f"k{command}.cu": KERNEL, "k.cu": f"->k{command}.cu"}),
    }  # fmt: skip


def expectation(kernel: dict) -> str:
    content = {
        "arch": "sm_90",
        "compiler": "nvcc",
        "kernels": {"k": {"file": "k.cu", "entry": "k", **kernel}},
        "cases": {"c": {"kernel": "k", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 32}]}},
        "claims": [
            {
                "id": "registers",
                "case": "c",
                "metric": "static__registers_per_thread",
                "expect": {"at_least": 1},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    return yaml.safe_dump(content)


def written(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            path.mkdir(exist_ok=True)
        elif text.startswith("->"):
            path.symlink_to(text[2:])
        else:
            path.write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[Path, str]]:
    """A project of one folder per attack and command (its expectation file -> the field its message
    names), and beside them an honest file of the same kernel."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".ncuverify-root").write_text("")
    files: dict[Path, str] = {}
    for command_name, command in COMMANDS.items():
        for name, (field, kernel, needs) in attacks(command).items():
            folder = root / f"{name}-{command_name}"
            folder.mkdir()
            written(folder, {"k.cu": KERNEL, **needs} if "file" not in kernel else needs)
            files[folder / "k.yaml"] = field
            (folder / "k.yaml").write_text(expectation(kernel))
    honest = root / "honest"
    honest.mkdir()
    (honest / "k.cu").write_text(HONEST_KERNEL)
    (honest / "k.yaml").write_text(expectation(HONEST_KERNEL_KEYS))
    return root, files


def run(
    command: str, files: list[Path], cwd: Path, landlock_refused: bool
) -> subprocess.CompletedProcess[str]:
    (cwd / "tmp").mkdir(exist_ok=True)
    arguments = ["--static-only"] if command == "check" else ["--arch", "sm_90"]
    return subprocess.run(
        [sys.executable, "-m", "ncuverify", command, *arguments, "--no-cache", *map(str, files)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**checkout_environment(), "TMPDIR": str(cwd / "tmp")},
        timeout=600,
        preexec_fn=refuse_landlock if landlock_refused else None,
    )


@pytest.mark.slow
@pytest.mark.parametrize("landlock_refused", [False, True], ids=["landlock", "landlock-refused"])
@pytest.mark.parametrize("command", ["check", "build"])
def test_a_command_planted_anywhere_nvcc_reads_is_refused_and_never_runs(project, command, landlock_refused):
    if landlock_refused and (problem := seccomp_problem()) is not None:
        pytest.skip(problem)
    root, files = project
    honest = root / "honest" / "k.yaml"
    result = run(command, [*files, honest], root, landlock_refused)
    shown = result.stdout + result.stderr
    assert result.returncode == ExitCode.BAD_INPUT, shown
    assert "Traceback" not in shown and "internal error" not in shown
    assert RAN not in shown
    assert not any(path.name == "PLANTED" for path in root.rglob("*")), "a planted command ran"
    lines = result.stdout.splitlines()
    for path, field in files.items():
        refusals = [
            line for line in lines if line.startswith(f"{path}: ") and "would reach nvcc's shell" in line
        ]
        assert len(refusals) == 1, (path, shown)
        assert refusals[0].startswith(f"{path}: {field}"), refusals[0]
    # The honest file beside them is built by the same nvcc, confined or not.
    assert f"{honest}: input error" not in shown, shown
    assert command == "build" or f"{honest}: 1 passed" in shown, shown


@pytest.mark.slow
def test_a_folder_nvcc_would_split_or_misquote_is_refused(tmp_path):
    """nvcc splits -I at commas and hands sh a `'` as `\\'`: it would read another folder than the one
    checked."""
    root = tmp_path / "project"
    for folder in ("a,b", "o'k"):
        (root / folder).mkdir(parents=True)
    (root / ".ncuverify-root").write_text("")
    (root / "k.cu").write_text(KERNEL)
    (root / "k.yaml").write_text(expectation({"include_dirs": ["a,b"], "flags": ["-Io'k"]}))
    result = run("check", [root / "k.yaml"], root, landlock_refused=False)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert f"{root / 'k.yaml'}: kernels.k.include_dirs: a,b: ',' would change the folder nvcc reads" in (
        result.stdout
    )
