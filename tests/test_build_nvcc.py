"""nvcc builds (compiler: nvcc): whole programs compiled as they are, their kernels found by their C++
names, nvcc confined and given a minimal environment. Need nvcc (the CUDA wheels) and g++, no GPU."""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from build_projects import SECRET, refused, spec_with
from cli_invoke import invoke, invoke_command
from conftest import ROOT

from ncuverify.build import BuildLimits, build_spec
from ncuverify.build import nvcc as nvcc_module
from ncuverify.build.host import host_toolchain
from ncuverify.build.resolve import Roots
from ncuverify.build.toolkit import cuda_include_dirs, find_tool
from ncuverify.build.units import Unit
from ncuverify.build.worker import landlock_abi
from ncuverify.errors import ExitCode, InputError
from ncuverify.spec import load

pytestmark = pytest.mark.skipif(
    find_tool("nvcc") is None or shutil.which("g++") is None, reason="needs nvcc and g++"
)
EXAMPLE = ROOT / "examples" / "whole-program" / "transpose.yaml"

PROGRAM = """#include <cstdio>
#include <cassert>
#include <cuda_runtime.h>
__global__ void transposeNaive(float* out, const float* in) { out[threadIdx.x * 32] = in[threadIdx.x]; }
namespace ns { __global__ void f(int* p) { *p = 1; } }
template <typename T> __global__ void stride(T* p) { p[threadIdx.x * 2] = T(1); }
template __global__ void stride<float>(float*);
template <const unsigned TILE> __global__ void tiled(float* p) { p[threadIdx.x * TILE] = 1.f; }
template __global__ void tiled<32>(float*);
__global__ void over(int* p) { *p = 1; }
__global__ void over(float* p) { *p = 1.f; }
int main() { int* p; assert(cudaMalloc(&p, 4) == cudaSuccess); printf("ok\\n"); return 0; }
"""


def nvcc_kernels(tmp_path: Path, entries: dict[str, str], **kernel) -> dict:
    (tmp_path / "program.cu").write_text(PROGRAM)
    return {
        name: {"file": "program.cu", "entry": entry, "compiler": "nvcc", **kernel}
        for name, entry in entries.items()
    }


def test_a_whole_program_builds_and_entries_are_found_by_their_cpp_names(tmp_path):
    kernels = nvcc_kernels(tmp_path, {"naive": "transposeNaive", "f": "ns::f", "s": "stride<float>"})
    builds = build_spec(spec_with(tmp_path, kernels), "sm_90")
    assert builds["naive"].symbol == "_Z14transposeNaivePfPKf"
    assert builds["f"].symbol == "_ZN2ns1fEPi"
    assert builds["s"].symbol == "_Z6strideIfEvPT_"
    assert builds["naive"].cubin[:4] == b"\x7fELF"
    assert builds["naive"].facts.ptxas.registers > 0


def test_an_unsigned_template_argument_is_named_as_written(tmp_path):
    """The demangler writes tiled<32u> for `template <const unsigned TILE>`; the file says tiled<32>."""
    builds = build_spec(spec_with(tmp_path, nvcc_kernels(tmp_path, {"t": "tiled<32>"})), "sm_90")
    assert builds["t"].symbol == "_Z5tiledILj32EEvPf"


def test_a_template_instance_the_code_does_not_instantiate_is_built_as_named(tmp_path):
    builds = build_spec(spec_with(tmp_path, nvcc_kernels(tmp_path, {"t": "tiled<64>"})), "sm_90")
    assert builds["t"].symbol == "_Z5tiledILj64EEvPf" and builds["t"].entry == "tiled<64>"


TEMPLATES = """template <int N> __global__ void scale(float* x, float a) { x[threadIdx.x * N] *= a; }
template <typename T, int K> __global__ void fill(T* x) { x[threadIdx.x] = T(K); }
"""


