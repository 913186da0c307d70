"""What `build PATH` prints: one line per kernel within 80 columns, long names cut with an ellipsis."""

from rich.console import Console

from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.report.kernels import print_kernels


def test_hundreds_of_kernels_fit_80_columns_one_line_each():
    long_name = "very_long_namespace::inner::a_kernel_with_a_long_name<123456, float, 7>"
    kernels = [
        ListedKernel(
            f"{long_name}{index}",
            f"s{index}",
            "sig",
            "sm_90",
            "lib.so",
            {"static__registers_per_thread": 12345},
            {},
        )
        for index in range(300)
    ]
    console = Console(width=80, record=True)
    print_kernels(console, "lib.so", kernels)
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if "sm_90" in line]
    assert len(rows) == 300 and all("…" in row and "12,345" in row for row in rows)
    assert lines[0].startswith("lib.so: 300 kernels")
