"""The folder a run profiles in: the one --save-profile names, else a scratch folder removed after."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.text import printable


@contextmanager
def work_folder(keep_dir: Path | None) -> Iterator[Path]:
    if keep_dir is not None:
        try:
            keep_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(
                f"{printable(str(keep_dir))}: cannot make the folder for the profile ({error.strerror})"
            ) from None
        yield keep_dir
        return
    # A scratch folder that cannot be removed to the last file must not cost the run its results.
    with tempfile.TemporaryDirectory(prefix="ncuverify-", ignore_cleanup_errors=True) as scratch:
        yield Path(scratch)
