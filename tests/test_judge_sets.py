"""Claims over kernels judged kernel by kernel, and shown for hundreds of kernels: the terminal at 80
columns, JSON (read back as merge reads it), JUnit and Markdown. The kernels are made up here: what is
tested is the judging, not the build."""

import json
from dataclasses import replace
from pathlib import Path

import yaml
from rich.console import Console

from ncuverify import export, report
from ncuverify.build import StaticFacts
from ncuverify.build.built import BuiltKernel
from ncuverify.build.reports import ResourceUsage
from ncuverify.judge.kernel_sets import labels, of_set_case, set_case, set_measurements
from ncuverify.judge.over_kernels import judge_again, judge_over_kernels
from ncuverify.results import FileResult, KernelVerdict, Verdict
from ncuverify.spec import load

CITE = {"document": "d", "section": "1", "figure": "f"}


def built(n: int, registers: int, name: str = "axpy_gemm") -> BuiltKernel:
    usage = ResourceUsage(registers, 0, 0, 0, 0, 0)
    return BuiltKernel(
        f"_Z{len(name)}{name}ILi{n}EEvPf", f"void {name}<{n}>(float*)", "sm_90", StaticFacts(usage, {}, None)
    )


def spec_of(tmp_path: Path, allow=(), **claim):
    content = {
        "kernels": {"gemms": {"file": "ops.cu", "match": "_gemm"}},
        "claims": [
            {
                "id": "regs",
                "kernels": "gemms",
                "metric": "static__registers_per_thread",
                "expect": {"at_most": 128},
                "cite": CITE,
                **claim,
            }
        ],
        "allow": list(allow),
    }
    (tmp_path / "ops.cu").write_text("")
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(content))
    return load(tmp_path / "k.yaml")


def judged(tmp_path, kernels, allow=(), **claim):
    spec = spec_of(tmp_path, allow, **claim)
    by_key = {"gemms": labels(kernels)}
    measured = set_measurements(by_key, [])
    result = judge_over_kernels(spec.content.claims[0], by_key["gemms"], measured, spec.content.allow)
    return FileResult(spec.path, [result], measurements=measured, spec=spec)


def many(failing=(7, 150, 299)):
    return [built(n, 168 if n in failing else 64) for n in range(300)]


def test_a_set_case_names_its_key_and_kernel():
    assert set_case("gemms", "axpy_gemm<64>") == "gemms[axpy_gemm<64>]"
    assert of_set_case("gemms[axpy_gemm<64>]") == ("gemms", "axpy_gemm<64>")
    assert of_set_case("stride32") is None


def test_overloads_of_one_name_are_told_apart_by_signature():
    a = BuiltKernel("_Z1fPf", "void f(float*)", "sm_90", built(1, 1).facts)
    b = BuiltKernel("_Z1fPi", "void f(int*)", "sm_90", built(1, 1).facts)
    assert list(labels([a, b, built(3, 1)])) == ["void f(float*)", "void f(int*)", "axpy_gemm<3>"]


def test_every_kernel_is_judged_and_the_failing_ones_named_with_their_values(tmp_path):
    result = judged(tmp_path, many()).claims[0]
    assert result.verdict is Verdict.FAILED
    assert len(result.kernels) == 300
    failed = [o.kernel for o in result.kernels if o.verdict is KernelVerdict.FAILED]
    assert failed == ["axpy_gemm<7>", "axpy_gemm<150>", "axpy_gemm<299>"]  # in the set's order
    assert result.reason == (
        "fails for 3 of 300 kernels, expected <= 128: static__registers_per_thread = 168 for axpy_gemm<7>;"
        " static__registers_per_thread = 168 for axpy_gemm<150>; static__registers_per_thread = 168 for axpy_gemm<299>"
    )


def test_a_set_that_holds_passes(tmp_path):
    result = judged(tmp_path, many(failing=())).claims[0]
    assert result.verdict is Verdict.PASSED and result.count(KernelVerdict.PASSED) == 300


def test_match_narrows_the_set(tmp_path):
    result = judged(tmp_path, many(), match="<(7|8)>").claims[0]
    assert [o.kernel for o in result.kernels] == ["axpy_gemm<7>", "axpy_gemm<8>"]
    nothing = judged(tmp_path, many(), match="^nothing$").claims[0]
    assert nothing.verdict is Verdict.ERROR
    assert nothing.reason == "match '^nothing$' selects none of the 300 kernels of gemms"


def test_allowed_kernels_do_not_fail_the_claim_and_carry_their_reason(tmp_path):
    allow = [
        {"kernel": "axpy_gemm< 7 >", "reason": "spacing aside"},
        {"match": "<(150|299)>$|ILi(150|299)E", "claim": "regs", "reason": "tuned for occupancy 1"},
    ]
    result = judged(tmp_path, many(), allow).claims[0]
    assert result.verdict is Verdict.PASSED
    allowed = {
        o.kernel: (o.reason, o.allowed_by) for o in result.kernels if o.verdict is KernelVerdict.ALLOWED
    }
    assert allowed == {
        "axpy_gemm<7>": ("spacing aside", 0),
        "axpy_gemm<150>": ("tuned for occupancy 1", 1),
        "axpy_gemm<299>": ("tuned for occupancy 1", 1),
    }


