"""`ncuverify doctor`: what this machine offers a check, each finding with its remedy."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from ncuverify import doctor
from ncuverify.cli.params import Ncu
from ncuverify.cli.terminal import console
from ncuverify.report.text import line_text, wrapped
from ncuverify.text import one_line

INDENT = 19  # under a finding's detail: its state (8 columns) and what it is about (11)
STYLE = {doctor.State.OK: "green", doctor.State.MISSING: "bold red", doctor.State.NOTE: "yellow"}


def doctor_command(
    ncu: Ncu = "ncu",
    trial: Annotated[
        bool, typer.Option(help="profile one kernel for one counter: the proof that counters can be read")
    ] = True,
) -> None:
    """Say what this machine offers a check: the GPUs and driver, Nsight Compute, whether the counters
    can be read, MIG, and the compile toolchain (NVRTC, nvcc, cuobjdump, nvdisasm), each with its
    remedy; then profile one kernel as a trial.

    Exit codes: 0 everything `check` needs to profile is here; 3 something it needs is not.
    """
    findings = doctor.examine(ncu, trial)
    shown_on = console()
    for finding in findings:
        width = shown_on.width - INDENT
        first, *rest = wrapped(one_line(finding.detail), width)
        rest += wrapped(one_line(f"remedy: {finding.remedy}"), width) if finding.remedy else []
        state = Text(f"{finding.state.value:<8}", style=STYLE[finding.state])
        shown_on.print(Text.assemble(state, one_line(f"{finding.what:<10} "), first), soft_wrap=True)
        for line in rest:
            shown_on.print(Text(" " * INDENT + line), soft_wrap=True)
    missing = doctor.missing(findings)
    said = (
        f"doctor: check cannot profile here ({', '.join(missing)})"
        if missing
        else "doctor: check can profile here"
    )
    shown_on.print(line_text(said, "bold"), soft_wrap=True)
    raise typer.Exit(int(doctor.exit_code(findings)))
