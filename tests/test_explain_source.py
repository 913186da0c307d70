"""The source page: each launch's CUDA source lines, each in its own file."""

import math

from explain_pages import SYNTHETIC_SOURCE

from ncuverify import explain as ex


def test_a_launch_spanning_two_files_keeps_each_line_in_its_file():
    gather, scatter = ex.parse_source(SYNTHETIC_SOURCE)
    assert gather.kernel == "gather"
    assert [(row.file, row.line) for row in gather.lines] == [
        ("/src/gather.cu", 10),
        ("/src/gather.cu", 11),
        ("/usr/include/helpers.cuh", 5),
        ("/usr/include/helpers.cuh", 6),
    ]
    assert gather.lines[1].metrics["L2 Theoretical Sectors Global Excessive"] == 3_670_016
    assert gather.lines[3].text == 'printf("%d","x");'  # its `","` is text, not a separator
    assert math.isnan(gather.lines[3].metrics["L2 Theoretical Sectors Global Excessive"])  # "n/a"
    assert [(row.file, row.line) for row in scatter.lines] == [("/src/gather.cu", 20)]
