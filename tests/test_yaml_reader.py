"""The bounded YAML reader: lines remembered, tags, aliases, nesting and sizes refused."""

from pathlib import Path

import pytest
from expectation_edits import (
    problems,
    write,
)

from ncuverify.errors import InputError
from ncuverify.spec import read_yaml


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


def test_read_yaml_records_lines():
    data, lines = read_yaml("a:\n  b: [1, 2]\n  c: x\n")
    assert data == {"a": {"b": [1, 2], "c": "x"}}
    assert lines[("a", "b")] == 2 and lines[("a", "c")] == 3 and lines[("a", "b", 1)] == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kernels: " + "[" * 100_000 + "]" * 100_000 + "\n",
            "line 1, column 1009: not valid YAML: exceeded maximum nesting depth",  # libyaml's own bound
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


def test_a_key_longer_than_any_field_is_refused(tmp_path):
    path = write(tmp_path, "? " + "k" * 5000 + "\n: 1\n")  # an explicit key: YAML bounds implicit ones
    assert problems(path) == f"{path}: line 1: a key of 5000 characters is longer than any ncuverify reads"


COMMITTED_YAML = sorted(
    path
    for folder in ("expectations", "examples", "tests/data")
    for path in (Path(__file__).parent.parent / folder).rglob("*.yaml")
)


@pytest.mark.parametrize("path", COMMITTED_YAML, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_libyaml_s_parser_reads_what_pythons_reads(path):
    """libyaml's parser is the one used where PyYAML has it; its values and lines are the same."""
    text = path.read_text()
    try:
        expected = read_yaml(text, parser="python")
    except InputError as error:
        with pytest.raises(InputError) as fast:
            read_yaml(text)
        assert str(fast.value).split(":")[0] == str(error).split(":")[0]  # the same line
        return
    assert read_yaml(text) == expected
