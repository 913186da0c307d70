"""The bounded YAML reader: lines remembered, tags, aliases, nesting and sizes refused."""

from pathlib import Path

import pytest
from expectation_edits import (
    problems,
    write,
)

from ncuverify.errors import InputError
from ncuverify.spec import read_yaml, yaml_reader


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


def alias_bomb(width: int, levels: int) -> str:
    """Billion laughs: each line a list of `width` aliases of the line before, `width ** levels` values."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("width", "levels"), [(9, 9), (10, 10), (6, 12), (2, 60), (1000, 3)])
def test_alias_bomb_is_refused_fast(tmp_path, monkeypatch, width, levels):
    written = 1 + levels * (2 + width)  # the root mapping; a line: its key, its list and its items
    bound = written + 100_000
    read: list[int] = []  # the line of each value read
    spend = yaml_reader._YamlReader._spend

    def counted(reader, line: int) -> None:
        read.append(line)
        # A reader that expanded what the aliases make would read billions of values, for hours.
        assert len(read) <= bound + 1, "the reader read on past the bound"
        spend(reader, line)

    monkeypatch.setattr(yaml_reader._YamlReader, "_spend", counted)
    message = problems(write(tmp_path, alias_bomb(width, levels)))
    assert f"aliases expand the file's {written} values to more than {bound}" in message
    assert "(they may add 100000 at most); refusing to read on" in message
    assert len(read) == bound + 1, "refused at the first value past the bound"


@pytest.mark.slow
def test_many_values_written_without_aliases_read():
    """A file of more plain values than aliases may add to a small one reads: its size bounds it."""
    text = "".join(f"c{i}: {{kernel: k, grid: {i}, block: 32}}\n" for i in range(13_000))  # 8 values a line
    data, _ = read_yaml(text)
    assert len(data) == 13_000 and data["c12999"] == {"kernel": "k", "grid": 12999, "block": 32}


def test_aliases_may_add_as_many_values_as_are_written(monkeypatch):
    """Beyond MAX_ALIAS_VALUES, a file's aliases may add as many values as it writes; one more and it
    is refused."""
    monkeypatch.setattr(yaml_reader, "MAX_ALIAS_VALUES", 1000)
    cite = "cite: &c {document: d, section: s, figure: f}\n"  # 8 values, with the root's: 9
    plain = "".join(f"p{i}: [1, 2, 3, 4, 5, 6]\n" for i in range(250))  # 8 values a line
    # Each line writes 2 values and reads 8: 6 added. 502 lines add 3012 to the 3013 written.
    aliases = "".join(f"a{i}: *c\n" for i in range(502))
    data, _ = read_yaml(cite + plain + aliases)
    assert data["a501"] == {"document": "d", "section": "s", "figure": "f"}
    with pytest.raises(InputError, match=r"aliases expand the file's 3015 values to more than 6030 \("):
        read_yaml(cite + plain + aliases + "b: *c\n")


def test_values_written_are_bounded(monkeypatch):
    monkeypatch.setattr(yaml_reader, "MAX_WRITTEN_VALUES", 1000)
    with pytest.raises(InputError, match=r"^line 1: more than 1000 values; refusing to read on$"):
        read_yaml("kernels: [" + "1, " * 1000 + "]\n")
    read_yaml("kernels: [" + "1, " * 997 + "]\n")  # the root mapping, its key and the list: 1000


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
