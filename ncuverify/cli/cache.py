"""`ncuverify cache clean` and `ncuverify cache where`: the compile cache's folder."""

from __future__ import annotations

import typer

from ncuverify.build import cache as compile_cache
from ncuverify.build.cache import CompileCache
from ncuverify.cli.terminal import console
from ncuverify.report import line_text
from ncuverify.text import printable

cache_app = typer.Typer(
    rich_markup_mode=None,
    no_args_is_help=True,
    help="The compile cache: kernels compiled once, until their source, headers, options or NVRTC change.",
)


@cache_app.command("clean", short_help="remove every compiled kernel and remembered pass")
def cache_clean() -> None:
    """Remove every compiled kernel, and the replay passes remembered, from the cache folder
    ($NCUVERIFY_CACHE_DIR, else ~/.cache/ncuverify). A folder that ncuverify did not make is left alone
    (exit 2)."""
    folder = compile_cache.default_folder()
    removed = CompileCache(folder).clean()  # InputError for a folder without ncuverify's marker
    console().print(line_text(f"removed {removed} entries from {folder}"), soft_wrap=True)


@cache_app.command("where", short_help="print the cache's folder")
def cache_where() -> None:
    """Print the cache's folder."""
    print(printable(str(compile_cache.default_folder())))
