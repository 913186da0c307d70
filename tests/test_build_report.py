"""What `build PATH` prints: one line per kernel where the names fit beside the facts, else each
name whole on a line of its own above its facts; never past the console's width, never a name cut."""

from rich.console import Console

from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.report.kernels import print_kernels


def _kernels(name: str, count: int) -> list[ListedKernel]:
    return [
        ListedKernel(
            f"{name}{index}",
            f"s{index}",
            "sig",
            "sm_90",
            "lib.so",
            {"static__registers_per_thread": 12345},
            {},
        )
        for index in range(count)
    ]


def test_long_names_stand_whole_above_their_facts_at_80_columns():
    long_name = "very_long_namespace::inner::a_kernel_with_a_long_name<123456, float, 7>"
    console = Console(width=80, record=True)
    print_kernels(console, "lib.so", _kernels(long_name, 300))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in "".join(lines)
    names = [line for line in lines if line.startswith(long_name)]
    assert names == [f"{long_name}{index}" for index in range(300)]
    facts = [line for line in lines if "sm_90" in line]
    assert len(facts) == 300 and all("12,345" in line for line in facts)
    assert lines[0].startswith("lib.so: 300 kernels")


def test_short_names_share_a_line_with_their_facts():
    console = Console(width=80, record=True)
    print_kernels(console, "lib.so", _kernels("scale", 3))
    lines = console.export_text().splitlines()
    assert [line.split()[:3] for line in lines[2:]] == [[f"scale{i}", "sm_90", "12,345"] for i in range(3)]
    assert max(len(line) for line in lines) <= 80
