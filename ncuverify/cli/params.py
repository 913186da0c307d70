"""The arguments and options that several commands share, as typer declares them, with the checks
typer runs on their values as it parses them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from ncuverify.build.whole_source import COMPILERS
from ncuverify.options import seconds_problem
from ncuverify.spec import ARCH_PATTERN
from ncuverify.text import one_line


def seconds(value: float) -> float:
    """A time limit: finite, above 0, at most a week (nan and inf would never stop anything)."""
    problem = seconds_problem(value)
    if problem is not None:
        raise typer.BadParameter(problem)
    return value


def arch(value: str | None) -> str | None:
    """A build target, as an expectation file's `arch` is written (sm_90, sm_90a, compute_80)."""
    if value is not None and not re.fullmatch(ARCH_PATTERN, value, re.ASCII):
        raise typer.BadParameter(f"{one_line(repr(value))}: write a build target such as sm_90 or sm_90a")
    return value


def compiler(value: str) -> str:
    """What compiles a .cu file: one of COMPILERS."""
    if value not in COMPILERS:
        raise typer.BadParameter(f"{one_line(repr(value))}: give one of {', '.join(COMPILERS)}")
    return value


Files = Annotated[
    list[Path], typer.Argument(help="expectation files (YAML), or folders of them", show_default=False)
]
Arch = Annotated[
    str | None,
    typer.Option(
        help="build for this architecture, e.g. sm_90 (default: the GPU's, else the file's)", callback=arch
    ),
]
SourceCompiler = Annotated[
    str,
    typer.Option(
        "--compiler",
        callback=compiler,
        help="what compiles a .cu file: nvrtc, nvcc, or auto (NVRTC, else nvcc where NVRTC refuses the"
        " file: host code such as main(), <<<...>>> launches or host headers)",
    ),
]
Ncu = Annotated[str, typer.Option(help="the ncu executable")]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache", help="compile every kernel, not through the compile cache (ncuverify cache --help)"
    ),
]
FromProfile = Annotated[
    Path | None, typer.Option(help="judge the profiles recorded in DIR instead of profiling: no GPU needed")
]
AllowInclude = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-include",
        help="a folder outside the project that kernels may include from (repeatable)",
        show_default=False,
    ),
]
Binary = Annotated[
    list[str] | None,
    typer.Option(
        help="KERNEL=PATH: judge this artifact for the file's `binary:` kernel KERNEL (a build's output"
        " wherever its build folder is; still inside the project or an --allow-include folder)",
        show_default=False,
    ),
]
CudaHome = Annotated[
    Path | None,
    typer.Option(
        "--cuda-home",
        metavar="DIR",
        help="the CUDA toolkit (the folder holding bin/nvcc) whose nvcc and headers compile"
        " `compiler: nvcc` kernels; before the file's `toolkit:`, CUDA_HOME, CUDA_PATH and the CUDA wheels",
        show_default=False,
    ),
]
CompileTimeout = Annotated[
    float, typer.Option(help="stop compiling one kernel source after this many seconds", callback=seconds)
]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="show every claim, with the documents' figures and notes (by default: the failures alone)",
    ),
]
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="print the run's summary alone (and the files that could not be checked)"
    ),
]
JunitXml = Annotated[Path | None, typer.Option(help="write one JUnit test case per claim")]
Html = Annotated[
    Path | None,
    typer.Option("--html", help="write a self-contained HTML report with pictures (opens from disk)"),
]
