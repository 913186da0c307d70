"""A file's problems as lines naming the file, the line and the field."""

import pytest
from expectation_edits import (
    CASE_IDS,
    SAMPLE,
    edited,
    line_of,
    problems,
    write,
)


def test_unknown_key_names_line_and_suggests(tmp_path):
    text = SAMPLE.replace("    entry: scale\n", "    entry: scale\n    defnes: {N: 1}\n")
    path = write(tmp_path, text)
    line = text.splitlines().index("    defnes: {N: 1}") + 1
    assert (
        problems(path)
        == f"{path}:{line}: kernels.scale.defnes: unknown key 'defnes' (did you mean 'defines'?)"
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda c: c["cases"]["stride1"].update(grid=0),
            "cases.stride1.grid: every grid dimension is a whole number",
        ),
        (lambda c: c["cases"]["stride1"].update(block=[64, 32]), "a block holds at most 1024 threads"),
        (lambda c: c["cases"]["stride1"].update(block=[1, 1, 65]), "block is at most [1024, 1024, 64]"),
        (
            lambda c: c["cases"]["stride1"]["args"][0].update(count=-4),
            "cases.stride1.args[0].count: Input should be greater",
        ),
        (
            lambda c: c["cases"]["stride1"]["args"][0].update(buffer="float33"),
            "cases.stride1.args[0].buffer: Input should be",
        ),
        (
            lambda c: c["cases"]["stride1"]["args"].append({"half": 1}),
            "cases.stride1.args[2]: an argument is a buffer",
        ),
        (
            lambda c: c["cases"]["stride1"]["args"].append({"int32": 2**40}),
            "args[2].int32: Input should be less than",
        ),
        (
            lambda c: c["cases"]["stride1"].update(kernel="read_strid1"),
            "no kernel named 'read_strid1' (did you mean 'read_stride1'?)",
        ),
        (
            lambda c: c["claims"][0].update(case="strid1"),
            "claims[0].case: no case named 'strid1' (did you mean 'stride1'?)",
        ),
        (
            lambda c: c["claims"][1].update(id=c["claims"][0]["id"]),
            "claims[1].id: duplicate claim id 'contiguous_four_sectors'",
        ),
        (
            lambda c: c["claims"][0].update(metric="a.sum / (b.sum"),
            "claims[0].metric: expression 'a.sum / (b.sum' ends too early",
        ),
        (
            lambda c: c["claims"][0].update(metric="a.sum@nowhere"),
            "claims[0].metric: no case named 'nowhere'",
        ),
        (
            lambda c: c["claims"][0].pop("case"),
            "claims[0].metric: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum names no case",
        ),
        (lambda c: c["claims"][0].update(expect={"equals": 4, "at_most": 5}), "give exactly one of equals"),
        (lambda c: c["claims"][0].update(expect={"approx": 4}), "approx needs exactly one tolerance"),
        (lambda c: c["claims"][0].update(expect={"between": [9, 4]}), "between needs low <= high"),
        (lambda c: c["claims"][0]["cite"].update(holds=False), "(cite.holds: no) needs a 'note'"),
        (
            lambda c: c["claims"][0]["cite"].update(holds="approximately"),
            "(cite.holds: approximately) needs a 'note'",
        ),
        (
            lambda c: c["claims"][0]["cite"].update(holds="maybe"),
            "claims[0].cite.holds: Input should be 'yes', 'approximately' or 'no'",
        ),
        (
            lambda c: c["claims"][0].update(metric="buffer__cycles.mean"),
            "case stride1 has no buffer named 'cycles'",
        ),
        (lambda c: c["claims"][0].update(metric="buffer__cycles"), "say which statistic of the buffer"),
        (lambda c: c["claims"][0].update(arch=["sm90"]), "claims[0].arch[0]: String should match pattern"),
        (
            lambda c: c["claims"][0].update(control="strid32"),
            "claims[0].control: no case named 'strid32' (did you mean 'stride32'?)",
        ),
        (
            lambda c: c["claims"][0].update(control="stride1"),
            "claims[0].control: the control must be another case",
        ),
        (
            lambda c: c["claims"][3].update(control="stride1"),
            "claims[3].control: every metric names its case with @",
        ),
        (lambda c: c["claims"][0].update(xfail={"arch": ["sm_90"]}), "claims[0].xfail.reason: missing"),
        (
            lambda c: c["cases"]["stride1"].update(repeat=0),
            "cases.stride1.repeat: Input should be greater than or equal to 1",
        ),
        (
            lambda c: c["claims"][0]["cite"].pop("figure"),
            "claims[0].cite.figure: missing: 'figure' is required",
        ),
        (lambda c: c["kernels"]["scale"].update(file="scale.cu"), "give exactly one of 'file'"),
        (
            lambda c: c["kernels"]["scale"].update(source=c["kernels"]["scale"]["source"] + "\0int cut;\n"),
            "kernels.scale.source: holds a NUL character (line 5 of the source): the compiler would read"
            " the source only up to it",
        ),
        (
            lambda c: c["kernels"]["scale"].update(max_registers=300),
            "kernels.scale.max_registers: Input should be less",
        ),
        (
            lambda c: c["cases"]["stride1"]["args"][0].update(fill="constant"),
            "'value' goes with 'fill: constant'",
        ),
    ],
)
def test_mistakes_are_named_with_file_line_and_field(tmp_path, change, expected):
    path = edited(tmp_path, change)
    message = problems(path)
    assert expected in message
    assert message.startswith(f"{path}:")
    assert "Traceback" not in message


def test_all_problems_are_reported_at_once(tmp_path):
    def two_mistakes(content):
        content["claims"][0].update(case="nope")
        content["cases"]["stride1"].update(kernel="nope")

    message = problems(edited(tmp_path, two_mistakes))
    assert "cases.stride1.kernel" in message and "claims[0].case" in message


def test_many_problems_among_many_names_are_cut_short(tmp_path):
    """Suggesting a near name compares it with every name, at a cost that grows with both lengths: a file
    of many long, alike case names and claims naming none of them must not take hours to refuse."""
    cases = "".join(f"  {'c' * 100}{i:08d}: {{kernel: copy, grid: 1, block: 32}}\n" for i in range(300))
    claim = '  - {{id: x{0}, case: {1}x{0:07d}, metric: m, expect: {{equals: 1}}, cite: {{document: d, section: "1", figure: f}}}}\n'
    claims = "".join(claim.format(i, "c" * 100) for i in range(500))
    text = CASE_IDS.split("cases:\n")[0] + "cases:\n" + cases + "claims:\n" + claims
    path = write(tmp_path, text)
    lines = problems(path).splitlines()
    assert len(lines) == 21
    assert (
        lines[0] == f"{path}:{line_of(text, 'id: x0,')}: claims[0].case: no case named '{'c' * 100}x0000000'"
    )
    assert lines[-1] == f"{path}: and more problems; these are the first 20"
