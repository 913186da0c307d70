"""What a run profiles: the cases each file's claims read, under qualified names."""

import json
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA
from pydantic import TypeAdapter
from sweep_files import claim, loaded
from test_spec_sequences import TWO_STEPS

from ncuverify.build import BuildLimits, KernelBuild, build_spec
from ncuverify.build.static import StaticFacts
from ncuverify.profile.plan import FileCases, case_metrics, plan_cases, planned_arguments
from ncuverify.runner.plan import PlannedBuffer, PlannedScalar, PlannedStruct, PlannedUse, argument_from_json
from ncuverify.spec import load
from ncuverify.spec.arguments import Argument, struct_layout
from ncuverify.stages.prepare import needs_sass


def test_each_case_needs_the_metrics_of_its_claims_and_a_control_those_of_its_claim():
    spec = load(DATA / "sample.yaml")
    needs = case_metrics(spec, spec.content.claims)
    assert list(needs) == ["stride1", "stride32", "scale_2d", "misaligned"]  # file order
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    # misaligned is only a control (of stride32_global_ld_sectors_measure, a named measure) besides its own claim.
    assert sectors in needs["misaligned"] and sectors in needs["stride32"]
    assert "gpu__time_duration.sum" in needs["stride32"] and "gpu__time_duration.sum" in needs["stride1"]
    assert not any(name.startswith("static__") for metrics in needs.values() for name in metrics)


def test_a_claimed_step_is_planned_after_the_steps_before_it_as_one_profiled_case(tmp_path):
    third = """      - kernel: copy
        grid: 1
        block: 32
        args: [{use: total}, {buffer: float32, count: 1}, {int32: 1}]
"""
    spec = loaded(tmp_path, TWO_STEPS + third, claim("c", "reduce#2", "dram__bytes_read.sum"))
    build = KernelBuild("copy", "copy", "copy", "sm_90", b"\x7fELF", StaticFacts(None, {}, None), "", "")
    planned, wanted = plan_cases([FileCases("f", spec, {"copy": build}, spec.content.claims)], tmp_path)
    # reduce#1 has no claim, but reduce#2 reads what it wrote; reduce#3 comes after: not run
    assert list(planned) == ["f::reduce#1", "f::reduce#2"]
    assert {c.sequence for c in planned.values()} == {"f::reduce"}
    [profiled] = wanted
    assert profiled.steps == ("f::reduce#1", "f::reduce#2") and profiled.launches == 2
    assert profiled.metrics == {"dram__bytes_read.sum"} and profiled.pinned


TIMED_AND_PLAIN = """kernels:
  timed:
    source: &kernels |
      extern "C" __global__ void timed(long long* cycles, float* out) {
          long long start = clock64();
          out[threadIdx.x] = out[threadIdx.x] * 2.0f + 1.0f;
          cycles[threadIdx.x] = clock64() - start;
      }
      extern "C" __global__ void plain(float* out) { out[threadIdx.x] = 2.0f * threadIdx.x; }
    entry: timed
  plain: {source: *kernels, entry: plain}
cases:
  timed:
    kernel: timed
    grid: 1
    block: 32
    args: [{buffer: int64, count: 32, name: cycles}, {buffer: float32, count: 32}]
  plain:
    kernel: plain
    grid: 1
    block: 32
    args: [{buffer: float32, count: 32, name: out}]
  plain_unread:
    kernel: plain
    grid: 1
    block: 32
    args: [{buffer: float32, count: 32}]
claims:
"""


