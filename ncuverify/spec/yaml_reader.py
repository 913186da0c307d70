"""The bounded YAML reader: composed nodes to plain values, each remembering its line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.resolver import Resolver

from ncuverify.errors import InputError
from ncuverify.spec.fields import MAX_TEXT_LENGTH
from ncuverify.spec.scalars import PLAIN_TAG, STR_TAG, plain_scalar


class PurePythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's own parser: the events libyaml's gives, slower; where PyYAML was built without libyaml."""

    def __init__(self, text: str) -> None:
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


try:  # libyaml's parser, in C, which PyYAML's wheels include: most of the time a file takes to read
    from yaml._yaml import CParser as FAST_PARSER
except ImportError:  # a PyYAML built without libyaml
    FAST_PARSER = PurePythonParser  # type: ignore[misc,assignment]

# The values a file may write (an alias counting as one): reading takes about 10 s a million on a
# slow machine. A file of 10,000 claims writes about 200,000, and MAX_FILE_BYTES holds fewer than
# 700,000 written as claims and cases are: only a file of bare values (`[1,1,1,...]`) reaches this.
MAX_WRITTEN_VALUES = 1_000_000
# What aliases may add to the values written, once expanded: as many as are written, or this many in
# a small file. Aliases are what can expand exponentially (nine lines of nine aliases each make a
# billion values), so what they add is bounded against what is written, not by a bound that a large
# file of plain values would reach.
MAX_ALIAS_VALUES = 100_000

Location = tuple[str | int, ...]

# What reading one file may cost besides its size (MAX_FILE_BYTES): how deep its lists and mappings
# nest (PyYAML's composer recurses once a level) and, with the bounds above, how many values it
# writes and its aliases add once expanded.
MAX_KEY_LENGTH = MAX_TEXT_LENGTH
MAX_YAML_DEPTH = 64


@dataclass
class _YamlReader:
    """Turns composed YAML nodes into plain values, remembering the line of every value."""

    lines: dict[Location, int]
    written: int  # the values the text writes, an alias counting as one
    spent: int = 0

    def value(self, node: yaml.Node, where: Location, depth: int = 0) -> Any:
        line = node.start_mark.line + 1
        self._spend(line)
        if depth > MAX_YAML_DEPTH:  # an alias can nest what the text does not
            raise InputError(
                f"line {line}: lists and mappings nest deeper than {MAX_YAML_DEPTH} levels once aliases are expanded"
            )
        self.lines.setdefault(where, line)
        if isinstance(node, yaml.MappingNode):
            self._plain(node, "map", line)
            return self._mapping(node, where, depth)
        if isinstance(node, yaml.SequenceNode):
            self._plain(node, "seq", line)
            return [self.value(item, (*where, i), depth + 1) for i, item in enumerate(node.value)]
        if node.tag == PLAIN_TAG:
            return plain_scalar(node.value, line)
        if node.tag == STR_TAG:
            return node.value
        raise InputError(f"line {line}: the tag {node.tag} is not allowed")

    def _spend(self, line: int) -> None:
        """Count one value read; refuse once aliases have added more than the file writes (at least
        MAX_ALIAS_VALUES). A file without aliases reads each value it writes once."""
        self.spent += 1
        if self.spent > self.written + max(MAX_ALIAS_VALUES, self.written):
            raise InputError(
                f"line {line}: aliases expand the file's {self.written} values to more than {self.spent - 1}"
                f" (they may add {max(MAX_ALIAS_VALUES, self.written)} at most); refusing to read on"
            )

    @staticmethod
    def _plain(node: yaml.Node, kind: str, line: int) -> None:
        """Only plain mappings and lists: a tag such as !!python/object is refused, not ignored."""
        if node.tag != f"tag:yaml.org,2002:{kind}":
            raise InputError(f"line {line}: the tag {node.tag} is not allowed")

    def _mapping(self, node: yaml.MappingNode, where: Location, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node)
            if key in result:
                raise InputError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            self.lines[(*where, key)] = key_node.start_mark.line + 1
            result[key] = self.value(value_node, (*where, key), depth + 1)
        return result

    def _key(self, node: yaml.Node) -> str:
        """A key is text as written: `010:` is the key '010'."""
        line = node.start_mark.line + 1
        self._spend(line)
        if not isinstance(node, yaml.ScalarNode):
            raise InputError(f"line {line}: a key must be plain text")
        if node.tag not in (PLAIN_TAG, STR_TAG):
            raise InputError(f"line {line}: the tag {node.tag} is not allowed")
        if len(node.value) > MAX_KEY_LENGTH:
            raise InputError(
                f"line {line}: a key of {len(node.value)} characters is longer than any ncuverify reads"
            )
        if node.value == "<<" and node.tag == PLAIN_TAG:
            raise InputError(
                f"line {line}: '<<' merges mappings in YAML 1.1 only, and ncuverify reads YAML 1.2: write the keys out"
            )
        return str(node.value)


class _Composing(Composer, Resolver):
    """PyYAML's composer over a parser's events, used only to compose nodes: the reader types plain
    scalars (YAML 1.2), and nesting and size are bounded here, while composing, before the composer's
    recursion can overflow. Nothing is constructed."""

    def __init__(self) -> None:
        Composer.__init__(self)
        Resolver.__init__(self)
        self.depth = 0
        self.nodes = 0

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: Any) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            return PLAIN_TAG
        resolved: str = super().resolve(kind, value, implicit)
        return resolved

    def _composed(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        node = super().compose_node(parent, index)
        assert node is not None  # called only where an event starts a node
        return node

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        self.nodes += 1  # an alias counts once here: what it expands to is bounded by the reader
        if self.nodes > MAX_WRITTEN_VALUES:
            raise InputError(
                f"line {self._line()}: more than {MAX_WRITTEN_VALUES} values; refusing to read on"
            )
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):  # type: ignore[attr-defined]
            return self._composed(parent, index)
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise InputError(
                f"line {self._line()}: lists and mappings nest deeper than {MAX_YAML_DEPTH} levels"
            )
        try:
            return self._composed(parent, index)
        finally:
            self.depth -= 1

    def _line(self) -> int:
        """The line of the node that starts here."""
        event = self.peek_event()  # type: ignore[attr-defined]  # the parser's, beside it in the loader
        assert event is not None and event.start_mark is not None  # called only where an event starts a node
        return int(event.start_mark.line) + 1


class _FastLoader(_Composing, FAST_PARSER):
    def __init__(self, text: str) -> None:
        FAST_PARSER.__init__(self, text)
        _Composing.__init__(self)


class _PureLoader(_Composing, PurePythonParser):
    def __init__(self, text: str) -> None:
        PurePythonParser.__init__(self, text)
        _Composing.__init__(self)


LOADERS: dict[str, type[_FastLoader] | type[_PureLoader]] = {"libyaml": _FastLoader, "python": _PureLoader}


def read_yaml(text: str, parser: str = "libyaml") -> tuple[Any, dict[Location, int]]:
    """Parse YAML safely into plain values and a map from each value's location to its line (parser:
    a key of LOADERS; both read the same, libyaml's faster)."""
    loader = None
    try:
        loader = LOADERS[parser](text)  # a bad character raises here
        root = loader.get_single_node()
        written = loader.nodes
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise InputError(f"{where}not valid YAML: {error.problem}") from None
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML: {' '.join(str(error).split())}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        raise InputError("the file is empty")
    lines: dict[Location, int] = {}
    return _YamlReader(lines, written).value(root, ()), lines
