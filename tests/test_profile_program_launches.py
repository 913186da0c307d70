"""A shared ncu process's report split back per program case, on a real capture: PyTorch's strided
copy in the NVTX range "strided" (examples/programs/torch_strided.py on an H200, ncu --nvtx, the
details page: tests/fixtures/program_explain, which the explain tests read too)."""

import pandas as pd
import pytest
from conftest import FIXTURES

from ncuverify.errors import EnvironmentProblem
from ncuverify.ncu.pages import Quoting, read_page
from ncuverify.profile.program_launches import in_ranges, push_pop_range, shared_launches
from ncuverify.profile.table import DEFAULT_DOMAIN, launch_ranges
from ncuverify.spec.programs import ProgramCase

CAPTURE = (FIXTURES / "program_explain" / "explain.details.csv").read_text()


def launches_of(text: str) -> pd.DataFrame:
    """Each launch of the capture and its kernel (the details page's rules make it no metric table)."""
    header, *rows = read_page(text, Quoting.TABLE, header='"ID"')
    at, kernel = header.index("ID"), header.index("Kernel Name")
    return pd.DataFrame(sorted({(int(row[at]), row[kernel]) for row in rows}), columns=["launch", "kernel"])


def case(kernel: str, *ranges: str, count: int = 1) -> ProgramCase:
    return ProgramCase.model_validate(
        {
            "program": {"command": ["python3", "torch_strided.py"]},
            "kernel": kernel,
            "nvtx_include": list(ranges),
            "launch_count": count,
        }
    )


def test_the_ranges_of_each_launch_are_read_from_ncu_s_nvtx_column():
    assert launch_ranges(CAPTURE) == {0: ((DEFAULT_DOMAIN, "strided"),)}


def test_a_report_without_the_nvtx_column_has_no_ranges():
    assert launch_ranges((FIXTURES / "sample" / "ncu.log").read_text()) is None


def test_a_damaged_nvtx_cell_is_refused():
    damaged = CAPTURE.replace('""<default domain>:strided:none', '""<default domain>:strided', 1)
    with pytest.raises(EnvironmentProblem, match="NVTX range"):
        launch_ranges(damaged)


def test_each_case_gets_the_launches_its_own_range_and_kernel_select():
    table, ranges = launches_of(CAPTURE), launch_ranges(CAPTURE)
    cases = {"f::strided": case("elementwise", "strided/"), "f::any": case("elementwise_kernel<128")}
    assert shared_launches(table, ranges, cases) == {"f::strided": [0], "f::any": [0]}


@pytest.mark.parametrize(
    ("cases", "why"),
    [
        ({"f::add": case("elementwise", "add/")}, "which no case selects"),
        ({"f::strided": case("elementwise", "strided/", count=2)}, "has 1 of its 2 launches"),
        ({"f::copy": case("^copy", "strided/")}, "which no case selects"),
    ],
)
def test_a_report_that_would_not_give_a_case_what_it_gets_alone_is_not_split(cases, why):
    assert why in str(shared_launches(launches_of(CAPTURE), launch_ranges(CAPTURE), cases))


def test_nested_ranges_are_left_to_a_process_of_the_case_s_own():
    """The capture with a second range around the first, written as ncu writes one (each range quoted,
    outermost first): whichever range ncu's rule means, the case runs alone."""
    nested = CAPTURE.replace(
        '""<default domain>:strided:none:none:none:none:none:none"" ',
        '""<default domain>:outer:none:none:none:none:none:none"" ""<default domain>:strided:none:none:none:none:none:none"" ',
    )
    ranges = launch_ranges(nested)
    assert ranges == {0: ((DEFAULT_DOMAIN, "outer"), (DEFAULT_DOMAIN, "strided"))}
    found = shared_launches(launches_of(nested), ranges, {"f::s": case("elementwise", "strided/")})
    assert found == "launch 0 lies in nested NVTX ranges"


@pytest.mark.parametrize(
    ("rule", "name"),
    [("add/", "add"), ("add", None), ("A@add/", None), ("a/b/", None), ("*/", None), ("regex:a/", None)],
)
def test_only_a_push_pop_range_of_the_default_domain_is_split_back_by_ncuverify(rule, name):
    assert push_pop_range(rule) == name


def test_a_case_without_nvtx_rules_selects_launches_in_any_range():
    assert in_ranges(case("x"), ((DEFAULT_DOMAIN, "anything"),))
    assert not in_ranges(case("x", "add/"), (("other domain", "add"),))


def test_a_launch_outside_every_range_belongs_to_no_case_with_a_range():
    outside = CAPTURE.replace('"1144  ""<default domain>:strided:none:none:none:none:none:none"" "', '""')
    ranges = launch_ranges(outside)
    assert ranges == {0: ()}
    found = shared_launches(launches_of(outside), ranges, {"f::s": case("elementwise", "strided/")})
    assert "which no case selects" in str(found)
