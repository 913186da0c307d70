from pathlib import Path

import pytest
import yaml
from conftest import DATA

from ncuverify.errors import InputError
from ncuverify.spec import BufferArg, Float32Arg, Int32Arg, load, read_yaml

SAMPLE = (DATA / "sample.yaml").read_text()


def write(tmp_path: Path, text: str, name: str = "claims.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def edited(tmp_path: Path, change) -> Path:
    """The sample file with one change made to its parsed content."""
    content = yaml.safe_load(SAMPLE)
    change(content)
    return write(tmp_path, yaml.safe_dump(content, sort_keys=False))


def problems(path: Path) -> str:
    with pytest.raises(InputError) as error:
        load(path)
    return str(error.value)


def test_sample_loads_with_typed_values():
    spec = load(DATA / "sample.yaml")
    content = spec.content
    assert list(content.kernels) == ["read_stride1", "read_stride32", "scale"]
    assert content.kernels["read_stride32"].entry == "read_stride<32>"
    assert content.kernels["read_stride32"].is_template
    case = content.cases["scale_2d"]
    assert case.grid == (256, 4, 1) and case.block == (64, 4, 1)
    assert case.threads == 256 * 4 * 64 * 4
    assert case.args[0] == BufferArg(buffer="float32", count=262144, fill="constant", value=2.5)
    assert case.args[2] == Float32Arg(float32=3.0)
    assert case.args[3] == Int32Arg(int32=262144)
    assert content.cases["misaligned"].args[0].offset == 1
    ratio = next(c for c in content.claims if c.id == "stride32_sector_ratio")
    assert ratio.case is None and ratio.cite.holds == "no" and ratio.note
    assert [str(r) for r in ratio.metric_refs()] == [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum@stride32",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum@stride1",
    ]


def test_measures_expand_and_controls_load(tmp_path):
    def with_measure(content):
        content["claims"][0].update(metric="global_ld_sectors_per_request", control="stride32")

    claim = load(edited(tmp_path, with_measure)).content.claims[0]
    assert claim.control == "stride32"
    assert [str(r) for r in claim.metric_refs()] == [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum@stride1",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum@stride1",
    ]


def test_section_numbers_stay_text(tmp_path):
    path = edited(tmp_path, lambda c: c["claims"][0]["cite"].update(section=2.2))
    assert load(path).content.claims[0].cite.section == "2.2"


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
        (lambda c: c["claims"][0].pop("cite"), "claims[0].cite: missing: 'cite' is required"),
        (lambda c: c["kernels"]["scale"].update(file="scale.cu"), "give exactly one of 'file'"),
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


def test_missing_kernel_file_is_reported(tmp_path):
    path = edited(tmp_path, lambda c: c["kernels"]["scale"].update(source=None, file="kernels/none.cu"))
    path = write(tmp_path, path.read_text().replace("    source: null\n", ""))
    assert "kernels.scale.file: no such file: kernels/none.cu" in problems(path)


def test_all_problems_are_reported_at_once(tmp_path):
    def two_mistakes(content):
        content["claims"][0].update(case="nope")
        content["cases"]["stride1"].update(kernel="nope")

    message = problems(edited(tmp_path, two_mistakes))
    assert "cases.stride1.kernel" in message and "claims[0].case" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the file is empty"),
        ("# only a comment\n", "the file is empty"),
        ("kernels: [a, b\n", "not valid YAML"),
        ("kernels:\n  a: 1\n  a: 2\n", "line 3: duplicate key 'a'"),
        ("- a\n- b\n", ":1: the file must be a mapping"),
        (
            "kernels: !!python/object/apply:os.system ['true']\n",
            "line 1: the tag tag:yaml.org,2002:python/object/apply:os.system is not allowed",
        ),
        ("kernels: !!python/name:os.system x\n", "line 1: not valid here"),
    ],
)
def test_malformed_files(tmp_path, text, expected):
    assert expected in problems(write(tmp_path, text))


def test_alias_bomb_is_refused(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [
        f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]"
        for i in range(1, 12)
    ]
    message = problems(write(tmp_path, "\n".join(lines) + "\n"))
    assert "more than 100000 values once aliases are expanded" in message


def test_missing_file(tmp_path):
    assert "no such expectation file" in problems(tmp_path / "absent.yaml")


def test_read_yaml_records_lines():
    data, lines = read_yaml("a:\n  b: [1, 2]\n  c: x\n")
    assert data == {"a": {"b": [1, 2], "c": "x"}}
    assert lines[("a", "b")] == 2 and lines[("a", "c")] == 3 and lines[("a", "b", 1)] == 2


