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
        (
            "kernels: !!python/name:os.system x\n",
            "line 1: the tag tag:yaml.org,2002:python/name:os.system is not allowed",
        ),
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


def edit_problem(tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    """The problem the case-ids file has with one edit, and that file's text."""
    assert old in CASE_IDS
    text = CASE_IDS.replace(old, new, 1)
    path = write(tmp_path, text)
    return problems(path).replace(str(path), "f.yaml"), text


BUFFER = "{buffer: float32, count: 32}, {"
KERNEL = "    entry: copy\n"


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        (
            BUFFER,
            "{buffer: float32, count: 010}, {",
            "cases.a.args[0].count",
            "010 is not a number here (YAML 1.1 would read it as octal 8): write 8 or 10",
        ),
        (
            BUFFER,
            "{buffer: float32, count: -010}, {",
            "cases.a.args[0].count",
            "-010 is not a number here (YAML 1.1 would read it as octal -8): write -8 or -10",
        ),
        (
            BUFFER,
            "{buffer: float32, count: 09}, {",
            "cases.a.args[0].count",
            "09 is not a number here (YAML 1.1 would read it as text: a leading 0 means octal): write 9",
        ),
        (
            "    grid: 1\n",
            "    grid: 1:30\n",
            "cases.a.grid",
            "1:30 is not a number here (YAML 1.1 would read it as sexagesimal 90): write 90",
        ),
        (
            "    grid: 1\n",
            "    grid: [1, 010]\n",
            "cases.a.grid",
            "010 is not a number here (YAML 1.1 would read it as octal 8): write 8 or 10",
        ),
        (
            BUFFER,
            "{buffer: float32, count: 0b101}, {",
            "cases.a.args[0].count",
            "0b101 is not a number here (YAML 1.1 would read it as binary 5): write 5",
        ),
        (
            BUFFER,
            "{buffer: float32, count: 1_000}, {",
            "cases.a.args[0].count",
            "1_000 is not a number here (YAML 1.1 would read it as 1000): write 1000",
        ),
        (
            BUFFER,
            "{buffer: float32, count: '1024'}, {",
            "cases.a.args[0].count",
            "'1024' is quoted, so it is text: write 1024 without quotes for the number",
        ),
        (
            BUFFER,
            "{buffer: float32, count: 1e3}, {",
            "cases.a.args[0].count",
            "1e3 is not written as a whole number: write 1000",
        ),
        (
            BUFFER,
            "{buffer: float32, count: true}, {",
            "cases.a.args[0].count",
            "Input should be a valid integer",
        ),
        (
            BUFFER,
            "{buffer: float32, count: 32, fill: constant, value: 1:30}, {",
            "cases.a.args[0].value",
            "1:30 is not a number here (YAML 1.1 would read it as sexagesimal 90): write 90",
        ),
        (
            KERNEL,
            KERNEL + "    max_registers: yes\n",
            "kernels.copy.max_registers",
            "yes is not a number here (YAML 1.1 would read it as true): write a number",
        ),
        (
            KERNEL,
            KERNEL + "    max_registers: true\n",
            "kernels.copy.max_registers",
            "Input should be a valid integer",
        ),
        (
            KERNEL,
            KERNEL + "    max_registers: '32'\n",
            "kernels.copy.max_registers",
            "'32' is quoted, so it is text: write 32 without quotes for the number",
        ),
        (
            KERNEL,
            KERNEL + "    lineinfo: yes\n",
            "kernels.copy.lineinfo",
            "yes is not a boolean here (YAML 1.1 would read it as true): write true",
        ),
        (
            KERNEL,
            KERNEL + "    lineinfo: off\n",
            "kernels.copy.lineinfo",
            "off is not a boolean here (YAML 1.1 would read it as false): write false",
        ),
        (
            KERNEL,
            KERNEL + "    lineinfo: n\n",
            "kernels.copy.lineinfo",
            "n is not a boolean here (YAML 1.1 would read it as false): write false",
        ),
        (KERNEL, KERNEL + "    lineinfo: 1\n", "kernels.copy.lineinfo", "Input should be a valid boolean"),
        (
            KERNEL,
            KERNEL + "    defines: {USE_LDG: yes}\n",
            "kernels.copy.defines.USE_LDG",
            "yes is read differently by YAML 1.1 (true) and YAML 1.2: write true, or 'yes' in quotes for the text",
        ),
        (
            KERNEL,
            KERNEL + "    defines: {N: 010}\n",
            "kernels.copy.defines.N",
            "010 is read differently by YAML 1.1 (octal 8) and YAML 1.2: write 8 or 10, or '010' in quotes for the text",
        ),
        (
            KERNEL,
            KERNEL + '    defines: {N: "1\\n#include </etc/passwd>"}\n',
            "kernels.copy.defines.N",
            "a define's value is one line: a newline in it would reach the compiler as a line of its own",
        ),
        (
            KERNEL,
            KERNEL + "    defines: {N: [1]}\n",
            "kernels.copy.defines.N",
            "a define's value is text, a number, true, false or null",
        ),
        (
            KERNEL,
            KERNEL + "    defines: {'N -DX': 1}\n",
            "kernels.copy.defines.N -DX",
            "'N -DX' is not a macro name: letters, digits and _, not first a digit, at most 128 characters",
        ),
        ("{at_least: 0}", "{at_least: .nan}", "claims[0].expect.at_least", "Input should be a finite number"),
        (
            "{at_least: 0}",
            "{between: [0, .inf]}",
            "claims[0].expect.between[1]",
            "Input should be a finite number",
        ),
        (
            "{at_least: 0}",
            "{at_least: no}",
            "claims[0].expect.at_least",
            "no is not a number here (YAML 1.1 would read it as false): write a number",
        ),
        (
            "    case: b\n",
            "    case: b\n    arch: []\n",
            "claims[0].arch",
            "[] names no architecture, so the claim would never be judged: name one, or leave arch out for all",
        ),
        (
            "    case: b\n",
            "    case: b\n    xfail: {reason: slow, arch: []}\n",
            "claims[0].xfail.arch",
            "[] names no architecture, so the claim would be expected to fail nowhere: name one, or leave arch out for all",
        ),
        (
            'section: "1"',
            "section: 1, holds: off",
            "claims[0].cite.holds",
            "Input should be 'yes', 'approximately' or 'no'",
        ),
        (
            'figure: "m@a-b is m@a - b"',
            "figure: " + "x" * 4097,
            "claims[0].cite.figure",
            "a text is at most 4096 characters here; this one has 4097",
        ),
    ],
)
def test_yaml_1_1_readings_and_lax_values_are_refused_where_numbers_belong(
    tmp_path, old, new, field, message
):
    found, text = edit_problem(tmp_path, old, new)
    line = line_of(text, new.strip().splitlines()[-1][:20])
    assert found == f"f.yaml:{line}: {field}: {message}"


