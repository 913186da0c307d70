"""Whether a replay's figures are today's: one comparison of digests, what changed named as what is
missing is, a change making its cases' claims stale and a missing digest refusing the file."""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from conftest import DATA, FIXTURES

from ncuverify.profile.recording import load_provenance
from ncuverify.results import run_keys
from ncuverify.spec import load
from ncuverify.stages.staleness import Untied, compared, staleness

SAMPLE = load(DATA / "sample.yaml")
KEY = run_keys([DATA / "sample.yaml"])[0]
PROVENANCE = load_provenance(FIXTURES / "sample", KEY)
WHERE = Path("rec/provenance.json")


def builds(**changed: str) -> Any:
    """The sample's kernels as built today: their recorded digests, but for those changed."""
    recorded = {name.split("::")[1]: digest for name, digest in PROVENANCE.kernels.items()}
    return {
        name: SimpleNamespace(source_digest=changed.get(name, digest)) for name, digest in recorded.items()
    }


def test_compared_names_what_changed_and_what_has_no_recorded_digest():
    recorded = {"a": "1", "b": "2", "gone": "3"}
    assert compared(recorded, {"a": "1", "b": "9", "new": "4"}) == (["b"], ["new"])


def test_what_changed_and_what_is_missing_are_named_alike():
    assert str(Untied("kernel scale")) == "kernel scale changed since it was recorded"
    assert str(Untied("case c", detail="its launch")) == "case c changed since it was recorded (its launch)"
    assert str(Untied("kernel scale of case s", missing=True)) == (
        "the recording holds no digest of kernel scale of case s"
    )


def test_a_changed_kernel_makes_its_cases_stale_and_the_rest_is_judged():
    found = staleness(SAMPLE, KEY.name, builds(scale="0"), PROVENANCE, SAMPLE.content.claims, WHERE, False)
    assert found.stale == {"scale_2d": "kernel scale changed since it was recorded"}
    assert found.warnings == ["kernel scale changed since it was recorded: its figures may be stale"]
    assert found.refused is None


def test_a_kernel_without_a_recorded_digest_refuses_the_file_unless_stale_figures_are_allowed():
    kernels = {name: digest for name, digest in PROVENANCE.kernels.items() if not name.endswith("::scale")}
    partial = replace(PROVENANCE, kernels=kernels)
    claims = SAMPLE.content.claims
    found = staleness(SAMPLE, KEY.name, builds(), partial, claims, WHERE, False)
    assert (found.stale, found.warnings) == ({}, [])
    assert found.refused == (
        "rec/provenance.json: the recording holds no digest of kernel scale of case scale_2d: its recorded"
        " figures may not be today's; record them again (check --save-profile), or pass --allow-stale to"
        " judge them anyway"
    )
    allowed = staleness(SAMPLE, KEY.name, builds(), partial, claims, WHERE, True)
    assert allowed.refused is None and allowed.warnings == [
        "the recording holds no digest of kernel scale of case scale_2d: its figures may be stale"
    ]
    unread = [claim for claim in claims if claim.case != "scale_2d"]
    assert staleness(SAMPLE, KEY.name, builds(), partial, unread, WHERE, False).refused is None