def test_misspelt_metrics_are_refused_before_anything_runs(tmp_path):
    from typer.testing import CliRunner

    from ncuverify.cli import app

    path = tmp_path / "typo.yaml"
    path.write_text(
        SAMPLE.replace(
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\n",
            "l1tex__t_request_pipe_lsu_mem_global_op_ld.sum\n",
            1,
        )
    )
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == 2
    assert (
        "claim contiguous_four_sectors: ncu knows no metric l1tex__t_request_pipe_lsu_mem_global_op_ld.sum on sm_90 "
        "(did you mean l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum?)"
    ) in result.stdout


def test_every_metric_of_the_expectation_files_is_known_to_ncu():
    from conftest import EXPECTATIONS

    from ncuverify.pipeline import check_metric_names

    for path in sorted(EXPECTATIONS.glob("*.yaml")):
        check_metric_names(load(path), "sm_90")


def test_kernel_files_outside_the_project_are_refused(tmp_path):
    project = tmp_path / "project"
    (project / "expectations").mkdir(parents=True)
    (project / "kernels").mkdir()
    (project / "pyproject.toml").write_text("")
    (project / "kernels" / "k.cu").write_text('extern "C" __global__ void k(float* o) { o[0] = 1.f; }')
    (tmp_path / "secret.cu").write_text("// outside the project")

    def with_file(content, file):
        content["kernels"]["scale"].pop("source")
        content["kernels"]["scale"]["file"] = file

    inside = project / "expectations" / "inside.yaml"
    content = yaml.safe_load(SAMPLE)
    with_file(content, "../kernels/k.cu")
    inside.write_text(yaml.safe_dump(content))
    assert load(inside).content.kernels["scale"].file == "../kernels/k.cu"

    for escape in ("../../secret.cu", "../../../../../../etc/passwd"):
        content = yaml.safe_load(SAMPLE)
        with_file(content, escape)
        outside = project / "expectations" / "outside.yaml"
        outside.write_text(yaml.safe_dump(content))
        assert f"kernels.scale.file: {escape} lies outside the project ({project})" in problems(outside)


ID_RULE = "is not an id: an id has only letters, digits and _, and does not start with a digit"
CASE_IDS = (DATA / "case_ids.yaml").read_text()


def line_of(text: str, fragment: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_a_case_and_a_minus_read_as_written():
    """`m@a-b` is m@a - b: b is a metric read from the claim's case, not a case named a-b."""
    claim = load(DATA / "case_ids.yaml").content.claims[0]
    assert [(ref.name, ref.case) for ref in claim.metric_refs()] == [
        ("gpu__time_duration.sum", "a"),
        ("b", "b"),
    ]


def test_a_case_named_a_minus_b_is_refused(tmp_path):
    text = CASE_IDS.replace("  b:\n", "  a-b:\n    kernel: copy\n    grid: 4\n    block: 32\n  b:\n")
    path = write(tmp_path, text)
    assert problems(path) == f"{path}:{line_of(text, 'a-b:')}: cases.a-b: 'a-b' {ID_RULE}"


def test_without_a_claim_case_the_minus_is_named(tmp_path):
    path = write(tmp_path, CASE_IDS.replace("    case: b\n", ""))
    line = line_of(CASE_IDS, "metric:") - 1
    assert problems(path) == (
        f"{path}:{line}: claims[0].metric: b names no case: set the claim's 'case' or write b@CASE"
    )


@pytest.mark.parametrize(
    ("old", "new", "field", "name"),
    [
        ("  copy:\n", "  co-py:\n", "kernels.co-py", "co-py"),
        ("    kernel: copy\n    grid: 1\n", "    kernel: co-py\n    grid: 1\n", "cases.a.kernel", "co-py"),
        ("  - id: a_minus_b", "  - id: a-minus-b", "claims[0].id", "a-minus-b"),
        ("    case: b\n", "    case: a-b\n", "claims[0].case", "a-b"),
        ("    case: b\n", "    case: b\n    control: a-b\n", "claims[0].control", "a-b"),
        (
            "{buffer: float32, count: 32}]",
            "{buffer: float32, count: 32, name: o-ut}]",
            "cases.a.args[1].name",
            "o-ut",
        ),
        ("  a:\n", "  2a:\n", "cases.2a", "2a"),
        ("  a:\n", '  "a b":\n', "cases.a b", "a b"),
        ("  a:\n", "  a\u0301:\n", "cases.a\u0301", "a\u0301"),
    ],
)
def test_ids_have_only_letters_digits_and_underscores(tmp_path, old, new, field, name):
    text = CASE_IDS.replace(old, new, 1)
    path = write(tmp_path, text)
    line = line_of(text, next(line for line in new.splitlines() if name in line).strip())
    assert problems(path) == f"{path}:{line}: {field}: {name!r} {ID_RULE}"


def test_ids_are_bounded(tmp_path):
    text = CASE_IDS.replace("  - id: a_minus_b", "  - id: " + "a" * 129)
    path = write(tmp_path, text)
    line = line_of(text, "- id:")
    assert problems(path) == f"{path}:{line}: claims[0].id: an id is at most 128 characters; this one has 129"
