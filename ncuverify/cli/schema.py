"""`ncuverify schema`: the JSON Schema of expectation files, printed or written to a file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ncuverify.cli.outputs import write_output, write_text
from ncuverify.cli.paths import check_outputs
from ncuverify.cli.terminal import console
from ncuverify.spec import json_schema


def schema(
    output: Annotated[Path | None, typer.Argument(help="write it here instead of printing it")] = None,
) -> None:
    """The JSON Schema of expectation files (for editors that validate YAML against a schema)."""
    if output is not None:
        check_outputs({"": output}, [])
    text = json.dumps(json_schema(), indent=1, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        raise typer.Exit(int(write_output(console(), "", output, lambda path: write_text(path, text))))