@pytest.mark.parametrize("compiler", ["nvcc", "nvrtc"])
def test_templates_of_a_header_are_built_as_written_through_both_compilers(tmp_path, compiler):
    (tmp_path / "tiles.cuh").write_text(TEMPLATES)
    (tmp_path / "k.cu").write_text('#include "tiles.cuh"\n')
    kernels = {
        name: {"file": "k.cu", "entry": entry, "compiler": compiler}
        for name, entry in {"s": "scale<32>", "f": "fill<float, 4>"}.items()
    }
    builds = build_spec(spec_with(tmp_path, kernels), "sm_90")
    assert (builds["s"].entry, builds["s"].symbol) == ("scale<32>", "_Z5scaleILi32EEvPff")
    assert (builds["f"].entry, builds["f"].symbol) == ("fill<float, 4>", "_Z4fillIfLi4EEvPT_")
    assert (builds["s"].nvcc is None) == (compiler == "nvrtc")


def test_a_template_entry_that_names_no_template_is_nvcc_error_on_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = refused(spec_with(tmp_path, nvcc_kernels(tmp_path, {"t": "nosuch<3>"})))
    assert "does not compile for sm_90 with nvcc" in message and "nosuch" in message
    assert (
        'entries.cu(2): error: identifier "nosuch" is undefined' in message
        and str(tmp_path) not in message.split("with nvcc:", 1)[1]
    )


@pytest.mark.slow
def test_an_overloaded_or_unknown_entry_lists_the_kernels_demangled(tmp_path):
    message = refused(spec_with(tmp_path, nvcc_kernels(tmp_path, {"k": "over"})))
    assert "more than one kernel (overloads) for 'over'" in message
    assert "over(int*)" in message and "over(float*)" in message
    message = refused(spec_with(tmp_path, nvcc_kernels(tmp_path, {"k": "missing"})))
    assert "no kernel entry point 'missing'" in message and "transposeNaive(float*, float const*)" in message


def test_the_file_wide_compiler_applies_and_a_kernel_own_setting_wins(tmp_path):
    kernels = nvcc_kernels(tmp_path, {"naive": "transposeNaive"})
    del kernels["naive"]["compiler"]
    spec = spec_with(tmp_path, kernels)
    with pytest.raises(InputError):  # NVRTC, the default, cannot compile the program
        build_spec(spec, "sm_90")
    spec = spec.__class__(spec.path, spec.content.model_copy(update={"compiler": "nvcc"}))
    assert build_spec(spec, "sm_90")["naive"].symbol == "_Z14transposeNaivePfPKf"


def test_nvrtc_failing_on_host_code_hints_at_nvcc(tmp_path):
    kernels = nvcc_kernels(tmp_path, {"naive": "transposeNaive"})
    kernels["naive"]["compiler"] = "nvrtc"
    message = refused(spec_with(tmp_path, kernels))
    assert message.rstrip().endswith(nvcc_module.HOST_CODE_HINT)


def test_nvrtc_failing_on_device_code_gives_no_hint(tmp_path):
    kernels = {"k": {"source": 'extern "C" __global__ void k() { undefined(); }', "entry": "k"}}
    assert nvcc_module.HOST_CODE_HINT not in refused(spec_with(tmp_path, kernels))


def test_a_compile_error_shows_nvcc_log_with_the_file_named_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.cu").write_text("__global__ void k() { undefined_thing(); }\n")
    spec = spec_with(tmp_path, {"k": {"file": "bad.cu", "entry": "k", "compiler": "nvcc"}})
    message = refused(spec)
    assert "does not compile for sm_90 with nvcc" in message and "undefined_thing" in message
    log = message.split("with nvcc:", 1)[1]
    assert "bad.cu(1): error" in log and str(tmp_path) not in log


def test_the_environment_does_not_reach_nvcc(tmp_path, monkeypatch):
    monkeypatch.setenv("NVCC_PREPEND_FLAGS", "-DBROKEN")
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-DBROKEN")
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "cstdio").write_text("#error from CPATH\n")
    for name in ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"):
        monkeypatch.setenv(name, str(tmp_path / "evil"))
    monkeypatch.setenv("GCC_EXEC_PREFIX", str(tmp_path / "evil") + "/")
    monkeypatch.setenv("DEPENDENCIES_OUTPUT", str(tmp_path / "deps.d"))
    source = (
        "#include <cstdio>\n#ifdef BROKEN\n#error reached\n#endif\n__global__ void k(int* p) { *p = 1; }\n"
    )
    (tmp_path / "k.cu").write_text(source)
    spec = spec_with(tmp_path, {"k": {"file": "k.cu", "entry": "k", "compiler": "nvcc"}})
    assert build_spec(spec, "sm_90")["k"].symbol == "_Z1kPi"
    assert not (tmp_path / "deps.d").exists()


