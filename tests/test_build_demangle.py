"""Demangled names: the C++ runtime's demangler in a child process."""

from ncuverify.build import demangle as demangle_module
from ncuverify.build.demangle import MAX_SYMBOL_CHARS, demangle


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
