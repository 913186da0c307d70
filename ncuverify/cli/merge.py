"""`ncuverify merge`: the JSON results of the shards of a run joined into one report and exit code."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from ncuverify import export, report
from ncuverify.cli.option_groups import Outputs
from ncuverify.cli.outputs import write_results
from ncuverify.cli.params import Html, JunitXml, Verbose
from ncuverify.cli.paths import check_input_files
from ncuverify.cli.terminal import console, print_warnings
from ncuverify.results import worst


def merge(
    results: Annotated[
        list[Path], typer.Argument(help="JSON results (check --json) of the shards", show_default=False)
    ],
    verbose: Verbose = False,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the merged results as JSON")] = None,
    junit_xml: JunitXml = None,
    html: Html = None,
    markdown: Annotated[Path | None, typer.Option(help="write a Markdown summary")] = None,
    markdown_max_bytes: Annotated[
        int | None,
        typer.Option(min=1024, help="cut the --markdown summary to at most N bytes, whole rows at a time"),
    ] = None,
    sarif: Annotated[
        Path | None,
        typer.Option(help="write SARIF 2.1.0 for code scanning: a result per failing claim and error"),
    ] = None,
    partial: Annotated[
        bool,
        typer.Option("--partial", help="merge what is there, saying which shards are missing"),
    ] = False,
) -> None:
    """Join the JSON results of the shards of a run (check --shard K/N --json) into one report and one
    exit code, as if one machine had run them all. Shards that are not one whole run (one missing or
    twice, another suite's) are refused (exit 2) unless --partial is given. Every claim is judged again
    from its shard's measured values: a shard whose verdict they do not give is refused (exit 2), and so
    are shards that measured two versions of a kernel or a case (their digests, or the kernels' static
    facts, differ). Where the expectation files are here as the shards ran them, a claim whose copy in
    a shard is not the file's is refused (exit 2); elsewhere a warning says the copies are unchecked."""
    outputs = Outputs(json_file, junit_xml, markdown, html, sarif)
    outputs.check(results)
    check_input_files([("", path) for path in results])
    shown_on = console()
    shards = [export.read_shard(path) for path in results]
    merged, warnings = export.merge(shards, partial=partial)
    print_warnings(shown_on, warnings)
    outcome = export.merged_outcome(shards, merged)
    code = outcome.code
    identity = _merged_identity(shards, partial)
    written = write_results(shown_on, outcome, outputs.by_option(), identity, markdown_max_bytes)
    shown = report.print_run(shown_on, merged, export.run_seconds(shards), verbose)
    if outcome.against_baseline:
        report.print_against_baseline(shown_on, outcome)
    raise typer.Exit(int(worst(code, written, shown)))


def _merged_identity(shards: Sequence[export.Shard], partial: bool) -> export.ShardOf | None:
    """A merged run is the whole (1/1) of its suite; a partial merge says which shares it lacks (or
    that it cannot tell: shards of earlier versions), so that it never passes for a whole run later."""
    identities = [shard.shard for shard in shards]
    known = [of for of in identities if of is not None]
    if not known:
        return export.ShardOf(
            1, 1, export.suite_digest([r.path for s in shards for r in s.results]), ("?/?",)
        )
    missing = {m for of in known for m in of.missing}
    if partial:
        missing |= {f"{k}/{known[0].n}" for k in range(1, known[0].n + 1)} - {
            f"{of.k}/{of.n}" for of in known
        }
        if None in identities:
            missing.add("?/?")
    return export.ShardOf(1, 1, known[0].suite, tuple(sorted(missing)))
