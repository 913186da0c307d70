"""`ncuverify doctor`: what this machine offers a check, each finding with its remedy."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from ncuverify import doctor
from ncuverify.cli.params import Ncu
from ncuverify.cli.terminal import console
from ncuverify.report.text import print_prose, wrapped
from ncuverify.text import one_line

INDENT = 19  # under a finding's detail: its state (8 columns) and what it is about (11)
UNDER = 2  # a detail with a word too long for the room beside them: under them
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
        state = Text(f"{finding.state.value:<8}", style=STYLE[finding.state])
        paragraphs = [
            one_line(finding.detail),
            *([f"remedy: {one_line(finding.remedy)}"] if finding.remedy else []),
        ]
        words = " ".join(paragraphs).split(" ")
        beside = max(len(word) for word in words) <= shown_on.width - INDENT
        indent = INDENT if beside else UNDER  # a word too long for the room beside: under, less indented
        lines = [line for text in paragraphs for line in wrapped(text, shown_on.width - indent)]
        if beside:
            first = lines.pop(0)
            shown_on.print(Text.assemble(state, one_line(f"{finding.what:<10} "), first), soft_wrap=True)
        else:
            shown_on.print(Text.assemble(state, one_line(finding.what)), soft_wrap=True)
        for line in lines:
            shown_on.print(Text(" " * indent + line), soft_wrap=True)
    missing = doctor.missing(findings)
    said = (
        f"doctor: check cannot profile here ({', '.join(missing)})"
        if missing
        else "doctor: check can profile here"
    )
    print_prose(shown_on, said, "bold")
    raise typer.Exit(int(doctor.exit_code(findings)))