@pytest.mark.slow
def test_only_a_case_that_reads_back_what_a_clock_reading_kernel_wrote_is_pinned(tmp_path):
    claims = "".join(
        claim(f"c_{name}", name, f"buffer__{buffer}.max", "    why: w\n")
        for name, buffer in (("timed", "cycles"), ("plain", "out"))
    ) + claim("c_unread", "plain_unread", "dram__bytes_read.sum")
    path = tmp_path / "timed.yaml"
    path.write_text(TIMED_AND_PLAIN + claims.replace("    cite: {document: d, section: s, figure: f}\n", ""))
    spec = load(path)
    builds = build_spec(spec, "sm_90", COMPILE_CACHE, BuildLimits(sass=True))
    assert builds["timed"].facts.reads_clock is True and builds["plain"].facts.reads_clock is False
    _, wanted = plan_cases([FileCases("f", spec, builds, spec.content.claims)], tmp_path)
    pinned = {case.name: case.pinned for case in wanted}
    # plain's buffer holds the same values after any replay pass: ncu restores memory before each
    assert pinned == {"f::timed": True, "f::plain": False, "f::plain_unread": False}


def test_a_case_that_reads_back_is_disassembled_only_where_it_is_profiled(tmp_path):
    path = tmp_path / "timed.yaml"
    path.write_text(TIMED_AND_PLAIN + claim("c", "plain_unread", "dram__bytes_read.sum"))
    spec = load(path)
    assert needs_sass(spec, profiling=True) and not needs_sass(spec, profiling=False)


REPEATED = """  both:
    kernel: copy
    grid: 4
    block: 256
    repeat: 5
    args: [{buffer: float32, count: 1024}, {buffer: float32, count: 1024}, {int32: 1024}]
  time_only:
    kernel: copy
    grid: 4
    block: 256
    repeat: 3
    args: [{buffer: float32, count: 1024}, {buffer: float32, count: 1024}, {int32: 1024}]
"""


def test_a_repeated_case_repeats_for_its_time_alone_and_launches_once_for_its_counters(tmp_path):
    claims = claim("a", "both", "gpu__time_duration.sum") + claim("b", "both", "dram__bytes_read.sum")
    spec = loaded(tmp_path, REPEATED, claims + claim("c", "time_only", "gpu__time_duration.sum"))
    build = KernelBuild("copy", "copy", "copy", "sm_90", b"\x7fELF", StaticFacts(None, {}, None), "", "")
    planned, wanted = plan_cases([FileCases("f", spec, {"copy": build}, spec.content.claims)], tmp_path)
    assert {name: case.repeat for name, case in planned.items()} == {
        "f::both": 1,
        "f::both (repeats)": 5,
        "f::time_only": 3,  # nothing but its time: its launches stay together
    }
    profiled = {case.name: (case.launches, set(case.metrics)) for case in wanted}
    assert profiled == {
        "f::both": (1, {"dram__bytes_read.sum"}),
        "f::both (repeats)": (5, {"gpu__time_duration.sum"}),
        "f::time_only": (3, {"gpu__time_duration.sum"}),
    }
    assert planned["f::both (repeats)"].args == planned["f::both"].args


def test_each_argument_is_planned_with_the_model_s_defaults_and_survives_the_plan_s_json():
    written = [
        {"buffer": "float32", "count": 8},
        {"buffer": "float16", "count": 3, "fill": "constant", "value": 2.5, "offset": 2, "name": "out"},
        {"buffer": "int32", "count": 4, "fill": "random", "seed": 9, "name": "hidden", "passed": False},
        {"use": "partial"},
        {"bfloat16": 1.5},
        {"struct": [{"int8": -1}, {"pointer": "hidden"}], "align": 16},
    ]
    args = [TypeAdapter(Argument).validate_python(arg) for arg in written]
    planned = planned_arguments(args, Path())
    assert planned[:5] == [
        PlannedBuffer("float32", 8, "zeros", None, 0, 0, None, True),
        PlannedBuffer("float16", 3, "constant", 2.5, 0, 2, "out", True),
        PlannedBuffer("int32", 4, "random", None, 9, 0, "hidden", False),
        PlannedUse("partial", True),
        PlannedScalar("bfloat16", 1.5),
    ]
    assert planned[5] == PlannedStruct(struct_layout(args[5]))
    assert planned[5].layout.size == 16 and planned[5].layout.offsets == (0, 8)
    assert [argument_from_json(json.loads(json.dumps(arg.to_json())), "arg") for arg in planned] == planned
