"""Results for the output tests (JSON, JUnit, Markdown): the sample and the explained file judged from
their recordings without a GPU, the sample with claims that did not hold, and results whose every
free text is hostile."""

from pathlib import Path

from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU
from hypothesis import strategies as st

from ncuverify.explain import Explanation, RuleFinding, SourceLine
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.results import ClaimResult, FileResult, Verdict
from ncuverify.spec import Claim


def judged_sample() -> FileResult:
    return check_file(DATA / "sample.yaml", CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES), NO_GPU)


def judged_explained() -> FileResult:
    return check_file(DATA / "explain.yaml", CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES), NO_GPU)


def mixed_results(sample: FileResult) -> list[FileResult]:
    """The sample's results with one claim failed, one erred and one skipped, and a wrong file."""
    claims = list(sample.claims)
    claims[0] = ClaimResult(claims[0].claim, Verdict.FAILED, 5.0, "measured 5, expected == 4")
    claims[1] = ClaimResult(
        claims[1].claim, Verdict.ERROR, reason="case stride32 did not run: CUDA_ERROR_ILLEGAL_ADDRESS"
    )
    claims[2] = ClaimResult(claims[2].claim, Verdict.SKIPPED, reason="no GPU")
    broken = FileResult(Path("broken.yaml"), [], input_error="broken.yaml:3: kernels: missing")
    return [
        FileResult(
            sample.path, claims, provenance=sample.provenance, replayed=True, measurements=sample.measurements
        ),
        broken,
    ]


# --- what a file's text can hold ---------------------------------------------------------------------

ATTACKS = [
    "\x00\x01\x1b[2J\x1b]0;owned\x07",  # NUL, a control character, a screen clear, a terminal title
    "<script>alert(1)</script><img src=x onerror=alert(1)>",
    "a | b\n| --- |\n# heading\n> quote\n- item\n1. item",
    "`code` ``` ~~~ ***bold*** [link](https://evil.example) ![img](x) $x^2$ \\ &amp;",
    "\u202eevil\u2066 \ud800 \ufffe \r\n\t end",
]

PRINTED = st.text(alphabet=st.characters(exclude_categories=()), max_size=40)


def hostile(text: str) -> FileResult:
    """A result whose every free text (path, citation, note, reason, messages, warnings, what ncu said)
    is the given text."""
    claim = Claim.model_validate(
        {
            "id": "hostile",
            "case": "c",
            "metric": "a.sum",
            "expect": {"equals": 1},
            "cite": {"document": text, "section": text, "figure": text, "holds": "no"},
            "note": text or "-",
        }
    )
    explanation = Explanation(
        kernel=text,
        topic="global",
        rules=(RuleFinding(rule=text, section=text, severity="OPT", text=text, speedup_pct=None),),
        lines=(SourceLine(file=text, line=3, text=text, excess=1.0, share=1.0),),
    )
    claims = [
        ClaimResult(claim, Verdict.FAILED, 2.0, text),
        ClaimResult(claim.model_copy(update={"id": "erred"}), Verdict.ERROR, reason=text),
        ClaimResult(claim.model_copy(update={"id": "skipped"}), Verdict.SKIPPED, reason=text),
    ]
    return FileResult(
        Path(f"{text}.yaml"),
        claims,
        input_error=text,
        internal_error=text,
        not_run=text,
        warnings=[text],
        explanations={"hostile": explanation},
    )


def static_only(path: Path) -> FileResult:
    """The file checked with --static-only: its claims on the profiler set aside."""
    return check_file(path, CheckOptions(cache=COMPILE_CACHE, static_only=True), NO_GPU)