@pytest.mark.parametrize(
    ("old", "new", "read"),
    [
        (BUFFER, "{buffer: float32, count: 0x20}, {", lambda c: c.cases["a"].args[0].count == 32),
        (BUFFER, "{buffer: float32, count: 0o40}, {", lambda c: c.cases["a"].args[0].count == 32),
        (BUFFER, "{buffer: float32, count: +32}, {", lambda c: c.cases["a"].args[0].count == 32),
        (
            BUFFER,
            "{buffer: float32, count: 32, fill: constant, value: 1}, {",
            lambda c: c.cases["a"].args[0].value == 1.0,
        ),
        ("{at_least: 0}", "{at_least: 4.8e12}", lambda c: c.claims[0].expect.at_least == 4.8e12),
        ("{at_least: 0}", "{between: [1, 2.5]}", lambda c: c.claims[0].expect.between == (1.0, 2.5)),
        ('section: "1"', "section: 2.10", lambda c: c.claims[0].cite.section == "2.10"),
        ('section: "1"', "section: 010", lambda c: c.claims[0].cite.section == "010"),
        ('figure: "m@a-b is m@a - b"', "figure: yes", lambda c: c.claims[0].cite.figure == "yes"),
        ('section: "1"', 'section: "1", holds: NO', lambda c: c.claims[0].cite.holds == "no"),
        ('section: "1"', 'section: "1", holds: Yes', lambda c: c.claims[0].cite.holds == "yes"),
        ('section: "1"', 'section: "1", holds: true', lambda c: c.claims[0].cite.holds == "yes"),
        (KERNEL, KERNEL + "    lineinfo: false\n", lambda c: c.kernels["copy"].lineinfo is False),
        (
            KERNEL,
            KERNEL + "    defines: {A: 0x10, B: 2.50, C: true, D: ~, E: 'yes', F: \"010\"}\n",
            lambda c: (
                c.kernels["copy"].defines == {"A": 16, "B": 2.5, "C": True, "D": None, "E": "yes", "F": "010"}
            ),
        ),
        ("  - id: a_minus_b\n", "  - id: a_minus_b\n    note: no\n", lambda c: c.claims[0].note == "no"),
    ],
)
def test_yaml_1_2_core_scalars_read_as_written(tmp_path, old, new, read):
    assert old in CASE_IDS
    text = CASE_IDS.replace(old, new, 1)
    if "holds: NO" in new:
        text = text.replace("  - id: a_minus_b\n", "  - id: a_minus_b\n    note: why\n")
    assert read(load(write(tmp_path, text)).content)


