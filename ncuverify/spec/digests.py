"""What a case launches with, as a digest: a recording made of a case that has changed since (another
grid, other arguments, other bytes in a .npy fill, another command) holds figures that may be stale."""

from __future__ import annotations

import hashlib
import json

from ncuverify.spec.expectation_file import Spec
from ncuverify.spec.npy import planned_arguments


def case_digests(spec: Spec) -> dict[str, str]:
    """Each case of the file (built and program cases) -> a digest of what it launches with. The .npy
    fills count by their bytes, not their paths, so the digest is the same on every machine."""
    digests: dict[str, str] = {}
    for name, case in spec.content.cases.items():
        content = case.model_dump(mode="json")
        planned = planned_arguments(case.args, spec.folder)
        content["npy"] = [arg["fill"].get("sha256") for arg in planned if isinstance(arg.get("fill"), dict)]
        # A step's figures depend on the steps before it: a change there changes it too.
        content["after"] = [digests[step] for step in spec.content.sequence_steps(name)[:-1]]
        if not content["after"]:
            del content["after"]  # the digests of cases of their own stay as they were
        digests[name] = _digest(content)
    for name, program in spec.content.programs.items():
        digests[name] = _digest(program.model_dump(mode="json"))
    return digests


def _digest(content: object) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
