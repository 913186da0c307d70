"""Telling the caller what the run is doing, a line at a time, where it asked to be told."""

from __future__ import annotations

from ncuverify.options import CheckOptions


def say(options: CheckOptions, line: str) -> None:
    if options.on_progress is not None:
        options.on_progress(line)