def test_every_holds_word_of_the_expectation_files_still_reads():
    from conftest import EXPECTATIONS

    words = {claim.cite.holds for path in EXPECTATIONS.glob("*.yaml") for claim in load(path).content.claims}
    assert words == {"yes", "approximately", "no"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kernels: " + "[" * 100_000 + "]" * 100_000 + "\n",
            "line 1: lists and mappings nest deeper than 64 levels",
        ),
        (
            "kernels: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n",
            "line 1: lists and mappings nest deeper than 64 levels",
        ),
        (
            "".join(" " * i + "- \n" for i in range(0, 200, 2)),
            "line 65: lists and mappings nest deeper than 64 levels",
        ),
        (
            "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 70)),
            "line 1: lists and mappings nest deeper than 64 levels once aliases are expanded",
        ),
        (
            "kernels: &k [*k]\n",
            "line 1: lists and mappings nest deeper than 64 levels once aliases are expanded",
        ),
        (
            "kernels: &k {a: *k}\n",
            "line 1: lists and mappings nest deeper than 64 levels once aliases are expanded",
        ),
        ("kernels: [" + "1, " * 100_001 + "]\n", "line 1: more than 100000 values; refusing to read on"),
        (
            "base: &b {kernel: copy}\ncases: {a: {<<: *b, grid: 1}}\n",
            "line 2: '<<' merges mappings in YAML 1.1 only, and ncuverify reads YAML 1.2: write the keys out",
        ),
        ("kernels: !!int 010\n", "line 1: the tag tag:yaml.org,2002:int is not allowed"),
        ("kernels: !!bool yes\n", "line 1: the tag tag:yaml.org,2002:bool is not allowed"),
        ("kernels: !!binary aGVsbG8=\n", "line 1: the tag tag:yaml.org,2002:binary is not allowed"),
        ("kernels: !!timestamp 2001-12-14\n", "line 1: the tag tag:yaml.org,2002:timestamp is not allowed"),
        ("kernels: {[a]: 1}\n", "line 1: a key must be plain text"),
        ("count: " + "9" * 5000 + "\n", "line 1: a number of 5000 characters is longer than ncuverify reads"),
        ("count: 0x" + "f" * 200 + "\n", "line 1: a number of 202 characters is longer than ncuverify reads"),
    ],
)
def test_hostile_yaml_is_refused_before_it_costs(tmp_path, text, expected):
    message = problems(write(tmp_path, text))
    assert expected in message
    assert "Traceback" not in message and "RecursionError" not in message


