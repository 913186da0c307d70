"""Explaining a launch from the H200 capture and from synthetic pages: the rules of its topic, the lines
with the most excess."""

import json
import math

import pytest
from explain_pages import CAPTURE, LINE_90, SYNTHETIC_DETAILS, SYNTHETIC_SOURCE

from ncuverify import explain as ex
from ncuverify.errors import InputError


@pytest.fixture(scope="module")
def details() -> str:
    return (CAPTURE / "explain.details.csv").read_text()


@pytest.fixture(scope="module")
def source() -> str:
    return (CAPTURE / "explain.source.csv").read_text()


@pytest.fixture(scope="module")
def shared0(details: str, source: str) -> ex.Explanation:
    return ex.explain(details, source, launch=0, topic="shared")


# --- the H200 capture -------------------------------------------------------------------------------


def test_shared_explanation_of_the_conflicting_transpose_names_both_rules_with_text(shared0):
    assert shared0.kernel == "transpose_conflict"
    assert shared0.topic == "shared"
    assert [rule.rule for rule in shared0.rules] == ["SharedMemoryConflicts", "UncoalescedSharedAccess"]
    conflicts, uncoalesced = shared0.rules
    assert conflicts.section == "MemoryWorkloadAnalysis_Tables"
    assert conflicts.severity == "OPT"
    assert conflicts.speedup_pct == pytest.approx(96.91)
    assert "32.4 - way bank conflict" in conflicts.text
    assert "Source Counters" in conflicts.text
    assert uncoalesced.speedup_pct == pytest.approx(93.06)
    assert "65011712 excessive wavefronts" in uncoalesced.text
    assert "CUDA Best Practices Guide (https://docs.nvidia.com/" in uncoalesced.text
    assert all("@section:" not in rule.text and "@url:" not in rule.text for rule in shared0.rules)
    assert all("  " not in rule.text for rule in shared0.rules)  # ncu's double spaces collapsed


def test_shared_explanation_puts_the_transposed_read_of_the_tile_first(shared0):
    first = shared0.lines[0]
    assert first.file == "/work/main/kernels/transpose.cu"
    assert (first.line, first.text) == (90, LINE_90)
    assert first.excess == 65_011_712
    assert first.total == 67_108_864
    assert first.share == 1.0
    # Line 79 writes the tile conflict-free: it has wavefronts but no excess, so it is not listed.
    assert [line.line for line in shared0.lines] == [90]


def test_each_launch_is_explained_from_its_own_rows(details, source):
    speedups = [ex.explain(details, source, n, "shared").rules[1].speedup_pct for n in range(3)]
    assert speedups == pytest.approx([93.06, 93.23, 93.34])


def test_global_topic_of_the_coalesced_transpose_finds_nothing_and_says_so(details, source):
    explanation = ex.explain(details, source, launch=0, topic="global")
    assert explanation.rules == ()
    assert explanation.lines == ()
    assert explanation.line_info  # ncu had the lines; they simply carry no excess
    (text,) = ex.render(explanation)
    assert "no excessive sectors to a source line of transpose_conflict" in text


def test_render_of_the_shared_explanation(shared0):
    lines = ex.render(shared0, display_path=lambda p: p.removeprefix("/work/main/"))
    assert lines[0].startswith("ncu SharedMemoryConflicts: The memory access pattern for shared loads")
    assert lines[1].startswith("ncu UncoalescedSharedAccess: This kernel has uncoalesced shared accesses")
    assert lines[2] == (
        f"kernels/transpose.cu:90  {LINE_90}  65,011,712 excessive wavefronts of 67,108,864 "
        "(100% of the kernel's excess)"
    )
    assert len(lines) == 3


def test_parse_source_gives_one_block_per_launch(source):
    blocks = ex.parse_source(source)
    assert [block.kernel for block in blocks] == ["transpose_conflict"] * 3
    lines = blocks[0].lines
    assert [row.line for row in lines] == [70, 73, 74, 78, 79, 82, 85, 86, 89, 90, 93]
    # ncu does not escape the quotes of `extern "C"`: the row must still split into the right columns.
    assert lines[0].text.startswith('extern "C" __global__ void transpose_conflict(')
    assert lines[0].metrics["Instructions Executed"] == 524_288
    assert math.isnan(lines[0].metrics["Address Space"])  # "-"
    assert "Address Space" not in lines[4].metrics  # "Global(4),Shared(4)" is text, not a number
    assert lines[4].metrics["L1 Wavefronts Shared Ideal"] == 2_097_152


