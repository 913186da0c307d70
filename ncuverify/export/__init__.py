"""Results as files for machines and reviewers: JSON (everything, and read back to merge the shards
of a run), JUnit XML (one test case per claim, for CI systems), Markdown (a summary fit for a
pull-request comment or a CI step summary), and SARIF (for code-scanning services)."""

from ncuverify.export.html_report import to_html
from ncuverify.export.junit import to_junit
from ncuverify.export.markdown import to_markdown
from ncuverify.export.outcome import RunOutcome, headline
from ncuverify.export.reading import from_json
from ncuverify.export.results_json import claim_record, file_record, to_json
from ncuverify.export.run_identity import MAX_SHARDS, ShardOf, suite_digest
from ncuverify.export.sarif import to_sarif
from ncuverify.export.shards import MAX_RESULT_BYTES, Shard, merge, merged_outcome, read_shard, run_seconds

__all__ = [
    "MAX_RESULT_BYTES",
    "MAX_SHARDS",
    "RunOutcome",
    "Shard",
    "ShardOf",
    "claim_record",
    "file_record",
    "from_json",
    "headline",
    "merge",
    "merged_outcome",
    "read_shard",
    "run_seconds",
    "suite_digest",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "to_sarif",
]