def inline_unit(**fields) -> Unit:
    """An nvcc unit of inline source, made directly: without unit_of's checks."""
    unit = Unit(
        source="__global__ void k() {}\n",
        source_name="k.yaml:inline",
        folder=None,
        arch="sm_90",
        defines=(),
        include_dirs=(),
        lineinfo=False,
        std="c++17",
        max_registers=None,
        flags=(),
        options=(),
        compiler="nvcc",
    )
    return replace(unit, **fields)


def test_landlock_keeps_nvcc_from_reading_outside_its_folders(tmp_path):
    """The second wall: an include folder that the walk would refuse, handed to nvcc directly."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.h").write_text(f"{SECRET}\n")
    unit = inline_unit(source='#include "secret.h"\n__global__ void k() {}\n', include_dirs=(str(outside),))
    answer = nvcc_module.compile_cubin(unit, host_toolchain(), Roots(project=project), 120.0)
    if not answer.confined:
        pytest.skip("no Landlock on this machine")
    assert not answer.compiled and "secret.h" in answer.log


def test_nvcc_options_are_the_command_line_the_docs_give():
    unit = Unit(
        "",
        "k.cu",
        None,
        "sm_90",
        (("N", "4"), ("F", None)),
        (),
        True,
        "c++17",
        64,
        (),
        ("--use_fast_math",),
        "nvcc",
    )
    assert nvcc_module.nvcc_options(unit) == [
        "-cubin", "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-x", "cu", "-lineinfo", "-maxrregcount=64",
        "-DN=4", "-DF", "--use_fast_math",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("log", "source", "hinted"),
    [
        ('k.cu(1): catastrophic error: cannot open source file "cstdio"', b"", True),
        ('k.cu(1): catastrophic error: cannot open source file "stdio.h"', b"", True),
        ("k.cu(3): error: something else", b"int main(void) { return 0; }", True),
        ('k.cu(1): catastrophic error: cannot open source file "mine.h"', b"__global__ void k() {}", False),
        ("k.cu(3): error: something else", b"int domain(int x);", False),
    ],
)
def test_the_hint_is_given_for_host_code_only(log, source, hinted):
    assert (nvcc_module.host_code_hint(log, source) is not None) == hinted


@pytest.mark.slow
def test_the_example_static_claims_hold_without_a_gpu(no_gpu):
    result = invoke("--static-only", str(EXAMPLE))
    assert result.exit_code == ExitCode.OK, result.output
    assert "6 passed, 0 failed" in result.output


def test_the_example_builds(no_gpu):
    result = invoke_command("build", str(EXAMPLE))
    assert result.exit_code == ExitCode.OK, result.output
    assert "_Z14transposeNaivePfPKfii" in result.output or "transposeNaive" in result.output


def test_without_g_plus_plus_nvcc_kernels_are_wrong_input_with_one_message(no_gpu, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    result = invoke("--static-only", str(EXAMPLE))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "there is no g++ on the PATH here" in result.output
    assert "Traceback" not in result.output
    assert os.environ.get("PATH")  # the process's own PATH is untouched


def test_defines_flags_and_paths_nvcc_reads_as_written_still_build(tmp_path, monkeypatch):
    """What sh reads literally inside double quotes: spaces, ;&|<>*?!() and ' in a file's name; a
    comma in a define (nvcc splits -D values at commas unless one is escaped)."""
    folder = tmp_path / "a b;c&d(e)"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    source = (
        "__global__ void k(float* o) {\n"
        "  int a[] = {ARGS};\n"
        "  o[threadIdx.x] = ADD(N, X) + sizeof(TYPE) + NAME + a[1];\n"
        "}\n"
    )
    (folder / "k |<>*?!' 1.cu").write_text(source)
    kernel = {
        "file": "a b;c&d(e)/k |<>*?!' 1.cu",
        "entry": "k",
        "compiler": "nvcc",
        "defines": {"N": 1024, "TYPE": "float", "NAME": "a_b", "a_b": 2, "ARGS": "1,2"},
        "flags": ["-DX=(1<<4)", "-DADD(a,b)=((a)+(b))"],
    }
    assert build_spec(spec_with(tmp_path, {"k": kernel}), "sm_90")["k"].symbol == "_Z1kPf"


def test_nvcc_gets_commas_in_defines_escaped():
    options = ("--define-macro=F(a,b)=a", "--undefine-macro=G", "--optimize=3")
    unit = inline_unit(defines=(("A", "1,2"),), options=options)
    assert nvcc_module.nvcc_options(unit)[-4:] == [
        "-DA=1\\,2",
        "--define-macro=F(a\\,b)=a",
        "--undefine-macro=G",
        "--optimize=3",
    ]


def test_nothing_that_nvcc_shell_would_read_reaches_it_even_past_the_unit_checks(tmp_path):
    """The last look at the command line, for a unit made without unit_of's checks."""
    unit = inline_unit(defines=(("N", "$(touch x)"),))
    with pytest.raises(
        InputError, match=r"^k.yaml:inline: nvcc's command line: -DN=\$\(touch x\): '\$' would"
    ):
        nvcc_module.compile_cubin(unit, host_toolchain(), Roots(project=tmp_path), 120.0)


