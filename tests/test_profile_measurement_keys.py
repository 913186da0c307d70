"""Measurement keys: each case's key changes with everything that can change its figures (its kernel's
code, its launch, the steps before it, its metrics, the GPU and tools, a program's files), and not with
a comment that only moves the kernel's lines. A kernel's code is its own part of its cubin: an edit of
another kernel of the same .cu file, or a new kernel beside it, leaves its key alone."""

import struct
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from conftest import COMPILE_CACHE, ROOT

from ncuverify.build import build_spec
from ncuverify.build.artifacts_elf import Section, section_name, sections, symbol_name, symbols
from ncuverify.profile.measurement_keys import IDENTITY_FIELDS, code_digest, gpu_identity, measurement_keys
from ncuverify.profile.plan import FileCases
from ncuverify.provenance import Provenance
from ncuverify.spec import load

SCALE = """extern "C" __global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
"""
# the same kernel, its lines moved by comments: with -lineinfo (the default) only its line table differs
COMMENTED = "// scales x in place\n// (a comment that moves every line after it)\n" + SCALE.replace(
    "x[i] *= 2.0f;", "x[i] *= 2.0f;  // doubled"
)
CHANGED = SCALE.replace("2.0f", "3.0f")
COPY = 'extern "C" __global__ void copy(const float* a, float* b) { b[threadIdx.x] = a[threadIdx.x]; }\n'
TIME = "gpu__time_duration.sum"
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
IDENTITY = {
    "gpu": "NVIDIA H200",
    "arch": "sm_90",
    "nvidia_driver": "580.159.04",
    "cuda_driver": "13.0",
    "ncu_version": "2025.3.1.0",
    "clock_control": "none",
    "cache_control": "all",
    "ncuverify_version": "0.1.0",
}


def claim(case: str, metric: str = TIME, number: int = 0) -> dict:
    return {
        "id": f"c{number}",
        "case": case,
        "metric": metric,
        "expect": {"at_least": 0},
        "cite": {"document": "d", "section": "1", "figure": "f"},
    }


