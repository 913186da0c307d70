"""Sharing a suite's claims among machines, and narrowing a file to some of its claims."""

from __future__ import annotations

import zlib
from collections.abc import Collection
from dataclasses import replace

from ncuverify.spec.expectation_file import Spec


def share_of(spec: Spec, k: int, n: int) -> Spec:
    """The file with only the claims of the k-th of n shares (1-based): the same on every machine."""
    kept = [c for c in spec.content.claims if zlib.crc32(f"{spec.path.stem}:{c.id}".encode()) % n == k - 1]
    return replace(spec, content=spec.content.model_copy(update={"claims": kept}))


def with_claims(spec: Spec, ids: Collection[str]) -> Spec:
    """The file with only the claims of these ids (the ones a test run selected): only what they read
    is built into measurements, profiled and judged."""
    kept = [c for c in spec.content.claims if c.id in ids]
    return replace(spec, content=spec.content.model_copy(update={"claims": kept}))