def test_nvcc_says_whether_its_network_was_closed(tmp_path):
    answer = nvcc_module.compile_cubin(inline_unit(), host_toolchain(), Roots(project=tmp_path), 120.0)
    assert answer.compiled
    assert answer.network_closed == (answer.confined and landlock_abi() >= 4)


# --- the toolkit nvcc comes from ------------------------------------------------------------------------------


def _installed_toolkit(header: str) -> Path | None:
    """A CUDA toolkit installed on this machine whose include/ holds header (CUDA_HOME, else
    /usr/local/cuda), resolved; None where there is none."""
    for folder in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if (
            folder
            and (Path(folder) / "bin" / "nvcc").is_file()
            and (Path(folder) / "include" / header).is_file()
        ):
            return Path(os.path.realpath(folder))
    return None


PROFILED = "#include <cuda_profiler_api.h>\n__global__ void k(int* p) { *p = 1; }\nint main() { return cudaProfilerStart(); }\n"
PROFILER_TOOLKIT = _installed_toolkit("cuda_profiler_api.h")
WHEELS_HAVE_PROFILER = any((Path(folder) / "cuda_profiler_api.h").is_file() for folder in cuda_include_dirs())


def _profiled(tmp_path: Path, **file) -> Path:
    (tmp_path / "k.cu").write_text(PROFILED)
    spec = spec_with(tmp_path, {"k": {"file": "k.cu", "entry": "k", "compiler": "nvcc"}})
    content = yaml.safe_load(spec.path.read_text())
    spec.path.write_text(yaml.safe_dump({**content, **file}))
    return spec.path


@pytest.mark.skipif(WHEELS_HAVE_PROFILER, reason="the CUDA wheels here hold cuda_profiler_api.h")
def test_a_library_header_the_wheels_lack_fails_with_the_hint(tmp_path, monkeypatch):
    for name in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(name, raising=False)
    message = refused(load(_profiled(tmp_path)))
    assert "cuda_profiler_api.h: No such file or directory" in message
    hint = message.rstrip().splitlines()[-1]
    assert hint.startswith("hint: cuda_profiler_api.h is a header of the CUDA profiler API")
    assert "--cuda-home DIR, or CUDA_HOME" in hint and "pip install 'cuda-toolkit[profiler]'" in hint


