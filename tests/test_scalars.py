"""Plain scalars as YAML 1.2 reads them, and YAML 1.1 readings refused where they would differ."""

import pytest
from expectation_edits import (
    BUFFER,
    CASE_IDS,
    KERNEL,
    edit_problem,
    edited,
    line_of,
    write,
)

from ncuverify.spec import load


def test_section_numbers_stay_text(tmp_path):
    path = edited(tmp_path, lambda c: c["claims"][0]["cite"].update(section=2.2))
    assert load(path).content.claims[0].cite.section == "2.2"


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
