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
        ("__half", 2, None),
        ("Big", 16, None),
        ("bool", 1, None),
    ],
)
def test_other_types_get_a_placeholder_of_their_size_to_replace(cpp_type, size, argument):
    made = placeholder(cpp_type, size)
    assert (made.argument, made.replace) == (argument, True)


def test_without_a_type_the_size_decides():
    assert placeholder(None, 8).argument == "{buffer: float32, count: 32}"
    assert placeholder(None, 4).argument == "{uint32: 0}"
    assert placeholder(None, 2).argument is None
    assert placeholder(None, 8).parameter == "8 bytes" and placeholder(None, 8).replace
