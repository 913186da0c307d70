"""An attacker's pull request, end to end: a secret in the environment and a file outside the project,
kernels that try every way to read them, and every output ncuverify can write. Neither secret may
appear anywhere, and every file is refused with exit 2, never a traceback."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES, ROOT

from ncuverify.errors import ExitCode

SECRET_VALUE = "env-secret-7f3a9c1e"
SECRET_TEXT = "file-secret-b62d04aa"

# Each kernel tries one way out of the project; {outside} is the folder holding the secret file.
ATTACKS = {
    "absolute": '#include "{outside}/secret.h"\n',
    "climbing": '#include "../../outside/secret.h"\n',
    "angled": "#include <{outside}/secret.h>\n",
    "environ": '#include "/proc/self/environ"\n',
    "computed": '#define WHERE "/proc/self/environ"\n#include WHERE\n',
    "symlink": '#include "link.h"\n',
    "continued": '#inc\\\nlude "{outside}/secret.h"\n',
}
FLAG_ATTACKS = {
    "include_flag": ["-I{outside}"],
    "include_path": ["--include-path={outside}"],
    "pre_include": ["--pre-include={outside}/secret.h"],
}
KERNEL = 'extern "C" __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }\n'


def expectation(name: str, flags: list[str]) -> str:
    flag_list = "[" + ", ".join(f'"{flag}"' for flag in flags) + "]"
    return f"""arch: sm_90
kernels:
  k: {{file: kernels/{name}.cu, entry: k, flags: {flag_list}}}
cases:
  c: {{kernel: k, grid: 1, block: 32, args: [{{buffer: float32, count: 32}}]}}
claims:
  - id: registers
    case: c
    metric: static__registers_per_thread
    expect: {{at_least: 1}}
    cite: {{document: d, section: "1", figure: f}}
"""


@pytest.fixture
def attack(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A project (its root marked) with one expectation file per attack, and a secret beside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.h").write_text(f"{SECRET_TEXT}\n")
    project = tmp_path / "project"
    kernels = project / "expectations" / "kernels"
    kernels.mkdir(parents=True)
    (project / ".ncuverify-root").write_text("")
    (kernels / "link.h").symlink_to(outside / "secret.h")
    files = []
    for name, directive in ATTACKS.items():
        (kernels / f"{name}.cu").write_text(directive.format(outside=outside) + KERNEL)
        files.append(project / "expectations" / f"{name}.yaml")
        files[-1].write_text(expectation(name, []))
    for name, flags in FLAG_ATTACKS.items():
        (kernels / f"{name}.cu").write_text('#include "secret.h"\n' + KERNEL)
        files.append(project / "expectations" / f"{name}.yaml")
        files[-1].write_text(expectation(name, [flag.format(outside=outside) for flag in flags]))
    return project, files


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "NCUVERIFY_TEST_SECRET": SECRET_VALUE,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "TMPDIR": str(cwd),  # internal-error traceback files, if any, land where the test reads them
    }
    return subprocess.run(
        [sys.executable, "-m", "ncuverify", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=600,
    )


def everything_written(root: Path, before: set[Path] = frozenset()) -> str:
    """The text of every plain file under root but those in before (links are not followed: the
    planted link into the secret is the attacker's, not something ncuverify wrote)."""
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink() and p not in before]
    return "\n".join(p.read_text(errors="replace") for p in files)


