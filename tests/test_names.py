"""The names every stage shares: metric kinds told by their prefix, the static facts' names, and C++
function names read back from demangled signatures."""

import pytest

from ncuverify.build.static import STATIC_METRICS
from ncuverify.names import (
    STATIC_FACTS,
    TIME_METRIC,
    function_name,
    is_patched,
    is_static,
    is_time,
    same_name,
)


def test_static_names():
    assert is_static("static__registers_per_thread")
    assert is_static("sass:LDG")
    assert not is_static("launch__registers_per_thread")


def test_ncu_metric_kinds():
    assert is_time(TIME_METRIC) and is_time("gpu__time_duration.max")
    assert not is_time("dram__bytes_read.sum")
    assert is_patched("sass__inst_executed") and is_patched("smsp__sass_inst_executed_op_global_ld.sum")
    assert not is_patched("sass:LDG") and not is_patched("smsp__inst_executed.sum")


def test_the_build_reads_every_static_fact_the_spec_knows_in_order():
    assert tuple(STATIC_METRICS) == STATIC_FACTS


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
