"""Static facts: ptxas report, cubin resource table, SASS. Needs NVRTC, nvdisasm and cuobjdump (wheels), no GPU."""

import pytest
import yaml
from conftest import COMPILE_CACHE, DATA, NO_GPU, disassemblies
from typer.testing import CliRunner

from ncuverify.build import BuildLimits, build_spec
from ncuverify.build.reports import ResourceUsage
from ncuverify.build.static import StaticFacts, sass_matches
from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.spec import load


@pytest.fixture(scope="module")
def builds():
    return build_spec(load(DATA / "static.yaml"), "sm_90", COMPILE_CACHE, BuildLimits(sass=True))


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


def test_static_only_checks_static_claims_without_a_gpu(no_gpu):
    result = CliRunner().invoke(app, ["check", "--static-only", str(DATA / "static.yaml")])
    assert result.exit_code == ExitCode.OK, result.stdout
    assert "6 passed, 0 failed, 0 errors, 0 skipped" in result.stdout
    assert "vector_sectors_per_request" not in result.stdout


def test_without_a_gpu_static_claims_are_checked_and_the_rest_skipped(no_gpu):
    result = CliRunner().invoke(app, ["check", str(DATA / "static.yaml")])
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert "6 passed, 0 failed, 0 errors, 1 skipped" in result.stdout
    assert f"skipped vector_sectors_per_request: {NO_GPU.problem}" in result.stdout


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


def test_a_file_is_disassembled_only_where_a_claim_or_a_tolerance_reads_sass(no_gpu, tmp_path, monkeypatch):
    monkeypatch.setenv("NCUVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    seen = disassemblies(monkeypatch)
    result = CliRunner().invoke(app, ["check", "--static-only", str(DATA / "static.yaml")])
    assert result.exit_code == ExitCode.OK and "6 passed" in result.stdout, result.stdout
    assert seen, "its claims count SASS instructions"
    content = yaml.safe_load((DATA / "static.yaml").read_text())
    content["claims"] = [claim for claim in content["claims"] if "sass" not in claim["metric"]]
    path = tmp_path / "no_sass.yaml"
    path.write_text(yaml.safe_dump(content))
    seen.clear()
    monkeypatch.setenv("NCUVERIFY_CACHE_DIR", str(tmp_path / "cache-without"))  # which holds no SASS
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == ExitCode.OK and "2 passed" in result.stdout, result.stdout
    assert seen == []
    path.write_text(yaml.safe_dump({**content, "regressions": {"static__sass_instructions": {"abs": 0}}}))
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == ExitCode.OK and seen, "a baseline compares the count"
