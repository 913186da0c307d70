"""NVRTC builds: these need no GPU, only the NVRTC library (the nvidia-cuda-nvrtc wheel)."""

from pathlib import Path

import pytest
from build_projects import KERNEL, SECRET, kernel_file, outside_message, refused, spec_with
from conftest import COMPILE_CACHE, DATA

from ncuverify.build import BuildLimits, build_spec
from ncuverify.errors import InputError
from ncuverify.spec import load


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


@pytest.mark.slow
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
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90")
    assert str(error.value) == (
        f"{spec.path}: {spec.path.name}:inline: no kernel entry point 'imagined' (it defines: real):"
        ' identifier "imagined" is undefined'
    )


LATIN_1_KERNEL = b'// caf\xe9, na\xefve: a comment written in Latin-1\nextern "C" __global__ void k(float* o) { o[0] = VALUE; }\n'


def test_a_source_and_a_header_that_are_not_utf8_compile_as_written(tmp_path):
    """Legacy sources have comments in Latin-1: NVRTC takes their bytes, and so does ncuverify. A byte
    0xff in a header is read like any other (NVRTC reads headers from their files)."""
    (tmp_path / "value.h").write_bytes(b"// \xff\xfe\xe9\n#define VALUE 2.0f\n")
    (tmp_path / "legacy.cu").write_bytes(b'#include "value.h"\n' + LATIN_1_KERNEL)
    builds = build_spec(spec_with(tmp_path, {"k": {"file": "legacy.cu", "entry": "k"}}), "sm_90")
    assert builds["k"].symbol == "k" and builds["k"].facts.ptxas.registers > 0


@pytest.mark.parametrize(
    ("cut", "said"),
    [
        (b"\xff", "the byte 0xff at byte offset {at} (line 4): NVRTC reads the source only up to it and would"
         " leave the rest out of the build; save the file as UTF-8 (where no byte is 0xff), or compile it"
         " with `compiler: nvcc`"),
        (b"\x00", "a NUL byte at byte offset {at} (line 4): NVRTC reads the source only up to it and would"
         " leave the rest out of the build; remove it"),
    ],
)  # fmt: skip
def test_a_byte_that_nvrtc_ends_a_source_at_is_refused(tmp_path, cut, said):
    """NVRTC compiles a source given to it only up to a NUL or a 0xff: what follows would be left out
    of the build unseen (here a second kernel, and an error that it would never report)."""
    head = b"#define VALUE 1.0f\n" + LATIN_1_KERNEL + b"// "
    tail = b'\nextern "C" __global__ void k2(float* o) {}\nerror;\n'
    (tmp_path / "cut.cu").write_bytes(head + cut + tail)
    spec = spec_with(tmp_path, {"k": {"file": "cut.cu", "entry": "k"}})
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90")
    assert str(error.value) == f"{spec.path}: {tmp_path / 'cut.cu'}: {said.format(at=len(head))}"


NAIVE = "__global__ void transposeNaive(float* out, const float* in) { out[threadIdx.x] = in[threadIdx.x]; }"


@pytest.mark.parametrize(
    ("source", "entry", "symbol"),
    [
        (NAIVE, "transposeNaive", "_Z14transposeNaivePfPKf"),
        (f"namespace ns {{ {NAIVE} }}", "ns::transposeNaive", "_ZN2ns14transposeNaiveEPfPKf"),
    ],
    ids=["plain", "in_a_namespace"],
)
def test_a_c_plus_plus_kernel_is_found_by_its_name_as_written(tmp_path, source, entry, symbol):
    """Not extern "C": the entry is the name as the source writes it, and NVRTC gives its symbol."""
    spec = spec_with(tmp_path, {"k": {"source": source, "entry": entry}})
    build = build_spec(spec, "sm_90")["k"]
    assert build.symbol == symbol and build.facts.ptxas.registers > 0


def test_an_overloaded_name_is_refused_with_what_it_could_mean(tmp_path):
    overloaded = NAIVE + "\n" + NAIVE.replace("float", "double")
    spec = spec_with(tmp_path, {"k": {"source": overloaded, "entry": "transposeNaive"}})
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90")
    assert str(error.value) == (
        f"{spec.path}: {spec.path.name}:inline: no kernel entry point 'transposeNaive' (it defines:"
        " transposeNaive(double*, double const*), transposeNaive(float*, float const*)): cannot"
        ' determine which instance of overloaded function "transposeNaive" is intended'
    )


