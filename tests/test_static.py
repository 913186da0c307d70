"""Static facts: ptxas report, cubin resource table, SASS. Needs NVRTC, nvdisasm and cuobjdump (wheels), no GPU."""

import pytest
from conftest import DATA, ended
from typer.testing import CliRunner

from ncuverify.build import build_spec
from ncuverify.cli import app
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode
from ncuverify.expression import MetricRef
from ncuverify.spec import load
from ncuverify.static import (
    ResourceUsage,
    StaticFacts,
    is_static,
    parse_disassembly,
    parse_ptxas_report,
    parse_resource_usage,
    sass_matches,
)

NO_GPU = Environment(gpu=None, ncu=None, problem="no NVIDIA GPU: test")


@pytest.fixture(scope="module")
def builds():
    return build_spec(load(DATA / "static.yaml"), "sm_90")


@pytest.mark.parametrize(
    ("pattern", "mnemonic", "matches"),
    [
        ("LDG", "LDG.E", True),
        ("LDG", "LDG.E.128.CONSTANT", True),
        ("LDG", "LDGSTS.E", False),
        (r"LDG\.E\.128", "LDG.E.128.CONSTANT", True),
        (r"LDG\.E\.128", "LDG.E.64", False),
        (r"LDG\.E(\.\w+)*\.128", "LDG.E.EL.128", True),
        ("(LDL|STL)", "STL.128", True),
        ("(LDL|STL)", "LDS", False),
        ("BRA", "BRX", False),
        (r".*\.SYS", "LDG.E.128.CONSTANT", False),
        (r".*\.SYS", "LDG.E.SYS", True),
        ("LDG$", "LDG.E", False),  # $ is the mnemonic's end, not a boundary's
        ("LDG$", "LDG", True),
        (r"LDG\b", "LDG.E", True),
        (r"LDG\b", "LDGSTS", False),
        ("LDG|STG", "STG.E", True),  # an alternation is one pattern, not spliced into a larger one
        ("(?i)ldg", "LDG.E", True),
        (r"\QLDG.E\E", "LDG.E.128", True),
        (r"\QLDG.E\E", "LDGXE", False),
    ],
)
def test_sass_patterns_match_up_to_a_modifier_boundary(pattern, mnemonic, matches):
    assert sass_matches(pattern, mnemonic) is matches


@pytest.mark.parametrize(
    ("pattern", "mnemonic"),
    [
        ("(A*)*B", "A" * 4000),
        ("(.*)*Q", "LDG.E.128.CONSTANT.EL.LTC128B.ZFILL.STRONG.GPU"),
        (r"(\w|\w)*\.X", "LDGSTS" * 500),
    ],
)
def test_patterns_that_backtrack_exponentially_match_in_linear_time(pattern, mnemonic):
    """Python's re takes 2**len steps on these: were the engine a backtracking one, this would not end."""
    assert sass_matches(pattern, mnemonic) is False


def test_float4_copy_has_128_bit_loads_and_stores(builds):
    vector, scalar = builds["vector_copy"].facts, builds["scalar_copy"].facts
    assert vector.count(r"LDG\.E\.128") == 1 and vector.count(r"STG\.E\.128") == 1
    assert scalar.count(r"LDG\.E\.128") == 0 and scalar.count("LDG") == 1
    assert scalar.count(r".*\.SYS") == 0


def test_disassembly_is_per_function_without_end_padding(builds):
    sass = builds["scalar_copy"].facts.sass
    assert sass is not None and sass[0].offset == 0
    assert sass[-1].mnemonic != "NOP"
    assert sass[-1].mnemonic == "BRA"  # every kernel ends in a branch to itself after its EXIT
    assert any(i.mnemonic == "EXIT" for i in sass)
    assert builds["scalar_copy"].facts.mix()["LDG"] == 1


def test_dynamically_indexed_array_gets_a_stack_and_local_traffic(builds):
    facts = builds["dynamic_index"].facts
    metrics = facts.metrics()
    assert metrics["static__stack_frame_bytes"] == 128
    assert metrics["static__spill_store_bytes"] == 0
    assert facts.count("STL") > 0 and facts.count("LDL") > 0
    assert builds["scalar_copy"].facts.count("(LDL|STL)") == 0


def test_ptxas_and_the_cubin_agree(builds):
    for build in builds.values():
        assert build.facts.discrepancies() == []
        assert build.facts.cubin_resources["REG"] == build.facts.ptxas.registers


