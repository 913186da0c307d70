"""NVRTC builds: these need no GPU, only the NVRTC library (the nvidia-cuda-nvrtc wheel)."""

from pathlib import Path

import pytest
import yaml
from conftest import DATA, ended

from ncuverify.build import BuildLimits, build_spec
from ncuverify.build.units import nvrtc_options
from ncuverify.errors import InputError
from ncuverify.spec import load


def spec_with(tmp_path: Path, kernels: dict, name: str = "k.yaml"):
    first = next(iter(kernels))
    content = {
        "kernels": kernels,
        "cases": {"c": {"kernel": first, "grid": 1, "block": 32}},
        "claims": [
            {
                "id": "x",
                "case": "c",
                "metric": "m.sum",
                "expect": {"equals": 1},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(content))
    return load(path)


def test_sample_builds_templates_and_extern_c_for_sm90():
    builds = build_spec(load(DATA / "sample.yaml"), "sm_90")
    assert builds["read_stride32"].symbol == "_Z11read_strideILi32EEvPKfPf"
    assert builds["read_stride1"].symbol == "_Z11read_strideILi1EEvPKfPf"
    assert builds["scale"].symbol == "scale"
    assert builds["scale"].cubin[:4] == b"\x7fELF"
    # Both instantiations come from one compile of the shared source.
    assert builds["read_stride1"].cubin is builds["read_stride32"].cubin
    ptxas = builds["scale"].facts.ptxas
    assert ptxas.registers > 0 and ptxas.spill_store_bytes == 0


def test_cuda_headers_compile(tmp_path):
    source = """
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cuda/pipeline>
namespace cg = cooperative_groups;
extern "C" __global__ void halves(const __half* in, float* out) {
    cg::thread_block block = cg::this_thread_block();
    out[block.thread_rank()] = __half2float(in[block.thread_rank()]);
}
"""
    builds = build_spec(spec_with(tmp_path, {"halves": {"source": source, "entry": "halves"}}), "sm_90")
    assert builds["halves"].symbol == "halves"


def test_defines_and_register_cap_reach_ptxas(tmp_path):
    source = """
extern "C" __global__ void heavy(float* out, int n) {
    float acc[WIDTH];
    #pragma unroll
    for (int i = 0; i < WIDTH; ++i) acc[i] = out[i * n + threadIdx.x];
    float s = 0.f;
    #pragma unroll
    for (int i = 0; i < WIDTH; ++i) s += acc[i] * acc[(i * 7) % WIDTH];
    out[threadIdx.x] = s;
}
"""
    kernels = {
        "free": {"source": source, "entry": "heavy", "defines": {"WIDTH": 96}},
        "capped": {"source": source, "entry": "heavy", "defines": {"WIDTH": 96}, "max_registers": 32},
    }
    builds = build_spec(spec_with(tmp_path, kernels), "sm_90")
    free, capped = builds["free"].facts.ptxas, builds["capped"].facts.ptxas
    assert capped.registers <= 32 < free.registers
    assert capped.spill_store_bytes > 0 and free.spill_store_bytes == 0


def test_compile_error_names_file_and_line(tmp_path):
    kernel_file = tmp_path / "broken.cu"
    kernel_file.write_text(
        'extern "C" __global__ void broken(float* out) {\n    out[0] = undefined_name;\n}\n'
    )
    spec = spec_with(tmp_path, {"broken": {"file": "broken.cu", "entry": "broken"}})
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90")
    message = str(error.value)
    assert 'broken.cu(2): error: identifier "undefined_name" is undefined' in message
    assert "does not compile for sm_90" in message


def test_missing_entry_point_lists_what_exists(tmp_path):
    spec = spec_with(
        tmp_path,
        {"k": {"source": 'extern "C" __global__ void real(float* o) { o[0] = 1.f; }', "entry": "imagined"}},
    )
    with pytest.raises(InputError, match=r"no kernel entry point 'imagined' \(it defines: real\)"):
        build_spec(spec, "sm_90")


def test_nvrtc_options_carry_the_choices(tmp_path):
    from ncuverify.build.resolve import Roots
    from ncuverify.build.units import unit_of

    spec = spec_with(
        tmp_path,
        {
            "k": {
                "source": "x",
                "entry": "k",
                "lineinfo": True,
                "std": "c++20",
                "max_registers": 40,
                "defines": {"A": 1, "B": None},
                "flags": ["--use_fast_math"],
            }
        },
    )
    roots = Roots(project=tmp_path.resolve())
    options = nvrtc_options(unit_of(spec.path, "k", spec.content.kernels["k"], "sm_90", roots))
    for expected in [
        "-arch=sm_90",
        "--std=c++20",
        "--ptxas-options=-v",
        "--generate-line-info",
        "--maxrregcount=40",
        "--define-macro=A=1",
        "--define-macro=B",
        "--no-cache",
    ]:
        assert expected in options
    assert options[-1] == "--use_fast_math"


# --- what a kernel may read ----------------------------------------------------------------------------------

SECRET = "SECRET_5d02aa"
KERNEL = 'extern "C" __global__ void k(float* o) { o[threadIdx.x] = 1.f; }\n'


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A project with a kernel folder, entered (so that messages name kernels/k.cu), and beside it a
    folder that is not the project's, holding a secret."""
    root = tmp_path / "repo"
    (root / "kernels").mkdir(parents=True)
    (root / ".ncuverify-root").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.h").write_text(f"{SECRET}\n")
    monkeypatch.chdir(root)
    return root, outside


def kernel_file(root: Path, text: str, **kernel):
    (root / "kernels" / "k.cu").write_text(text)
    return spec_with(root, {"k": {"file": "kernels/k.cu", "entry": "k", **kernel}})


def refused(spec, limits: BuildLimits | None = None) -> str:
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90", limits=limits or BuildLimits())
    message = str(error.value)
    assert SECRET not in message
    return message


def outside(root: Path) -> str:
    return (
        f"lies outside the project ({root.resolve()}) and the CUDA headers; a folder beside the project can be "
        "allowed with --allow-include DIR"
    )


def test_a_kernel_that_includes_a_file_outside_is_refused_before_compiling(repo):
    root, away = repo
    spec = kernel_file(root, f'#include "{away}/secret.h"\n{KERNEL}')
    assert refused(spec) == f'{spec.path}: kernels/k.cu:1: #include "{away}/secret.h": {outside(root)}'
    spec = kernel_file(root, f'#include "../../outside/secret.h"\n{KERNEL}')
    assert refused(spec) == f'{spec.path}: kernels/k.cu:1: #include "../../outside/secret.h": {outside(root)}'


def test_the_environment_and_system_files_are_refused(repo, monkeypatch):
    root, _ = repo
    monkeypatch.setenv("NCUVERIFY_TEST_TOKEN", SECRET)
    for target in ("/proc/self/environ", "/etc/passwd"):
        message = refused(kernel_file(root, f'#include "{target}"\n{KERNEL}'))
        assert message.endswith(f'kernels/k.cu:1: #include "{target}": {outside(root)}')
        assert "root:" not in message


def test_inline_source_cannot_reach_outside(repo):
    root, away = repo
    spec = spec_with(root, {"k": {"source": f'#include "{away}/secret.h"\n', "entry": "k"}})
    assert refused(spec) == f'{spec.path}: k.yaml:inline:1: #include "{away}/secret.h": {outside(root)}'
    # Relative to nothing the walk knows of: NVRTC does not find it either, in its empty folder.
    for name in ("../../outside/secret.h", "../request.json", "request.json"):
        message = refused(spec_with(root, {"k": {"source": f'#include "{name}"\n{KERNEL}', "entry": "k"}}))
        assert f'cannot open source file "{name}"' in message


def test_include_folders_in_flags_are_checked_like_include_dirs(repo):
    root, away = repo
    for flags in (["-I/etc"], ["-I", "/etc"], ["--include-path=/etc"]):
        spec = spec_with(root, {"k": {"source": KERNEL, "entry": "k", "flags": flags}})
        assert refused(spec) == (
            f"{spec.path}: kernels.k.flags: {' '.join(flags)} lies outside the project ({root.resolve()}); an "
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
        "neither read nor write files (the README lists them)"
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
    from ncuverify.build.flags import define_value

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


def test_allowed_flags_are_passed_in_full(repo):
    from ncuverify.build.resolve import Roots
    from ncuverify.build.units import unit_of

    root, _ = repo
    (root / "include").mkdir()
    (root / "include" / "width.h").write_text("#define WIDTH 4\n")
    flags = [
        "-DA=3",
        "-D",
        "B",
        "-U",
        "C",
        "--use_fast_math",
        "-ftz=true",
        "-Xptxas",
        "--warn-on-spills",
        "-I",
        "include",
    ]
    source = (
        '#include <width.h>\nextern "C" __global__ void k(float* o) { o[threadIdx.x] = A * B * WIDTH; }\n'
    )
    spec = spec_with(root, {"k": {"source": source, "entry": "k", "flags": flags}})
    unit = unit_of(spec.path, "k", spec.content.kernels["k"], "sm_90", Roots(project=root.resolve()))
    assert list(unit.options) == [
        "--define-macro=A=3",
        "--define-macro=B",
        "--undefine-macro=C",
        "--use_fast_math",
        "--ftz=true",
        "--ptxas-options=--warn-on-spills",
    ]
    assert unit.include_dirs == (str((root / "include").resolve()),)
    assert build_spec(spec, "sm_90")["k"].symbol == "k"


def test_a_header_of_an_allowed_folder_compiles(repo):
    root, away = repo
    (away / "factor.h").write_text("#define FACTOR 3.f\n")
    source = '#include "../../outside/factor.h"\nextern "C" __global__ void k(float* o) { o[0] = FACTOR; }\n'
    spec = kernel_file(root, source)
    assert refused(spec).endswith(f'#include "../../outside/factor.h": {outside(root)}')
    assert build_spec(spec, "sm_90", limits=BuildLimits(allowed_roots=(away,)))["k"].symbol == "k"


# --- the time limit --------------------------------------------------------------------------------------------

# Each macro doubles the one before: expanding the last would take longer than anyone waits.
MACRO_BOMB = "\n".join(
    ["#define A0 x x", *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 60)), "int y = A59;", ""]
)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The temporary folder the build uses, empty and watched."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if text in command and state != "Z":
                found.append(int(entry.name))
    return found


def test_a_compile_that_does_not_end_is_stopped(repo, scratch):
    root, _ = repo
    spec = kernel_file(root, MACRO_BOMB)
    assert refused(spec, BuildLimits(timeout_s=1.5)) == (
        f"{spec.path}: kernels/k.cu: did not compile within 1.5 s; stopped (a preprocessor that expands without bound?)"
    )
    assert list(scratch.iterdir()) == []
    assert processes_mentioning(str(scratch)) == []


def test_the_whole_worker_group_is_killed_at_the_limit(repo, scratch, monkeypatch):
    import sys

    from ncuverify.build import launch

    root, _ = repo
    pids = scratch.parent / "pids"
    # A worker that starts a grandchild, and neither ever ends.
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    monkeypatch.setattr(
        launch, "_worker_command", lambda request: [sys.executable, "-c", script, str(request)]
    )
    spec = kernel_file(root, KERNEL)
    assert "did not compile within 2 s; stopped" in refused(spec, BuildLimits(timeout_s=2))
    assert ended(int(pids.read_text()))
    assert list(scratch.iterdir()) == []
    assert processes_mentioning(str(scratch)) == []


def test_a_worker_that_breaks_is_an_internal_error(repo, scratch, monkeypatch):
    import sys

    from ncuverify.build import launch

    root, _ = repo
    monkeypatch.setattr(
        launch,
        "_worker_command",
        lambda request: [sys.executable, "-c", "import sys; print('not json'); sys.exit(3)"],
    )
    with pytest.raises(RuntimeError, match=r"the compile worker for kernels/k.cu failed \(exit status 3\)"):
        build_spec(kernel_file(root, KERNEL), "sm_90")
    assert list(scratch.iterdir()) == []


def test_the_worker_does_not_see_the_environment(monkeypatch):
    from ncuverify.build.launch import worker_environment

    monkeypatch.setenv("CI_DEPLOY_TOKEN", SECRET)
    environment = worker_environment()
    assert SECRET not in environment.values()
    assert "PYTHONPATH" in environment


# --- the source digest -------------------------------------------------------------------------------------------


def test_the_source_digest_covers_headers_not_paths(tmp_path):
    import shutil

    def digest(folder: Path) -> str:
        return build_spec(load(folder / "expectations" / "scale.yaml"), "sm_90")["scale"].source_digest

    here, there = tmp_path / "here", tmp_path / "elsewhere" / "deeper"
    for copy in (here, there):
        shutil.copytree(DATA / "includes" / "project", copy)
    assert digest(here) == digest(there)
    (there / "common" / "factor.cuh").write_text("#pragma once\n#define FACTOR 3.0f\n")
    assert digest(here) != digest(there)


def test_the_source_digest_of_a_kernel_without_headers_is_as_before(tmp_path):
    # Recordings name their kernels' digests; a kernel that includes only CUDA headers keeps its own.
    import hashlib

    builds = build_spec(load(DATA / "sample.yaml"), "sm_90")
    kernel = load(DATA / "sample.yaml").content.kernels["scale"]
    source = (DATA / kernel.file).read_text() if kernel.file else kernel.source
    defines = tuple(sorted(kernel.defines.items()))
    identity = (
        source,
        kernel.entry,
        "sm_90",
        defines,
        kernel.lineinfo,
        kernel.std,
        kernel.max_registers,
        tuple(kernel.flags),
    )
    assert builds["scale"].source_digest == hashlib.sha256(repr(identity).encode()).hexdigest()[:16]


# --- the second wall: the worker reads only the project, the allowed folders and the CUDA headers ------------


def confinement_problem(readable: Path) -> str | None:
    """Why a worker could not be confined on this machine, or None."""
    import subprocess
    import sys

    script = f"from ncuverify.build.worker import confine; print(confine([{str(readable)!r}]) or 'confined')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return None if done.stdout.strip() == "confined" else done.stdout.strip()


def test_a_confined_worker_reads_only_its_folders(tmp_path):
    import subprocess
    import sys

    if (problem := confinement_problem(tmp_path)) is not None:
        pytest.skip(problem)
    (tmp_path / "mine.txt").write_text("mine")
    script = (
        "from ncuverify.build.worker import confine\n"
        f"assert confine([{str(tmp_path)!r}]) is None\n"
        f"print(open({str(tmp_path / 'mine.txt')!r}).read())\n"
        "for path in ('/etc/passwd', '/proc/self/environ'):\n"
        "    try:\n"
        "        open(path).read(); print('read', path)\n"
        "    except PermissionError:\n"
        "        print('refused', path)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:3] == ["mine", "refused /etc/passwd", "refused /proc/self/environ"]


def test_a_project_header_that_a_cuda_header_picks_up_cannot_read_outside(repo, monkeypatch):
    # CCCL's headers test __has_include(<version>); a file of that name in the kernel's folder is
    # included by them, out of the walk's sight. Confined, NVRTC cannot open what that file includes.
    root, _ = repo
    if (problem := confinement_problem(root)) is not None:
        pytest.skip(problem)
    monkeypatch.setenv("NCUVERIFY_TEST_TOKEN", SECRET)
    (root / "kernels" / "version").write_text('#include "/proc/self/environ"\n')
    message = refused(kernel_file(root, f"#include <cuda/std/cstdint>\n{KERNEL}"))
    assert 'cannot open source file "/proc/self/environ": Permission denied' in message


def test_check_exits_2_on_an_include_outside_and_shows_none_of_it(repo):
    from typer.testing import CliRunner

    from ncuverify.cli import app
    from ncuverify.errors import ExitCode

    root, _ = repo
    spec = kernel_file(root, f'#include "../../outside/secret.h"\n{KERNEL}')
    spec.path.write_text("arch: sm_90\n" + spec.path.read_text().replace("m.sum", "static__barriers"))
    result = CliRunner().invoke(app, ["check", "--static-only", str(spec.path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert '#include "../../outside/secret.h": lies outside the project' in " ".join(result.stdout.split())
    assert SECRET not in result.stdout
