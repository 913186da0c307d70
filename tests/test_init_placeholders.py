"""A launch argument for each kernel parameter, from its demangled C++ type and its size in the cubin."""

import pytest

from ncuverify.init.placeholders import parameter_types, placeholder


def test_parameter_types_are_read_from_the_demangled_signature():
    assert parameter_types("void stride<float>(float*, int, unsigned long)") == [
        "float*",
        "int",
        "unsigned long",
    ]
    assert parameter_types("ns::copy(float*, float const*)") == ["float*", "float const*"]
    assert parameter_types("void tk<3, true>(float (*) [4], void (*)(int, int), Pair<int, 2>)") == [
        "float (*) [4]",
        "void (*)(int, int)",
        "Pair<int, 2>",
    ]
    assert parameter_types("nothing()") == []
    assert parameter_types("scale") is None  # extern "C": the symbol has no types


@pytest.mark.parametrize(
    ("cpp_type", "size", "argument"),
    [
        ("float*", 8, "{buffer: float32, count: 32}"),
        ("float const*", 8, "{buffer: float32, count: 32}"),
        ("double volatile*", 8, "{buffer: float64, count: 32}"),
        ("__half*", 8, "{buffer: float16, count: 32}"),
        ("unsigned char*", 8, "{buffer: uint8, count: 32}"),
        ("int", 4, "{int32: 0}"),
        ("unsigned int", 4, "{uint32: 0}"),
        ("long", 8, "{int64: 0}"),
        ("unsigned long", 8, "{uint64: 0}"),
        ("float", 4, "{float32: 0}"),
        ("double", 8, "{float64: 0}"),
        ("__half", 2, "{float16: 0}"),
        ("__nv_bfloat16", 2, "{bfloat16: 0}"),
        ("__nv_bfloat16 const*", 8, "{buffer: bfloat16, count: 32}"),
        ("short", 2, "{int16: 0}"),
        ("unsigned short", 2, "{uint16: 0}"),
        ("char", 1, "{int8: 0}"),
        ("unsigned char", 1, "{uint8: 0}"),
        ("bool", 1, "{uint8: 0}"),
        ("bool*", 8, "{buffer: uint8, count: 32}"),
    ],
)
def test_known_types_get_their_own_argument(cpp_type, size, argument):
    made = placeholder(cpp_type, size)
    assert (made.argument, made.replace, made.parameter) == (argument, False, cpp_type)


@pytest.mark.parametrize(
    ("cpp_type", "size", "argument"),
    [
        ("Pair", 8, "{uint64: 0}"),  # a struct of 8 bytes
        ("Small", 4, "{uint32: 0}"),
        ("Pair*", 8, "{buffer: uint8, count: 32}"),
        ("void*", 8, "{buffer: uint8, count: 32}"),
        ("float**", 8, "{buffer: uint8, count: 32}"),
        ("float (*) [4]", 8, "{buffer: uint8, count: 32}"),
        ("int", 8, "{uint64: 0}"),  # the cubin's size wins over the type's
        ("__nv_bfloat162", 4, "{uint32: 0}"),  # two bfloat16 in a struct
        ("Flag", 1, "{uint8: 0}"),
        # a struct by value: that many zero bytes, in the widest integers that divide its size
        ("Big", 16, "{struct: [{array: {type: uint64, values: [0, 0]}}]}"),
        ("Odd", 12, "{struct: [{array: {type: uint32, values: [0, 0, 0]}}]}"),
        ("Three", 3, "{struct: [{array: {type: uint8, values: [0, 0, 0]}}]}"),
        ("Huge", 40000, None),  # more than a kernel's parameters may hold
    ],
)
def test_other_types_get_a_placeholder_of_their_size_to_replace(cpp_type, size, argument):
    made = placeholder(cpp_type, size)
    assert (made.argument, made.replace) == (argument, True)


def test_without_a_type_the_size_decides():
    assert placeholder(None, 8).argument == "{buffer: float32, count: 32}"
    assert placeholder(None, 4).argument == "{uint32: 0}"
    assert placeholder(None, 2).argument == "{uint16: 0}"
    assert placeholder(None, 1).argument == "{uint8: 0}"
    assert placeholder(None, 16).argument == "{struct: [{array: {type: uint64, values: [0, 0]}}]}"
    assert placeholder(None, 8).parameter == "8 bytes" and placeholder(None, 8).replace
