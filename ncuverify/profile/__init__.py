"""Stage 3: profile every case under Nsight Compute and turn its CSV into measurements.

An ncu process runs the runner (`python -m ncuverify.runner`), which launches each case of its plan
once; which cases share a process is `session`'s and `schedule`'s concern. ncu writes its report to a
log file of its own (`--log-file`), so nothing the runner prints can reach the parser.
"""

from ncuverify.profile.cases import measurements
from ncuverify.profile.command import PROCESSES_PER_GPU, NcuOptions, ncu_command
from ncuverify.profile.diagnose import diagnose
from ncuverify.profile.run import Run, run_ncu
from ncuverify.profile.table import parse_csv

__all__ = [
    "PROCESSES_PER_GPU",
    "NcuOptions",
    "Run",
    "diagnose",
    "measurements",
    "ncu_command",
    "parse_csv",
    "run_ncu",
]