def project(
    folder: Path, source: str = SCALE, grid: int = 4, metric: str = TIME, script: str = ""
) -> FileCases:
    """A project of one file: kernel scale's case `one`, a sequence `pair` of two copy steps, a program
    case `run`, each read by a claim; built for sm_90."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".ncuverify-root").write_text("")
    (folder / "scale.cu").write_text(source)
    (folder / "add.py").write_text(script or "print('adding')\n")
    copy_step = {"kernel": "copy", "grid": 1, "block": 32}
    content = {
        "arch": "sm_90",
        "kernels": {
            "scale": {"file": "scale.cu", "entry": "scale"},
            "copy": {"source": COPY, "entry": "copy"},
        },
        "cases": {
            "one": {
                "kernel": "scale",
                "grid": grid,
                "block": 32,
                "args": [{"buffer": "float32", "count": 128}, {"int32": 128}],
            },
            "pair": {
                "steps": [
                    {
                        **copy_step,
                        "args": [
                            {"buffer": "float32", "count": 32, "fill": "iota"},
                            {"buffer": "float32", "count": 32, "name": "mid"},
                        ],
                    },
                    {**copy_step, "args": [{"use": "mid"}, {"buffer": "float32", "count": 32}]},
                ]
            },
            "run": {"program": {"command": ["python3", "add.py"]}, "kernel": "add"},
        },
        "claims": [claim("one", metric, 0), claim("pair#2", TIME, 1), claim("run", TIME, 2)],
    }
    path = folder / "e.yaml"
    path.write_text(yaml.safe_dump(content))
    spec = load(path)
    return FileCases("e.yaml", spec, build_spec(spec, "sm_90", COMPILE_CACHE), list(spec.content.claims))


def keys_of(files: FileCases, identity: dict = IDENTITY) -> dict[str, str]:
    return measurement_keys([files], identity)


def test_every_profiled_case_has_a_key_a_step_with_the_steps_before_it_and_a_program_case(tmp_path):
    keys = keys_of(project(tmp_path))
    assert sorted(keys) == ["e.yaml::one", "e.yaml::pair#1", "e.yaml::pair#2", "e.yaml::run"]
    assert keys == keys_of(project(tmp_path / "elsewhere")), "the same inputs in another folder"


def test_a_comment_that_moves_the_lines_changes_the_cubin_but_not_the_key(tmp_path):
    plain, commented = project(tmp_path / "a"), project(tmp_path / "b", COMMENTED)
    plain_cubin, commented_cubin = plain.builds["scale"].cubin, commented.builds["scale"].cubin
    assert plain_cubin != commented_cubin, "NVRTC's line table (-lineinfo) follows the lines"
    assert code_digest(plain_cubin, "scale") == code_digest(commented_cubin, "scale")
    assert keys_of(plain) == keys_of(commented)


def test_a_change_of_the_code_changes_that_kernel_s_cases_keys_alone(tmp_path):
    before, after = keys_of(project(tmp_path / "a")), keys_of(project(tmp_path / "b", CHANGED))
    assert [name for name in before if before[name] != after[name]] == ["e.yaml::one"]


def test_the_launch_and_the_metrics_asked_change_the_key(tmp_path):
    before = keys_of(project(tmp_path / "a"))
    regridded = keys_of(project(tmp_path / "b", grid=8))
    assert [name for name in before if before[name] != regridded[name]] == ["e.yaml::one"]
    other_metric = keys_of(project(tmp_path / "c", metric=SECTORS))
    assert [name for name in before if before[name] != other_metric[name]] == ["e.yaml::one"]


def test_a_program_s_file_changes_its_key(tmp_path):
    before = keys_of(project(tmp_path / "a"))
    edited = keys_of(project(tmp_path / "b", script="print('adding twice')\n"))
    assert [name for name in before if before[name] != edited[name]] == ["e.yaml::run"]


def test_a_step_s_key_follows_the_steps_before_it(tmp_path):
    files = project(tmp_path)
    before = keys_of(files)
    first = files.spec.content.cases["pair#1"]
    cases = {**files.spec.content.cases, "pair#1": first.model_copy(update={"grid": (2, 1, 1)})}
    spec = replace(files.spec, content=files.spec.content.model_copy(update={"cases": cases}))
    after = keys_of(replace(files, spec=spec))
    assert before["e.yaml::pair#1"] != after["e.yaml::pair#1"]
    assert before["e.yaml::pair#2"] != after["e.yaml::pair#2"], "its input came from the step before"
    assert before["e.yaml::one"] == after["e.yaml::one"]


def test_each_field_of_the_gpu_and_tools_changes_every_key(tmp_path):
    files = project(tmp_path)
    before = keys_of(files)
    for name in IDENTITY_FIELDS:
        after = keys_of(files, {**IDENTITY, name: "other"})
        assert all(before[case] != after[case] for case in before), name


def test_no_keys_where_ncu_s_version_is_unknown(tmp_path):
    identity = {**IDENTITY, "ncu_version": None}
    provenance = Provenance(recorded_at="now", nvrtc_version="13.0", ncu_command=[], **identity)  # type: ignore[arg-type]
    assert gpu_identity(provenance) is None
    assert measurement_keys([project(tmp_path)], gpu_identity(provenance)) == {}
    assert gpu_identity(replace(provenance, ncu_version="2025.3.1.0")) == IDENTITY


def test_a_cubin_that_is_no_elf_is_digested_whole():
    assert code_digest(b"not an elf", "scale") != code_digest(b"not an elf either", "scale")
    assert code_digest(b"not an elf", "scale").startswith("bytes:")


# The kernels of kernels/vector_add.cu: one NVRTC program, one cubin.
VECTOR_ADD = (ROOT / "kernels" / "vector_add.cu").read_text()
VECTOR_ADD_KERNELS = [
    "vecAddKernel",
    "vecAddKernelGridStride",
    "vecScaleKernel",
    "vecAddScaleKernel",
    "aiHalfKernel",
]
ADDED = "C[i] = A[i] + B[i];"  # vecAddKernel's, then vecAddKernelGridStride's
NEW_KERNEL = 'extern "C" __global__ void newKernel(float* x) { x[threadIdx.x] = 1.0f; }\n'
TWICE = """__noinline__ __device__ float twice(float x) { return x * 2.0f; }
extern "C" __global__ void one(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
extern "C" __global__ void two(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]) + 1.0f; }
extern "C" __global__ void three(float* x) { x[threadIdx.x] = 3.0f; }
"""
SHARED = """extern "C" __global__ void first(float* x) {
    __shared__ float a[32];
    a[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = a[31 - threadIdx.x];
}
extern "C" __global__ void second(float* x) {
    __shared__ float b[64];
    b[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = b[63 - threadIdx.x];
}
"""


def built(
    folder: Path, source: str, entries: list[str], options: dict | None = None, arch: str = "sm_90"
) -> dict:
    """The builds of the entries of one .cu file (each a kernel of the spec, named as its entry, with its
    options), for arch."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".ncuverify-root").write_text("")
    (folder / "k.cu").write_text(source)
    (folder / "run.py").write_text("")
    kernels = {entry: {"file": "k.cu", "entry": entry, **(options or {}).get(entry, {})} for entry in entries}
    content = {
        "arch": arch,
        "kernels": kernels,
        "cases": {"run": {"program": {"command": ["python3", "run.py"]}, "kernel": "k"}},
        "claims": [claim("run")],
    }
    (folder / "e.yaml").write_text(yaml.safe_dump(content))
    return build_spec(load(folder / "e.yaml"), arch, COMPILE_CACHE)


def digests(
    folder: Path, source: str, entries: list[str], options: dict | None = None, arch: str = "sm_90"
) -> dict[str, str]:
    builds = built(folder, source, entries, options, arch)
    return {name: code_digest(b.cubin, b.symbol) for name, b in builds.items()}


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(name for name in before if before[name] != after[name])


# sm_100 and later cubins carry a mercury copy of their code and tables (.nv.merc.*, .nv.capmerc.text.*)
@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_an_edit_of_one_kernel_changes_its_digest_alone(tmp_path, arch):
    before = digests(tmp_path / "a", VECTOR_ADD, VECTOR_ADD_KERNELS, arch=arch)
    assert len(set(before.values())) == len(VECTOR_ADD_KERNELS)
    assert not any(digest.startswith("bytes:") for digest in before.values())
    edited = VECTOR_ADD.replace(ADDED, ADDED.replace(";", " + 0.0f;"), 1)
    after = built(tmp_path / "b", edited, VECTOR_ADD_KERNELS, arch=arch)
    assert len({b.cubin for b in after.values()}) == 1, "one cubin of every kernel of the file"
    assert changed(before, {name: code_digest(b.cubin, b.symbol) for name, b in after.items()}) == [
        "vecAddKernel"
    ]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_a_comment_changes_no_kernel_s_digest(tmp_path, arch):
    before = digests(tmp_path / "a", VECTOR_ADD, VECTOR_ADD_KERNELS, arch=arch)
    commented = "// a comment that moves every line\n//\n" + VECTOR_ADD.replace(ADDED, ADDED + "  // summed")
    assert changed(before, digests(tmp_path / "b", commented, VECTOR_ADD_KERNELS, arch=arch)) == []


def test_a_new_kernel_beside_them_changes_no_kernel_s_digest(tmp_path):
    before = digests(tmp_path / "a", VECTOR_ADD, VECTOR_ADD_KERNELS)
    assert changed(before, digests(tmp_path / "after", VECTOR_ADD + NEW_KERNEL, VECTOR_ADD_KERNELS)) == []
    assert changed(before, digests(tmp_path / "before", NEW_KERNEL + VECTOR_ADD, VECTOR_ADD_KERNELS)) == []


def test_a_kernel_s_launch_bounds_and_registers_change_its_digest_alone(tmp_path):
    before = digests(tmp_path / "a", VECTOR_ADD, VECTOR_ADD_KERNELS)
    for kernel in ("vecAddKernel", "vecScaleKernel"):
        bounded = VECTOR_ADD.replace(f"void {kernel}(", f"void __launch_bounds__(64) {kernel}(")
        assert changed(before, digests(tmp_path / f"bounded_{kernel}", bounded, VECTOR_ADD_KERNELS)) == [
            kernel
        ]
        capped = digests(
            tmp_path / f"capped_{kernel}", VECTOR_ADD, VECTOR_ADD_KERNELS, {kernel: {"max_registers": 16}}
        )
        assert changed(before, capped) == [kernel], "-maxrregcount"


def test_a_bigger_shared_array_changes_its_kernel_s_digest_alone(tmp_path):
    before = digests(tmp_path / "a", SHARED, ["first", "second"])
    assert changed(
        before, digests(tmp_path / "b", SHARED.replace("b[64]", "b[128]"), ["first", "second"])
    ) == ["second"]
    assert changed(
        before, digests(tmp_path / "c", SHARED.replace("a[32]", "a[128]"), ["first", "second"])
    ) == ["first"]


def test_an_edit_of_a_device_function_changes_the_digest_of_every_kernel_that_calls_it(tmp_path):
    before = digests(tmp_path / "a", TWICE, ["one", "two", "three"])
    after = digests(tmp_path / "b", TWICE.replace("x * 2.0f", "x * 3.0f"), ["one", "two", "three"])
    assert {"one", "two"} <= set(changed(before, after))


def test_a_damaged_cubin_or_a_kernel_it_lacks_is_digested_whole(tmp_path):
    cubin = built(tmp_path, VECTOR_ADD, ["vecAddKernel"])["vecAddKernel"].cubin
    whole = code_digest(cubin, "vecAddKernel")
    assert not whole.startswith("bytes:")
    (table,) = struct.unpack_from("<Q", cubin, 40)
    past_the_end = bytearray(cubin)
    struct.pack_into("<Q", past_the_end, table + 64 + 24, len(cubin))  # section 1's offset
    for damaged in (cubin[: len(cubin) // 2], bytes(past_the_end)):
        assert code_digest(damaged, "vecAddKernel").startswith("bytes:")
    assert code_digest(cubin, "noSuchKernel").startswith("bytes:")


def symbol_indexes(cubin: bytes) -> dict[bytes, int]:
    every = sections(cubin)
    return {
        symbol_name(cubin, symbol) or b"": index
        for index, symbol in enumerate(symbols(cubin, every))
        if symbol.is_entry
    }


def section_named(cubin: bytes, name: bytes) -> Section:
    every = sections(cubin)
    (names_at,) = struct.unpack_from("<H", cubin, 62)
    return next(section for section in every if section_name(cubin, every[names_at], section) == name)


def test_a_kernel_whose_code_lies_in_another_kernel_s_section_is_digested_whole(tmp_path):
    """A crafted cubin cannot hide a kernel's code from its digest by naming its section after another."""
    cubin = built(tmp_path, VECTOR_ADD, ["vecAddKernel"])["vecAddKernel"].cubin
    table = section_named(cubin, b".symtab")
    base = table.offset + table.entry_size * symbol_indexes(cubin)[b"vecAddKernel"]
    every = sections(cubin)
    other_code = every.index(section_named(cubin, b".text.vecScaleKernel"))
    moved = bytearray(cubin)
    struct.pack_into("<H", moved, base + 6, other_code)  # its symbol's section
    assert code_digest(bytes(moved), "vecAddKernel").startswith("bytes:")


def test_a_section_of_the_whole_cubin_said_to_be_another_kernel_s_is_still_digested(tmp_path):
    """Only a relocation belongs to the kernel of the section it applies to: data of the whole cubin whose
    header points at another kernel's code stays in every kernel's digest."""
    cubin = built(tmp_path, VECTOR_ADD, ["vecAddKernel"])["vecAddKernel"].cubin
    every = sections(cubin)
    compat = section_named(cubin, b".nv.compat")
    header = struct.unpack_from("<Q", cubin, 40)[0] + 64 * every.index(compat)
    pointed = bytearray(cubin)
    struct.pack_into("<Q", pointed, header + 8, compat.flags | 0x40)  # SHF_INFO_LINK
    struct.pack_into("<I", pointed, header + 44, every.index(section_named(cubin, b".text.vecScaleKernel")))
    changed_data = bytearray(pointed)
    changed_data[compat.offset] ^= 0xFF
    assert code_digest(bytes(pointed), "vecAddKernel") != code_digest(bytes(changed_data), "vecAddKernel")


def test_a_kernel_that_calls_another_kernel_is_digested_whole(tmp_path):
    """Its call graph naming another kernel (dynamic parallelism): that kernel's code runs too."""
    cubin = built(tmp_path, VECTOR_ADD, ["vecAddKernel"])["vecAddKernel"].cubin
    kernels = symbol_indexes(cubin)
    calls = bytearray(cubin)
    graph = section_named(cubin, b".nv.callgraph")
    struct.pack_into("<II", calls, graph.offset, kernels[b"vecAddKernel"], kernels[b"vecScaleKernel"])
    assert code_digest(bytes(calls), "vecAddKernel").startswith("bytes:")
    assert code_digest(bytes(calls), "vecScaleKernel").startswith("bytes:")
    assert not code_digest(bytes(calls), "aiHalfKernel").startswith("bytes:"), "a call of no concern to it"
