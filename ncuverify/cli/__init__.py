"""The command line: parses options and calls the pipeline.

Whatever goes wrong ends in one line and the documented exit code, never a traceback: wrong input
(exit 2) names the file or option at fault; a bug in ncuverify (exit 4) names a new file that holds
its traceback. Output files and folders are checked before anything is compiled, so that a long run
is never lost to a path that cannot be written; and each output is written on its own, before the
terminal report, so that one that fails loses none of the others.
"""

from ncuverify.cli.root import app, main

__all__ = ["app", "main"]
