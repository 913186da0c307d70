"""The names every stage shares: metric kinds told by their prefix, the static facts' names, and C++
function names read back from demangled signatures."""

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ncuverify.build.static import STATIC_METRICS
from ncuverify.names import (
    STATIC_FACTS,
    TIME_METRIC,
    QualifiedCase,
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


# --- a case's identity ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "identity"),
    [
        ("expectations/x.yaml::add", QualifiedCase("expectations/x.yaml", "add")),
        ("a::b.yaml::add", QualifiedCase("a::b.yaml", "add")),  # a file's key may hold `::`
        ("x.yaml::add (repeats)", QualifiedCase("x.yaml", "add", repeats=True)),
        ("x.yaml::reduce#2", QualifiedCase("x.yaml", "reduce", launch=2)),
        ("x.yaml::reduce#2 (repeats)", QualifiedCase("x.yaml", "reduce", launch=2, repeats=True)),
        ("add#12", QualifiedCase(None, "add", launch=12)),
        ("a#b", QualifiedCase(None, "a#b")),  # a `#` that numbers nothing is the name's
        ("a#02", QualifiedCase(None, "a#02")),
        ("time__n_4096", QualifiedCase(None, "time__n_4096")),
        ("gemms[axpy_gemm<64>]", QualifiedCase(None, "gemms", set_kernel="axpy_gemm<64>")),
        ("gemms[ns::f(float*)]", QualifiedCase(None, "gemms", set_kernel="ns::f(float*)")),
        ("gemms[a]]", QualifiedCase(None, "gemms", set_kernel="a]")),  # a label holding `]`
        ("::add", QualifiedCase("", "add")),
    ],
)
def test_case_identity_round_trips(text: str, identity: QualifiedCase) -> None:
    assert QualifiedCase.parse(text) == identity
    assert str(identity) == text


def test_case_identity_names_the_case_in_its_file() -> None:
    step = QualifiedCase.parse("a::b.yaml::reduce#2 (repeats)")
    assert step.name == "reduce#2"
    assert step.without_repeats() == QualifiedCase("a::b.yaml", "reduce", launch=2)
    assert step.without_launch().without_repeats().in_file(None) == QualifiedCase(None, "reduce")
    assert QualifiedCase.parse("gemms[k]").name == "gemms[k]"


@pytest.mark.parametrize(
    "text", ["", "::", "x.yaml::", "x.yaml::k[l]", "x.yaml::a]", ":x", "k[l] (repeats)", " (repeats)"]
)
def test_case_identity_refuses_what_is_none(text: str) -> None:
    with pytest.raises(ValueError, match="not a case's identity"):
        QualifiedCase.parse(text)


@pytest.mark.parametrize(
    "identity",
    [
        lambda: QualifiedCase("x", "a", launch=0),
        lambda: QualifiedCase("x", "a#2"),  # written so, it would read back as a launch
        lambda: QualifiedCase("x", "a (repeats)"),
        lambda: QualifiedCase("x", "a::b"),
        lambda: QualifiedCase("x", "gemms", set_kernel="k"),  # a set's kernel takes no file
        lambda: QualifiedCase(None, "gemms", set_kernel=""),
        lambda: QualifiedCase(None, "1x", set_kernel="k"),
    ],
)
def test_case_identity_refuses_what_str_could_not_write(identity: Callable[[], QualifiedCase]) -> None:
    with pytest.raises(ValueError, match="not a case's identity"):
        identity()


_NAMES = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="[]"), min_size=1, max_size=12)
_KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@st.composite
def _identities(draw: st.DrawFn) -> QualifiedCase | None:
    """An identity of either grammar; None where the fields drawn make none (refused, above)."""
    try:
        if draw(st.booleans()):
            return QualifiedCase(None, draw(_KEYS), set_kernel=draw(st.text(min_size=1, max_size=12)))
        file = draw(st.none() | st.text(max_size=12))
        launch = draw(st.none() | st.integers(1, 10**6))
        return QualifiedCase(file, draw(_NAMES), launch, repeats=draw(st.booleans()))
    except ValueError:
        return None


@given(_identities().filter(lambda identity: identity is not None))
def test_case_identity_parses_back_what_str_writes(identity: QualifiedCase) -> None:
    assert QualifiedCase.parse(str(identity)) == identity