def test_parse_rules_of_the_capture(details):
    rules = ex.parse_rules(details)
    assert sorted(rules) == [0, 1, 2]
    assert all(len(found) == 2 for found in rules.values())


def test_to_dict_is_json_and_round_trips(shared0):
    data = json.loads(json.dumps(shared0.to_dict()))
    assert data["lines"][0]["line"] == 90
    assert data["rules"][1]["rule"] == "UncoalescedSharedAccess"
    assert ex.Explanation.from_dict(data) == shared0


def test_global_explanation_ranks_lines_across_files_and_limits_to_top():
    explanation = ex.explain(SYNTHETIC_DETAILS, SYNTHETIC_SOURCE, launch=0, topic="global", top=1)
    assert [rule.rule for rule in explanation.rules] == [
        "UncoalescedGlobalAccess",
        "MemoryCacheAccessPattern",
    ]
    (line,) = explanation.lines
    assert (line.file, line.line, line.excess) == ("/src/gather.cu", 11, 3_670_016)
    assert line.share == pytest.approx(3_670_016 / (3_670_016 + 524_288))
    everything = ex.explain(SYNTHETIC_DETAILS, SYNTHETIC_SOURCE, launch=0, topic="global")
    assert [row.line for row in everything.lines] == [11, 5]  # zero and n/a excess left out
    assert sum(row.share for row in everything.lines) == pytest.approx(1.0)
    assert ex.render(explanation)[-1] == (
        "/src/gather.cu:11  out[i] = in[i * 32];  3,670,016 excessive sectors of 4,194,304 "
        "(88% of the kernel's excess)"
    )


def test_rules_of_another_topic_are_left_out():
    explanation = ex.explain(SYNTHETIC_DETAILS, SYNTHETIC_SOURCE, launch=0, topic="shared")
    assert explanation.rules == ()
    assert explanation.lines == ()


def test_a_launch_without_source_lines_suggests_lineinfo():
    explanation = ex.explain(SYNTHETIC_DETAILS, SYNTHETIC_SOURCE, launch=2, topic="global")
    assert explanation.kernel == "idle"  # from the details page: the source page lacks this launch
    assert not explanation.line_info
    (text,) = ex.render(explanation)
    assert "ncu attributed no excessive sectors to a source line of idle" in text
    assert "lineinfo: true" in text


def test_a_launch_in_neither_page_is_an_input_error():
    with pytest.raises(InputError, match="launch 7"):
        ex.explain(SYNTHETIC_DETAILS, SYNTHETIC_SOURCE, launch=7, topic="global")


def test_unknown_topic_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown topic"):
        ex.explain(SYNTHETIC_DETAILS, SYNTHETIC_SOURCE, launch=0, topic="texture")


def test_source_without_line_no_header_is_an_input_error(details):
    with pytest.raises(InputError, match='"Line No"'):
        ex.parse_source(details)  # the details page passed by mistake
    with pytest.raises(InputError, match='"Line No"'):
        ex.explain(SYNTHETIC_DETAILS, "garbage", launch=0, topic="global")


def test_a_kernel_without_line_information_is_explained_by_its_rules_alone():
    """PyTorch's strided copy (examples/programs/strided.yaml) on an H200: ncu prints no source page for
    a kernel built without line information, only its warning; the rules still say what is wrong."""
    from pathlib import Path

    capture = Path(__file__).parent / "fixtures" / "program_explain"
    source = (capture / "explain.source.csv").read_text()
    assert source.startswith("==WARNING== No lineinfo available")
    assert ex.parse_source(source) == []
    found = ex.explain((capture / "explain.details.csv").read_text(), source, launch=0, topic="global")
    assert (
        found.kernel.startswith("void elementwise_kernel<128, 2,")
        and "direct_copy_kernel_cuda" in found.kernel
    )
    assert (found.lines, found.line_info) == ((), False)
    assert [rule.rule for rule in found.rules] == ["MemoryCacheAccessPattern", "UncoalescedGlobalAccess"]
    assert "only 4.0 of the 32 bytes transmitted per sector are utilized" in found.rules[0].text
    assert "14680064 excessive sectors (78% of the total 18874368 sectors)" in found.rules[1].text