def files_under(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def assert_no_secret(text: str) -> None:
    assert SECRET_VALUE not in text
    assert SECRET_TEXT not in text


def test_check_refuses_every_way_out_and_leaks_nothing(attack, tmp_path):
    project, files = attack
    planted = files_under(project)
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    result = run(
        "check",
        "--static-only",
        "--no-cache",
        *files,
        "--json",
        outputs / "r.json",
        "--junit-xml",
        outputs / "r.xml",
        "--markdown",
        outputs / "r.md",
        cwd=project,
    )
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    shown = result.stdout + result.stderr
    assert "Traceback" not in shown and "internal error" not in shown
    for path in files:
        assert f"{path}: input error" in result.stdout.replace("\n", "")
    assert_no_secret(shown)
    assert_no_secret(everything_written(outputs))
    assert_no_secret(everything_written(project, planted))


@pytest.mark.slow
def test_lint_and_build_leak_nothing_either(attack):
    project, files = attack
    planted = files_under(project)
    for command in ("lint", "build"):
        result = run(command, "--arch", "sm_90", "--no-cache", *files, cwd=project)
        assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
        assert "Traceback" not in result.stdout + result.stderr
        assert_no_secret(result.stdout + result.stderr)
    assert_no_secret(everything_written(project, planted))


@pytest.mark.slow
def test_an_allowed_folder_beside_the_project_may_be_included(attack, tmp_path):
    """A team whose kernels include a checkout beside the project allows it on the command line, never
    from the expectation file."""
    project, files = attack
    allowed = tmp_path / "outside"
    (allowed / "secret.h").write_text("#define ALLOWED_HEADER 1\n")
    beside = project / "expectations" / "beside.yaml"
    beside.write_text(
        expectation("include_flag", []).replace("flags: []", "include_dirs: [../../outside], flags: []")
    )
    refused = run("check", "--static-only", "--no-cache", beside, cwd=project)
    assert refused.returncode == ExitCode.BAD_INPUT
    assert f"{beside}: kernels.k.include_dirs: ../../outside lies outside the project" in " ".join(
        refused.stdout.split()
    )
    for attempt in (beside, next(p for p in files if p.stem == "include_flag")):
        result = run("check", "--static-only", "--no-cache", "--allow-include", allowed, attempt, cwd=project)
        assert result.returncode == ExitCode.OK, result.stdout + result.stderr


@pytest.mark.gpu
def test_on_the_gpu_the_attacks_are_refused_and_the_other_files_measured(gpu_environment, attack, tmp_path):
    """With the profiler in the run, the attackers' files are still refused before anything is
    launched, and the honest file beside them is profiled and judged as usual."""
    project, files = attack
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    result = run(
        "check", *files, DATA / "sample.yaml", "--json", outputs / "r.json", "--save-profile",
        outputs / "profile", cwd=project,
    )  # fmt: skip
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert_no_secret(result.stdout + result.stderr)
    assert_no_secret(everything_written(outputs))
    sample = next(
        r for r in json.loads((outputs / "r.json").read_text())["files"] if r["path"].endswith("sample.yaml")
    )
    assert sample["input_error"] is None
    assert {claim["verdict"] for claim in sample["claims"]} == {"passed"}


# --- kernel sources that are not UTF-8, or that NVRTC would read only in part ------------------------------

LATIN_1 = b"// Vitesse mesur\xe9e \xe0 la main, na\xefvement: a comment in Latin-1\n"


def static_claim_file(kernel: str) -> str:
    """An expectation file of one static claim on the kernel k, given as a flow mapping."""
    return expectation("", []).replace("{file: kernels/.cu, entry: k, flags: []}", kernel)


@pytest.mark.slow
def test_sources_not_utf8_compile_and_those_nvrtc_would_cut_are_refused_alone(project):
    """A Latin-1 comment is compiled as written; a 0xff or a NUL, which would end the program NVRTC
    reads there, is refused naming the file and the byte, and an inline source holding a NUL naming the
    field: each in one line, and the other files are still judged."""
    kernels = project / "expectations" / "kernels"
    kernels.mkdir()
    sources = {"latin1": LATIN_1, "ff": b"// \xff\xfe\n", "nul": b"// \x00\n"}
    files = {}
    for name, head in sources.items():
        (kernels / f"{name}.cu").write_bytes(head + KERNEL.encode())
        files[name] = project / "expectations" / f"{name}.yaml"
        files[name].write_text(static_claim_file(f"{{file: kernels/{name}.cu, entry: k}}"))
    files["inline"] = project / "expectations" / "inline.yaml"
    inline = KERNEL.strip().replace('"', '\\"') + "\\n// \\0 cut here\\n"
    files["inline"].write_text(static_claim_file(f'{{source: "{inline}", entry: k}}'))
    result = run("check", "--static-only", "--no-cache", *files.values(), cwd=project)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = shown_lines(result)
    assert any(line.startswith(f"{files['latin1']}: 1 passed, 0 failed") for line in lines), lines
    cut = "NVRTC reads the source only up to it and would leave the rest out of the build"
    refusals = {
        "ff": f"expectations/kernels/ff.cu: the byte 0xff at byte offset 3 (line 1): {cut}; save the file as UTF-8"
        " (where no byte is 0xff), or compile it with `compiler: nvcc`",
        "nul": f"expectations/kernels/nul.cu: a NUL byte at byte offset 3 (line 1): {cut}; remove it",
        "inline": "3: kernels.k.source: holds a NUL character (line 2 of the source): the compiler would read"
        " the source only up to it; remove it (write \\0 inside a string or character literal)",
    }
    for name, refusal in refusals.items():
        shown = [line for line in lines if line.startswith(f"{files[name]}:")]
        assert shown == [
            f"{files[name]}: input error",
            f"{files[name]}:{'' if name == 'inline' else ' '}{refusal}",
        ]


# --- files too large, or too clever, to read --------------------------------------------------------------

INLINE_KERNEL = """arch: sm_90
kernels:
  k:
    source: 'extern "C" __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }'
    entry: k
"""


def many_claims(claims: int, cases: int) -> str:
    """A valid file of as many cases and claims as asked, each written out (no aliases)."""
    lines = [INLINE_KERNEL + "cases:"]
    lines += [f"  c{i}: {{kernel: k, grid: {i + 1}, block: 32, args: [{{buffer: float32, count: {32 * (i + 1)}}}]}}" for i in range(cases)]  # fmt: skip
    lines.append("claims:")
    for i in range(claims):
        lines += [
            f"  - id: claim_{i}",
            f"    case: c{i % cases}",
            "    metric: static__registers_per_thread",
            "    expect: {at_least: 1}",
            '    cite: {document: d, section: "1", figure: f}',
        ]
    return "\n".join(lines) + "\n"


def aliases_refused(written: int) -> str:
    return (
        f"line 6: aliases expand the file's {written} values to more than {written + 100_000} (they may add"
        " 100000 at most); refusing to read on"
    )


def billion_laughs(width: int = 9, levels: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return INLINE_KERNEL + "\n".join(lines) + "\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project, its root marked, with a folder for expectation files."""
    (tmp_path / "expectations").mkdir()
    (tmp_path / ".ncuverify-root").write_text("")
    return tmp_path


def shown_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]


@pytest.mark.slow
def test_large_valid_files_load_and_alias_bombs_do_not(project):
    """10,000 claims, or 9,000 cases, are many values but no attack: they load and their claims are
    judged, while a billion laughs beside them is refused, alone, in one line."""
    claims, cases, bomb = (
        project / "expectations" / name for name in ("claims.yaml", "cases.yaml", "bomb.yaml")
    )
    claims.write_text(many_claims(10_000, 1))
    cases.write_text(many_claims(9_000, 9_000))
    bomb.write_text(billion_laughs())
    result = run("check", "--static-only", claims, cases, bomb, cwd=project)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    lines = shown_lines(result)
    assert "Traceback" not in result.stdout + result.stderr
    assert any(line.startswith(f"{claims}: 10000 passed, 0 failed") for line in lines), lines
    assert any(line.startswith(f"{cases}: 9000 passed, 0 failed") for line in lines), lines
    assert f"{bomb}: {aliases_refused(110)}" in lines


@pytest.mark.slow
def test_an_alias_bomb_is_refused_long_before_it_could_expand(project):
    bomb = project / "expectations" / "bomb.yaml"
    bomb.write_text(billion_laughs(10, 10))
    started = time.perf_counter()
    result = run("lint", bomb, cwd=project)
    elapsed = time.perf_counter() - started
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert shown_lines(result) == [
        f"{bomb}: input error",
        f"{bomb}: {aliases_refused(131)}",
    ]
    # About 2 s on a loaded 2-core machine, Python's start included, where expanding the ten billion
    # values would take hours: the bound is far from both. (tests/test_yaml_reader.py counts the values
    # read before the refusal.)
    assert elapsed < 60.0, f"{elapsed:.1f} s"


@pytest.mark.slow
def test_init_reads_a_latin_1_source_and_refuses_one_nvrtc_would_cut(project):
    kernels = project / "expectations" / "kernels"
    kernels.mkdir()
    (kernels / "latin1.cu").write_bytes(LATIN_1 + KERNEL.encode())
    (kernels / "ff.cu").write_bytes(KERNEL.encode() + b"// \xff\n")
    written = run("init", "--arch", "sm_90", "--no-cache", kernels / "latin1.cu", cwd=project)
    assert written.returncode == ExitCode.OK, written.stdout + written.stderr
    assert "entry: k" in written.stdout
    refused = run(
        "init", "--arch", "sm_90", "--no-cache", "--compiler", "nvrtc", kernels / "ff.cu", cwd=project
    )
    assert refused.returncode == ExitCode.BAD_INPUT
    assert shown_lines(refused) == [
        f"expectations/kernels/ff.cu: the byte 0xff at byte offset {len(KERNEL) + 3} (line 2): NVRTC reads the source only up to"
        " it and would leave the rest out of the build; save the file as UTF-8 (where no byte is 0xff), or"
        " compile it with `compiler: nvcc`"
    ]


# --- a recording damaged since it was made ----------------------------------------------------------------

SAMPLE_LOG = (FIXTURES / "sample" / "ncu.log").read_bytes()
LAST_LAUNCH = SAMPLE_LOG.rstrip(b"\n").rsplit(b"\n", 1)[0] + b"\n"  # the log without its last row


@pytest.mark.slow
@pytest.mark.parametrize(
    ("log", "said"),
    [
        (SAMPLE_LOG + b"\x7fELF\x02\x01\x01\x00\xff\xfe", f"not UTF-8 text at byte {len(SAMPLE_LOG) + 8}"),
        (LAST_LAUNCH, "it lacks the launches of case 'sample.yaml::misaligned', which the recorded status says ran"),
        (SAMPLE_LOG.replace(b'\n"0",', b'\n"0","1",', 1), "ncu's CSV could not be read (row 2 has 290 fields, the header 289)"),
    ],
    ids=["binary_junk", "cut_short", "a_field_more"],
)  # fmt: skip
def test_a_damaged_recording_is_an_input_error_naming_its_log(tmp_path, log, said):
    recorded = tmp_path / "recorded"
    shutil.copytree(FIXTURES / "sample", recorded)
    (recorded / "ncu.log").write_bytes(log)
    shutil.copy(DATA / "sample.yaml", tmp_path / "sample.yaml")
    (tmp_path / ".ncuverify-root").write_text("")
    result = run("check", "--from-profile", recorded, "sample.yaml", cwd=tmp_path)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    [heading, line] = shown_lines(result)
    assert heading == "sample.yaml: input error"
    assert line.startswith(f"{recorded / 'ncu.log'}: ") and said in line, line
