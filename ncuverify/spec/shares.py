"""Sharing a suite's claims among machines."""

from __future__ import annotations

import zlib
from dataclasses import replace

from ncuverify.spec.expectation_file import Spec


def share_of(spec: Spec, k: int, n: int) -> Spec:
    """The file with only the claims of the k-th of n shares (1-based): the same on every machine."""
    kept = [c for c in spec.content.claims if zlib.crc32(f"{spec.path.stem}:{c.id}".encode()) % n == k - 1]
    return replace(spec, content=spec.content.model_copy(update={"claims": kept}))
