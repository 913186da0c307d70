"""Demangled names: the C++ runtime's demangler in a child process, and function names read back."""

import pytest

from ncuverify.build import demangle as demangle_module
from ncuverify.build.demangle import MAX_SYMBOL_CHARS, demangle, function_name, same_name


def test_symbols_demangle_and_others_stay_as_they_are():
    found = demangle(["_Z6strideIfEvPT_i", "_ZN2ns4copyEPf", "scale", "_Zgarbage"])
    assert found == {
        "_Z6strideIfEvPT_i": "void stride<float>(float*, int)",
        "_ZN2ns4copyEPf": "ns::copy(float*)",
        "scale": "scale",  # extern "C": no C++ name to demangle
        "_Zgarbage": "_Zgarbage",  # not a mangling: left as it is
    }


def test_hostile_names_are_not_handed_to_the_demangler():
    long_name = "_Z" + "P" * MAX_SYMBOL_CHARS + "i"
    found = demangle([long_name, "_Z1f\nv", "_Z1f\u00e9v"])
    assert found == {long_name: long_name, "_Z1f\nv": "_Z1f\nv", "_Z1f\u00e9v": "_Z1f\u00e9v"}


def test_a_demangler_past_its_limit_leaves_the_names_mangled(monkeypatch):
    monkeypatch.setattr(demangle_module, "_CHILD", "import time; time.sleep(60)")
    assert demangle(["_Z1fv"], timeout_s=0.5) == {"_Z1fv": "_Z1fv"}


def test_a_demangler_that_answers_nonsense_leaves_the_names_mangled(monkeypatch):
    monkeypatch.setattr(demangle_module, "_CHILD", 'print(\'{"_Z1fv": 3, "_Z1gv": "g()", "x": "y"}\')')
    assert demangle(["_Z1fv", "_Z1gv"]) == {"_Z1fv": "_Z1fv", "_Z1gv": "g()"}


@pytest.mark.parametrize(
    ("signature", "name"),
    [
        ("void stride<float>(float*, int)", "stride<float>"),
        ("transposeNaive(float*, float const*)", "transposeNaive"),
        ("ns::copy(float*)", "ns::copy"),
        ("(anonymous namespace)::k()", "(anonymous namespace)::k"),
        ("void f<(anonymous namespace)::T, 2>(int (*) [4])", "f<(anonymous namespace)::T, 2>"),
        ("std::enable_if<true, void>::type g<int>(int)", "g<int>"),
        ("scale", "scale"),
        (")(", ")("),
    ],
)
def test_function_names_come_from_signatures(signature, name):
    assert function_name(signature) == name


def test_names_compare_spacing_aside():
    assert same_name("f<float,2>", "f<float, 2>")
    assert not same_name("f<float,3>", "f<float, 2>")
