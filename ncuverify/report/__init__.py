"""Stage 5: show the verdicts: each file's claims and a summary line (`files`), built from the claims'
table rows and reasons (`claims`); the static-facts and baseline tables (`tables`); the claims audit
(`audit`); `ncuverify build`'s listing of kernels (`listing`), printed by `kernels`. Untrusted text
reaches rich only through `text`."""

from ncuverify.judge.claims import format_number
from ncuverify.report.claims import VERDICT_STYLE, claims_table, document_column, kernel_lines, reason_lines
from ncuverify.report.files import print_file, print_files, print_run, summary
from ncuverify.report.tables import print_against_baseline, print_build, print_changes, print_moves
from ncuverify.report.text import block_text, line_text, print_prose

__all__ = [
    "VERDICT_STYLE",
    "block_text",
    "claims_table",
    "document_column",
    "format_number",
    "kernel_lines",
    "line_text",
    "print_against_baseline",
    "print_build",
    "print_changes",
    "print_file",
    "print_files",
    "print_moves",
    "print_prose",
    "print_run",
    "reason_lines",
    "summary",
]
