"""Struct arguments laid out as a C compiler lays them out: every offset, size and alignment compared
with g++'s own offsetof, sizeof and alignof (static_asserts compiled with g++ -fsyntax-only), for
hand-written structs and a few hundred drawn at random."""

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from ncuverify.layout import PointerAt, ScalarAt
from ncuverify.spec.arguments import Argument, StructArg, struct_layout

ARGUMENT = TypeAdapter(Argument)
# What each kind is in C++ on the host: the same size and alignment as on the device.
CXX_TYPES = {
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float16": "Half",
    "bfloat16": "Half",
    "float32": "float",
    "float64": "double",
    "bool": "bool",
}
PRELUDE = "#include <cstddef>\nstruct alignas(2) Half { unsigned short bits; };\n"
VALUES = {"bool": True, "float16": 1.0, "bfloat16": 1.0, "float32": 1.5, "float64": 2.5}


def struct(fields: list, align: int | None = None) -> StructArg:
    given = {"struct": fields} | ({"align": align} if align else {})
    parsed = ARGUMENT.validate_python(given)
    assert isinstance(parsed, StructArg)
    return parsed


def cxx(arg: StructArg, name: str, out: list[str]) -> None:
    """The C++ declaration of the struct (nested ones first, as S_0, S_1...) and its static_asserts."""
    members = []
    for index, field in enumerate(arg.struct):
        member = f"f{index}"
        if isinstance(field, StructArg):
            cxx(field, f"{name}_{index}", out)
            members.append(f"{name}_{index} {member};")
        elif hasattr(field, "pointer"):
            members.append(f"float* {member};")
        elif hasattr(field, "array"):
            members.append(f"{CXX_TYPES[field.array.type]} {member}[{len(field.array.values)}];")
        else:
            members.append(f"{CXX_TYPES[field.kind]} {member};")
    align = f"alignas({arg.align}) " if arg.align else ""
    out.append(f"struct {align}{name} {{ {' '.join(members)} }};")
    layout = struct_layout(arg)
    out.append(f'static_assert(sizeof({name}) == {layout.size}, "{name} size");')
    out.append(f'static_assert(alignof({name}) == {layout.alignment}, "{name} alignment");')
    for index, offset in enumerate(layout.offsets):
        out.append(f'static_assert(offsetof({name}, f{index}) == {offset}, "{name}.f{index}");')


def assert_gxx_agrees(structs: list[StructArg], tmp_path: Path) -> None:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ is not installed: the C layout is compared with its own")
    lines = [PRELUDE]
    for number, arg in enumerate(structs):
        cxx(arg, f"S{number}", lines)
    source = tmp_path / "layouts.cpp"
    source.write_text("\n".join(lines) + "\n")
    completed = subprocess.run(
        [compiler, "-std=c++17", "-fsyntax-only", str(source)], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr[:4000]


HAND_WRITTEN = [
    ([{"int8": 1}, {"float64": 2.0}], None),  # 7 bytes of padding before the double
    ([{"float64": 2.0}, {"int8": 1}], None),  # tail padding to 16
    ([{"bool": True}, {"bfloat16": 1.0}, {"int8": 3}], None),
    ([{"int8": 1}, {"pointer": "x"}, {"int32": 2}], None),
    ([{"int8": 1}, {"array": {"type": "float32", "values": [1, 2, 3]}}, {"int16": 2}], None),
    ([{"int8": 1}, {"struct": [{"int16": 1}, {"int8": 2}]}, {"int8": 3}], None),  # nested, size 4
    ([{"pointer": "x"}, {"float32": 1}, {"float32": 2}, {"float32": 3}, {"float32": 4}], 16),  # 24 -> 32
    ([{"int8": 1}], 64),
    ([{"int8": 1}, {"struct": [{"float32": 1}], "align": 16}, {"int8": 2}], None),  # aligned member
    ([{"uint64": 1}, {"array": {"type": "bool", "values": [True, False, True]}}], None),
]


def test_hand_written_structs_have_g_plus_plus_s_layout(tmp_path: Path):
    assert_gxx_agrees([struct(fields, align) for fields, align in HAND_WRITTEN], tmp_path)


def test_a_struct_s_leaves_are_its_scalars_and_pointers_at_their_offsets():
    layout = struct_layout(struct(*HAND_WRITTEN[5]))
    assert (layout.size, layout.alignment, layout.offsets) == (8, 2, (0, 2, 6))
    assert layout.leaves == (
        ScalarAt(0, "int8", 1),
        ScalarAt(2, "int16", 1),
        ScalarAt(4, "int8", 2),
        ScalarAt(6, "int8", 3),
    )
    pointed = struct_layout(struct(*HAND_WRITTEN[3]))
    assert pointed.leaves[1] == PointerAt(8, "x") and pointed.size == 24


def random_field(rng: random.Random, depth: int) -> dict:
    roll = rng.random()
    kind = rng.choice(sorted(CXX_TYPES))
    if roll < 0.12 and depth < 3:
        return random_struct(rng, depth + 1)
    if roll < 0.22:
        return {"pointer": "x"}
    if roll < 0.35:
        return {"array": {"type": kind, "values": [VALUES.get(kind, 1)] * rng.randint(1, 5)}}
    return {kind: VALUES.get(kind, 1)}


def random_struct(rng: random.Random, depth: int = 0) -> dict:
    drawn = {"struct": [random_field(rng, depth) for _ in range(rng.randint(1, 6))]}
    if depth == 0 and rng.random() < 0.2:
        drawn["align"] = rng.choice([16, 32, 64])  # above any unaligned field's own (8 at most)
    return drawn


def test_random_structs_have_g_plus_plus_s_layout(tmp_path: Path):
    rng = random.Random(20250601)
    structs = [ARGUMENT.validate_python(random_struct(rng)) for _ in range(300)]
    assert_gxx_agrees([s for s in structs if isinstance(s, StructArg)], tmp_path)