def test_a_disagreement_is_reported():
    facts = StaticFacts(ResourceUsage(32, 0, 0, 0, 0, 0), {"REG": 40, "STACK": 0}, ())
    assert facts.discrepancies() == ["ptxas says 32 for REG, the cubin says 40"]


PTXAS_LOG = """ptxas info    : 3433 bytes gmem
ptxas info    : Compiling entry function '_Z11copy_strideILi32EEvPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z11copy_strideILi32EEvPKfPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compiling entry function 'sp' for 'sm_90'
ptxas info    : Function properties for sp
ptxas         .     1008 bytes stack frame, 888 bytes spill stores, 1044 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 4224 bytes smem, 1008 bytes cumulative stack size
"""


def test_ptxas_report_is_parsed_per_function():
    report = parse_ptxas_report(PTXAS_LOG)
    assert report["_Z11copy_strideILi32EEvPKfPf"] == ResourceUsage(10, 0, 0, 0, 0, 0)
    assert report["sp"] == ResourceUsage(32, 1008, 888, 1044, 4224, 1)


RESOURCE_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function _Z11read_strideILi32EEvPKfPf:
  REG:10 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:544 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function sp:
  REG:32 STACK:1008 SHARED:4224 LOCAL:0 CONSTANT[0]:360 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def test_resource_usage_is_parsed_per_function():
    usage = parse_resource_usage(RESOURCE_USAGE)
    assert usage["sp"]["STACK"] == 1008 and usage["sp"]["CONSTANT[0]"] == 360
    assert usage["_Z11read_strideILi32EEvPKfPf"]["REG"] == 10
    assert "Common" not in usage


DISASSEMBLY = """
//--------------------- .text.scale               --------------------------
	.section	.text.scale,"ax",@progbits
scale:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0070*/               @P0 EXIT ;
        /*00d0*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*00e0*/              @!P1 STG.E desc[UR4][R4.64], R7 ;
        /*0120*/                   BRA `(.L_x_0);
        /*0130*/                   NOP;
//--------------------- .text.other               --------------------------
	.section	.text.other,"ax",@progbits
        /*0000*/                   EXIT ;
"""


def test_disassembly_text_is_parsed():
    functions = parse_disassembly(DISASSEMBLY)
    assert [i.mnemonic for i in functions["scale"]] == ["LDC", "EXIT", "LDG.E.128.CONSTANT", "STG.E", "BRA"]
    assert functions["scale"][2].offset == 0xD0
    assert [i.mnemonic for i in functions["other"]] == ["EXIT"]


def test_static_names():
    assert is_static(MetricRef("static__registers_per_thread"))
    assert is_static(MetricRef("sass:LDG"))
    assert not is_static(MetricRef("launch__registers_per_thread"))