@pytest.mark.skipif(PROFILER_TOOLKIT is None, reason="needs a CUDA toolkit with cuda_profiler_api.h")
def test_the_toolkit_chosen_compiles_with_its_headers_and_is_recorded(tmp_path, monkeypatch):
    assert PROFILER_TOOLKIT is not None
    for name in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(name, raising=False)
    spec = load(_profiled(tmp_path))
    build = build_spec(spec, "sm_90", limits=BuildLimits(cuda_home=PROFILER_TOOLKIT))["k"]
    assert build.nvcc is not None and build.nvcc.endswith(f" at {PROFILER_TOOLKIT}")
    assert build.nvcc.startswith("nvcc ") and build.nvcc.split()[1][0].isdigit()
    monkeypatch.setenv("CUDA_HOME", str(PROFILER_TOOLKIT))  # the variable chooses it likewise
    assert build_spec(spec, "sm_90")["k"].nvcc == build.nvcc
    monkeypatch.delenv("CUDA_HOME")
    with_key = load(_profiled(tmp_path, toolkit=str(PROFILER_TOOLKIT)))  # and the file's key, installed
    assert build_spec(with_key, "sm_90")["k"].nvcc == build.nvcc


@pytest.mark.skipif(PROFILER_TOOLKIT is None, reason="needs a CUDA toolkit with cuda_profiler_api.h")
def test_cuda_home_is_an_option_of_build(tmp_path, monkeypatch):
    for name in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(name, raising=False)
    path = _profiled(tmp_path)
    result = invoke_command(
        "build", str(path), "--arch", "sm_90", "--no-cache", "--cuda-home", str(PROFILER_TOOLKIT)
    )
    assert result.exit_code == 0, result.output
    result = invoke_command("build", str(path), "--arch", "sm_90", "--cuda-home", str(tmp_path))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"--cuda-home {tmp_path}: no CUDA toolkit there (no bin/nvcc to run)" in result.output


def test_a_toolkit_key_inside_the_project_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "evil" / "bin").mkdir(parents=True)
    (tmp_path / "evil" / "bin" / "nvcc").write_text("#!/bin/sh\ntouch ran\n")
    (tmp_path / "evil" / "bin" / "nvcc").chmod(0o755)
    for written in (str(tmp_path / "evil"), "evil"):
        message = refused(load(_profiled(tmp_path, toolkit=written)))
        assert "toolkit: " in message and ("not an absolute path" in message or "inside " in message)
    assert not (tmp_path / "ran").exists() and not Path("ran").exists()


CUBLAS_TOOLKIT = _installed_toolkit("cublas_v2.h")


@pytest.mark.skipif(
    CUBLAS_TOOLKIT is None, reason="needs a CUDA toolkit with cuBLAS (CUDA_HOME or /usr/local/cuda)"
)
def test_a_kernel_including_cublas_compiles_with_a_toolkit_that_has_it(tmp_path, monkeypatch):
    for name in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "k.cu").write_text("#include <cublas_v2.h>\n__global__ void k(float* p) { *p = 1.f; }\n")
    spec = spec_with(tmp_path, {"k": {"file": "k.cu", "entry": "k", "compiler": "nvcc"}})
    assert build_spec(spec, "sm_90", limits=BuildLimits(cuda_home=CUBLAS_TOOLKIT))["k"].symbol == "_Z1kPf"


WHEEL_HEADERS = [Path(folder) / "cublas_v2.h" for folder in cuda_include_dirs()]


@pytest.mark.skipif(
    not any(header.is_file() for header in WHEEL_HEADERS),
    reason="needs the CUDA wheels' nvcc and the cuda-toolkit[cublas] wheel (the dev extra installs both)",
)
def test_a_kernel_including_cublas_compiles_with_the_cublas_wheel_as_the_toolkit(tmp_path, monkeypatch):
    """The cuda-toolkit[cublas] wheel puts cuBLAS's headers beside the wheels' own, where their nvcc
    looks: a kernel source that includes <cublas_v2.h> (a library's, say) builds with no toolkit."""
    for name in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "k.cu").write_text("#include <cublas_v2.h>\n__global__ void k(float* p) { *p = 1.f; }\n")
    spec = spec_with(tmp_path, {"k": {"file": "k.cu", "entry": "k", "compiler": "nvcc"}})
    assert build_spec(spec, "sm_90")["k"].symbol == "_Z1kPf"