def test_an_entry_for_another_claim_or_metric_does_not_allow(tmp_path):
    allow = [{"kernel": "axpy_gemm<7>", "metric": "static__stack_frame_bytes", "reason": "r"}]
    result = judged(tmp_path, many(failing=(7,)), allow).claims[0]
    assert result.verdict is Verdict.FAILED


def test_the_terminal_shows_one_line_per_claim_and_at_most_20_kernels_at_80_columns(tmp_path):
    result = judged(tmp_path, many(failing=range(0, 300, 10)))
    console = Console(record=True, width=80)
    report.print_file(console, result, verbose=False)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines() if " " in line.strip())
    assert f"{result.path}: 0 passed, 1 failed" in " ".join(line.strip() for line in text.splitlines())
    assert "30 of 300 fail" in text
    assert "failed regs: fails for 30 of 300 kernels, expected <= 128" in text
    shown = [
        line for line in text.splitlines() if line.startswith("    static__registers_per_thread = 168 for")
    ]
    assert len(shown) == 20
    assert "    and 10 more" in text
    assert "axpy_gemm<1>" not in text  # kernels that hold are counted, not listed


def test_json_carries_every_kernel_and_reads_back(tmp_path):
    result = judged(tmp_path, many(), [{"kernel": "axpy_gemm<7>", "reason": "known"}])
    document = json.loads(export.to_json([result]))
    record = document["files"][0]["claims"][0]
    assert (record["kernels"], record["match"]) == ("gemms", None)
    assert len(record["per_kernel"]) == 300
    by_kernel = {k["kernel"]: k for k in record["per_kernel"]}
    assert by_kernel["axpy_gemm<150>"] == {
        "kernel": "axpy_gemm<150>",
        "value": 168.0,
        "verdict": "failed",
        "reason": None,
    }
    assert (
        by_kernel["axpy_gemm<7>"]["verdict"] == "allowed" and by_kernel["axpy_gemm<7>"]["reason"] == "known"
    )
    assert by_kernel["axpy_gemm<1>"] == {
        "kernel": "axpy_gemm<1>",
        "value": 64.0,
        "verdict": "passed",
        "reason": None,
    }
    back = export.from_json(export.to_json([result]))[0].claims[0]
    assert back.claim.kernels == "gemms" and back.verdict is Verdict.FAILED
    assert [(o.kernel, o.value, o.verdict) for o in back.kernels] == [
        (o.kernel, o.value, o.verdict) for o in result.claims[0].kernels
    ]


def test_json_of_a_claim_on_a_case_has_no_set_keys(tmp_path):
    from ncuverify.export import claim_record
    from ncuverify.results import ClaimResult
    from ncuverify.spec import Claim

    claim = Claim.model_validate(
        {"id": "x", "case": "c", "metric": "m.sum", "expect": {"equals": 1}, "cite": CITE}
    )
    assert not {"kernels", "match", "per_kernel"} & set(claim_record(ClaimResult(claim, Verdict.PASSED, 1.0)))


def test_junit_and_markdown_name_each_failing_kernel(tmp_path):
    result = judged(tmp_path, many(failing=range(0, 300, 10)))
    junit = export.to_junit([result])
    markdown = export.to_markdown([result])
    for n in range(0, 300, 10):
        assert f"static__registers_per_thread = 168 for axpy_gemm&lt;{n}&gt;" in junit
        assert f"- static\\_\\_registers\\_per\\_thread = 168 for axpy\\_gemm&lt;{n}&gt;\n" in markdown
    assert "fails for 30 of 300 kernels" in markdown


def test_judged_again_from_the_values_gives_what_judging_the_kernels_gave(tmp_path):
    allow = [{"kernel": "axpy_gemm<150>", "claim": "regs", "reason": "unrolled on purpose"}]
    first = judged(tmp_path, many(failing=(150,)), allow)
    (result,) = first.claims
    claim, measured = result.claim, first.measurements
    assert judge_again(claim, result.kernels, measured) == result  # the allowed kernel stays allowed
    # A kernel stored as passing whose figure fails: judged again, it fails, value and all.
    rows = tuple(
        (case, kernel, metric, 200.0 if case == "gemms[axpy_gemm<8>]" else value, unit)
        for case, kernel, metric, value, unit in measured.rows
    )
    again = judge_again(claim, result.kernels, replace(measured, rows=rows))
    assert again.verdict is Verdict.FAILED
    assert again.reason == (
        "fails for 1 of 300 kernels (1 allowed), expected <= 128: static__registers_per_thread = 200 for axpy_gemm<8>"
    )
    assert [o.kernel for o in again.kernels if o.verdict is KernelVerdict.FAILED] == ["axpy_gemm<8>"]
    # No kernel at all is no pass.
    assert judge_again(claim, (), measured).verdict is Verdict.ERROR