# --- what a kernel may read ----------------------------------------------------------------------------------


def test_a_kernel_that_includes_a_file_outside_is_refused_before_compiling(repo):
    root, away = repo
    spec = kernel_file(root, f'#include "{away}/secret.h"\n{KERNEL}')
    assert (
        refused(spec) == f'{spec.path}: kernels/k.cu:1: #include "{away}/secret.h": {outside_message(root)}'
    )
    spec = kernel_file(root, f'#include "../../outside/secret.h"\n{KERNEL}')
    assert (
        refused(spec)
        == f'{spec.path}: kernels/k.cu:1: #include "../../outside/secret.h": {outside_message(root)}'
    )


def test_the_environment_and_system_files_are_refused(repo, monkeypatch):
    root, _ = repo
    monkeypatch.setenv("NCUVERIFY_TEST_TOKEN", SECRET)
    for target in ("/proc/self/environ", "/etc/passwd"):
        message = refused(kernel_file(root, f'#include "{target}"\n{KERNEL}'))
        assert message.endswith(f'kernels/k.cu:1: #include "{target}": {outside_message(root)}')
        assert "root:" not in message


def test_inline_source_cannot_reach_outside(repo):
    root, away = repo
    spec = spec_with(root, {"k": {"source": f'#include "{away}/secret.h"\n', "entry": "k"}})
    assert (
        refused(spec) == f'{spec.path}: k.yaml:inline:1: #include "{away}/secret.h": {outside_message(root)}'
    )
    # Relative to nothing the walk knows of: NVRTC does not find it either, in its empty folder.
    for name in ("../../outside/secret.h", "../request.json", "request.json"):
        message = refused(spec_with(root, {"k": {"source": f'#include "{name}"\n{KERNEL}', "entry": "k"}}))
        assert f'cannot open source file "{name}"' in message


def test_a_header_of_an_allowed_folder_compiles(repo):
    root, away = repo
    (away / "factor.h").write_text("#define FACTOR 3.f\n")
    source = '#include "../../outside/factor.h"\nextern "C" __global__ void k(float* o) { o[0] = FACTOR; }\n'
    spec = kernel_file(root, source)
    assert refused(spec).endswith(f'#include "../../outside/factor.h": {outside_message(root)}')
    assert build_spec(spec, "sm_90", limits=BuildLimits(allowed_roots=(away,)))["k"].symbol == "k"


# --- the source digest -------------------------------------------------------------------------------------------


@pytest.mark.slow
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

    builds = build_spec(load(DATA / "sample.yaml"), "sm_90", COMPILE_CACHE)
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


def test_a_tool_past_its_limit_is_an_input_error_of_the_build(monkeypatch):
    from ncuverify.build import programs as build
    from ncuverify.errors import InputError
    from ncuverify.processes import TimedOut

    def hung(cubin, timeout_s, sass):
        raise TimedOut(["/opt/cuda/bin/nvdisasm", "-c"], timeout_s)

    monkeypatch.setattr(build, "tool_outputs", hung)
    with pytest.raises(InputError) as error:
        build_spec(load(DATA / "static.yaml"), "sm_90")
    assert str(error.value) == (
        f"{DATA / 'static.yaml'}: static.yaml:inline: cannot read the static facts of the build: nvdisasm did not "
        "finish within 120 s; stopped"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("header", "body"),
    [
        ("mma.h", "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f;"
         " nvcuda::wmma::fill_fragment(f, 0.f); nvcuda::wmma::store_matrix_sync(o, f, 16, nvcuda::wmma::mem_row_major);"),
        ("curand_kernel.h", "curandStatePhilox4_32_10_t s; curand_init(1, threadIdx.x, 0, &s); o[threadIdx.x] = curand_uniform(&s);"),
    ],
)  # fmt: skip
def test_mma_and_curand_headers_compile_with_nvrtc(tmp_path, header, body):
    source = f'#include <{header}>\nextern "C" __global__ void k(float* o) {{ {body} }}\n'
    builds = build_spec(spec_with(tmp_path, {"k": {"source": source, "entry": "k"}}), "sm_90")
    assert builds["k"].symbol == "k"
