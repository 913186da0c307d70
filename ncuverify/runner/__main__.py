"""`python -m ncuverify.runner PLAN.json`: run the plan; exit 2 on a wrong command line, 1 where the
plan could not be run at all (the traceback on stderr)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from ncuverify.runner.plan import Plan
from ncuverify.runner.run import run_plan


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ncuverify.runner PLAN.json", file=sys.stderr)
        return 2
    try:
        run_plan(Plan.read(Path(argv[0])))
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
