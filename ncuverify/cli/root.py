"""The `ncuverify` command: its typer app, whose root command turns what a command raises into one
line and its exit code, the commands registered on it, and `main`, the entry point."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ncuverify import __version__
from ncuverify.cli import audit, baseline, build, cache, check, doctor, init, merge, schema
from ncuverify.cli.terminal import console, say_internal_error
from ncuverify.errors import ExitCode, InputError
from ncuverify.report import block_text


class _Guarded(TyperGroup):
    """The root command: what a command raises ends as one line and its exit code, never a traceback."""

    # typer hands every command its own Context, a subclass of the one the base class names
    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, BrokenPipeError):
            raise  # typer's own ends (usage errors exit 2), and a reader of the output that went away
        except InputError as error:
            console().print(block_text(error, "bold red"), soft_wrap=True)
            raise typer.Exit(int(ExitCode.BAD_INPUT)) from None
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(int(ExitCode.NOT_MEASURABLE)) from None
        except Exception as error:
            say_internal_error(error)
            raise typer.Exit(int(ExitCode.INTERNAL_ERROR)) from None


app = typer.Typer(
    rich_markup_mode=None,
    cls=_Guarded,
    add_completion=False,
    no_args_is_help=True,
    # Typer's own traceback shows local variables, which may hold secrets; _Guarded shows none.
    pretty_exceptions_enable=False,
    help="Check quantitative claims about CUDA kernels against Nsight Compute measurements.",
    context_settings={"help_option_names": ["-h", "--help"]},  # every command takes -h too
)


def _version(asked: bool) -> None:
    if asked:
        print(f"ncuverify {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="print ncuverify's version and exit"
        ),
    ] = False,
) -> None:
    """ncuverify: claims about CUDA kernels, checked on the hardware."""


# In the order `ncuverify --help` lists them.
app.command(short_help="build, profile and judge the claims of the given files")(check.check)
app.add_typer(
    baseline.baseline_app, name="baseline", short_help="save a run's measured values, to compare later runs"
)
app.command(short_help="one row per documented claim: its figure against today's")(audit.audit)
app.command(short_help="compile kernels and show their static facts")(build.build)
app.add_typer(cache.cache_app, name="cache", short_help="the compile cache: where it is, and cleaning it")
app.command(short_help="join the JSON results of the shards of a run")(merge.merge)
app.command(short_help="check files without a GPU: schema, names, expressions")(build.lint)
app.command(short_help="write a starter expectation file for a source's kernels")(init.init)
app.command("doctor", short_help="say what this machine offers a check")(doctor.doctor_command)
app.command(short_help="the JSON Schema of expectation files")(schema.schema)


def main() -> None:
    """The `ncuverify` command. What escapes the commands' own handling (see _Guarded) still ends in
    one line: exit 3 on Ctrl-C, 4 on a bug."""
    try:
        app()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(int(ExitCode.NOT_MEASURABLE))
    except Exception as error:
        say_internal_error(error)
        sys.exit(int(ExitCode.INTERNAL_ERROR))