def test_keys_are_the_text_written(tmp_path):
    data, _ = read_yaml("010: a\n10: b\n1.10: c\ntrue: d\n~: e\n")
    assert data == {"010": "a", "10": "b", "1.10": "c", "true": "d", "~": "e"}


def test_deep_nesting_just_inside_the_bound_reads():
    data, _ = read_yaml("a: " + "[" * 63 + "]" * 63 + "\n")
    depth = 0
    while isinstance(data, dict | list) and data:
        data = data["a"] if isinstance(data, dict) else data[0]
        depth += 1
    assert depth == 63


def test_a_file_larger_than_4_mib_is_refused_unread(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("# " + "x" * (4 * 1024 * 1024) + "\n")
    assert problems(path) == f"{path}: larger than 4194304 bytes (4 MiB); refusing to read it"


def test_what_is_no_regular_file_is_refused(tmp_path):
    import os

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer, for ever
    assert problems(fifo) == f"{fifo}: not a regular file"
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    assert problems(folder) == f"{folder}: not a regular file"


def test_a_link_out_of_the_project_is_not_read(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    link = project / "claims.yaml"
    link.symlink_to(secret)
    message = problems(link)
    assert message == f"{link}: links to {secret}, outside the project ({project})"
    inside = project / "inside.yaml"
    inside.write_text(CASE_IDS)
    (project / "link.yaml").symlink_to(inside)
    assert load(project / "link.yaml").content.claims[0].id == "a_minus_b"


def test_a_deep_expression_in_a_file_names_the_claim(tmp_path):
    text = CASE_IDS.replace("metric: gpu__time_duration.sum@a-b", 'metric: "' + "- " * 65 + 'x"')
    path = write(tmp_path, text)
    line = line_of(text, "metric:")
    assert problems(path) == (
        f"{path}:{line}: claims[0].metric: expression {'- ' * 65 + 'x'!r} nests deeper than 64 parentheses "
        f"and signs at column 129"
    )


def test_a_pattern_re2_cannot_match_names_the_claim(tmp_path):
    text = CASE_IDS.replace("metric: gpu__time_duration.sum@a-b", r"metric: sass('(a)\1')")
    path = write(tmp_path, text)
    line = line_of(text, "metric:")
    assert problems(path) == (
        f"{path}:{line}: claims[0].metric: sass pattern '(a)\\1' is not supported: ncuverify matches SASS with "
        "a linear-time engine (RE2), which has no backreferences or lookaround"
    )


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


def test_a_key_longer_than_any_field_is_refused(tmp_path):
    path = write(tmp_path, "? " + "k" * 5000 + "\n: 1\n")  # an explicit key: YAML bounds implicit ones
    assert problems(path) == f"{path}: line 1: a key of 5000 characters is longer than any ncuverify reads"


def test_a_folder_linking_out_of_the_project_is_not_read(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.yaml").write_text("token: s3cr3t\n")
    (project / "expectations").symlink_to(elsewhere)
    path = project / "expectations" / "config.yaml"
    assert problems(path) == f"{path}: links to {elsewhere / 'config.yaml'}, outside the project ({project})"


def test_texts_are_bounded_by_length_only():
    """Whatever characters a figure or note holds (a lone surrogate, a bidi override) are the report's to
    show safely; the model bounds only their length."""
    from ncuverify.spec import Citation, Claim, Expectation

    text = "\u202eevil\u2066 \ud800 \ufffe \r\n\t end"
    cite = Citation(document=text, section=text, figure=text)
    claim = Claim(id="x", case="a", metric="m", expect=Expectation(equals=1), cite=cite, note=text)
    assert claim.note == text and claim.cite.figure == text