def test_unknown_static_name_is_an_input_error(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text(
        (DATA / "static.yaml")
        .read_text()
        .replace("metric: static__stack_frame_bytes", "metric: static__stack_bytes")
    )
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "no static fact static__stack_bytes (did you mean 'static__stack_frame_bytes'?)" in result.stdout


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(Environment, "probe", classmethod(lambda cls, ncu: NO_GPU))


def test_static_only_checks_static_claims_without_a_gpu(no_gpu):
    result = CliRunner().invoke(app, ["check", "--static-only", str(DATA / "static.yaml")])
    assert result.exit_code == ExitCode.OK, result.stdout
    assert "6 passed, 0 failed, 0 errors, 0 skipped" in result.stdout
    assert "vector_sectors_per_request" not in result.stdout


def test_without_a_gpu_static_claims_are_checked_and_the_rest_skipped(no_gpu):
    result = CliRunner().invoke(app, ["check", str(DATA / "static.yaml")])
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert "6 passed, 0 failed, 0 errors, 1 skipped" in result.stdout
    assert "skipped vector_sectors_per_request: no NVIDIA GPU: test" in result.stdout


def test_a_wrong_static_claim_fails_without_a_gpu(no_gpu, tmp_path):
    path = tmp_path / "wrong.yaml"
    path.write_text(
        (DATA / "static.yaml").read_text().replace("expect: {equals: 128}", "expect: {equals: 64}")
    )
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == ExitCode.CLAIM_FAILED
    assert "failed local_array_has_a_stack: measured 128, expected == 64" in result.stdout


def test_build_command_shows_the_facts(no_gpu):
    result = CliRunner().invoke(app, ["build", str(DATA / "static.yaml")])
    assert result.exit_code == ExitCode.OK
    row = next(line for line in result.stdout.splitlines() if "dynamic_index" in line)
    assert "128" in row and "STL×" in row


def test_build_command_without_a_target(no_gpu, tmp_path):
    path = tmp_path / "unpinned.yaml"
    path.write_text((DATA / "static.yaml").read_text().replace("arch: sm_90\n", ""))
    result = CliRunner().invoke(app, ["build", str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "no architecture to build for" in result.stdout


def test_a_pattern_that_would_hang_a_backtracking_engine_is_counted(no_gpu, tmp_path):
    """Python's re takes minutes over LDG.E.128.CONSTANT, a mnemonic of the vector kernel, for this pattern."""
    path = tmp_path / "backtracking.yaml"
    path.write_text(
        (DATA / "static.yaml")
        .read_text()
        .replace(r"metric: sass('.*\.SYS')", r"metric: sass('((\w|\w)*\.?)*Q')")
    )
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == ExitCode.OK, result.stdout
    assert "6 passed, 0 failed, 0 errors, 0 skipped" in result.stdout


def test_a_pattern_with_a_backreference_is_refused_before_anything_builds(no_gpu, tmp_path):
    path = tmp_path / "backreference.yaml"
    text = (DATA / "static.yaml").read_text().replace(r"metric: sass('.*\.SYS')", r"metric: sass('(LDG)\1')")
    path.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if r"(LDG)\1" in row)
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert (
        f"{path.name}:{line}: claims[2].metric: sass pattern '(LDG)\\1' is not supported: ncuverify matches "
        "SASS with a linear-time engine (RE2), which has no backreferences or lookaround"
    ) in " ".join(result.stdout.split())


# --- the tools' runs -------------------------------------------------------------------------------------------


@pytest.fixture
def tool(tmp_path, monkeypatch):
    """A stand-in for cuobjdump or nvdisasm, written per test, and an empty temporary folder to watch."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def write(script: str):
        path = tmp_path / "fake-tool"
        path.write_text(f"#!/bin/sh\n{script}\n")
        path.chmod(0o755)
        return str(path), scratch

    return write


def test_a_tool_that_does_not_end_is_stopped(tool, tmp_path):
    from ncuverify.processes import TimedOut
    from ncuverify.static import _run_on_cubin

    # The tool leaves a child behind that would outlive it.
    path, scratch = tool(f"sleep 300 & echo $! > {tmp_path}/child\nsleep 300")
    with pytest.raises(TimedOut, match=r"fake-tool did not finish within 0\.5 s; stopped"):
        _run_on_cubin(path, ["-c"], b"\x7fELF", timeout_s=0.5)
    assert ended(int((tmp_path / "child").read_text()))
    assert list(scratch.iterdir()) == []


def test_a_tool_that_fails_says_why(tool):
    from ncuverify.static import _run_on_cubin

    path, scratch = tool("echo 'fake-tool: not a cubin' >&2; exit 1")
    with pytest.raises(RuntimeError, match="fake-tool failed: fake-tool: not a cubin"):
        _run_on_cubin(path, [], b"junk")
    assert list(scratch.iterdir()) == []


def test_both_tools_run_within_the_limit(tool, monkeypatch):
    from ncuverify import static
    from ncuverify.processes import TimedOut

    path, scratch = tool("sleep 300")
    monkeypatch.setattr(static, "find_tool", lambda name: path)
    with pytest.raises(TimedOut):
        static.tool_outputs(b"\x7fELF", timeout_s=0.5)
    assert list(scratch.iterdir()) == []


def test_a_tool_past_its_limit_is_an_input_error_of_the_build(monkeypatch):
    from ncuverify import build
    from ncuverify.errors import InputError
    from ncuverify.processes import TimedOut

    def hung(cubin, timeout_s):
        raise TimedOut(["/opt/cuda/bin/nvdisasm", "-c"], timeout_s)

    monkeypatch.setattr(build, "tool_outputs", hung)
    with pytest.raises(InputError) as error:
        build_spec(load(DATA / "static.yaml"), "sm_90")
    assert str(error.value) == (
        f"{DATA / 'static.yaml'}: static.yaml:inline: cannot read the static facts of the build: nvdisasm did not "
        "finish within 120 s; stopped"
    )
