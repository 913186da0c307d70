"""The committed H200 recording with the measurement keys a live run on its GPU would have written (its
GPU identity from its provenance), for the tests of check --reuse and of its dry run."""

import json
import shutil
from pathlib import Path

from conftest import COMPILE_CACHE, EXPECTATIONS, NO_GPU, RECORDINGS

from ncuverify.options import CheckOptions
from ncuverify.profile import recording
from ncuverify.profile.measurement_keys import gpu_identity, measurement_keys
from ncuverify.profile.plan import FileCases
from ncuverify.results import FileKey, run_keys
from ncuverify.stages import prepare, profiling
from ncuverify.stages.values import Prepared

FILES = [EXPECTATIONS / "coalescing.yaml", EXPECTATIONS / "transpose.yaml"]  # transpose's cases repeat


def prepared(paths: list[Path], recorded: Path) -> tuple[list[FileCases], list[FileKey]]:
    """The files as a run prepares them for the recording's architecture, ready for the profile."""
    keys = run_keys(paths)
    options = CheckOptions(cache=COMPILE_CACHE, from_profile=recorded, explain=False)
    ready = [prepare.prepare_file(path, key, options, NO_GPU) for path, key in zip(paths, keys, strict=True)]
    assert all(isinstance(p, Prepared) for p in ready)
    return profiling.file_cases(ready), keys  # type: ignore[arg-type]


def keyed(
    tmp_path: Path, paths: list[Path] = FILES, identity_changes: dict | None = None
) -> tuple[Path, list[FileCases], list[FileKey], dict[str, str]]:
    """A copy of the H200 recording with the keys a live run on its GPU would have written; the files
    as prepared, their keys, and the measurement keys of the recording's own GPU identity."""
    folder = tmp_path / "h200"
    shutil.copytree(RECORDINGS, folder)
    files, keys = prepared(paths, folder)
    provenance = recording.load_provenance(folder, keys[0])
    identity = {**(gpu_identity(provenance) or {}), **(identity_changes or {})}
    computed = measurement_keys(files, identity)
    written = json.loads((folder / "provenance.json").read_text())
    written["measurement_keys"] = computed
    (folder / "provenance.json").write_text(json.dumps(written, indent=1))
    return folder, files, keys, measurement_keys(files, gpu_identity(provenance))


def unkeyed(tmp_path: Path) -> Path:
    """A copy of the H200 recording without its measurement keys, as recordings made before ncuverify
    kept them are."""
    folder = tmp_path / "unkeyed"
    shutil.copytree(RECORDINGS, folder)
    written = json.loads((folder / "provenance.json").read_text())
    written.pop("measurement_keys", None)
    (folder / "provenance.json").write_text(json.dumps(written, indent=1))
    return folder
