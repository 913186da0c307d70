"""A run's share of its suite (--shard K/N): the files read once, before any is prepared, so that the
groups of cases of every file are split together (`profile.shares`); each file is then prepared
narrowed to its part."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ncuverify.options import CheckOptions
from ncuverify.profile import shares
from ncuverify.results import FileKey
from ncuverify.spec import Spec, load
from ncuverify.spec.shares import narrowed


def with_parts(paths: Sequence[Path], keys: Sequence[FileKey], options: CheckOptions) -> CheckOptions:
    """The options with each file's part of the run's share, and the files read for it; as given where
    the run is not a shard. A file that cannot be read has no part: preparing it says why."""
    if options.shard is None or options.parts is not None:
        return options
    loaded = dict(options.loaded or {})
    files: list[tuple[str, Spec]] = []
    for path, key in zip(paths, keys, strict=True):
        spec = loaded.get(path.resolve())
        if spec is None:
            try:
                spec = load(path)
            except Exception:  # InputError, or a bug: preparing the file meets it again, as that file's
                continue
            loaded[path.resolve()] = spec
        files.append((key.name, spec))
    return replace(options, loaded=loaded, parts=shares.parts(files, *options.shard))


def sharded(spec: Spec, key: FileKey, options: CheckOptions) -> Spec:
    """The file narrowed to the run's share: its part where the run's files were split together, else
    the share of the file split alone."""
    assert options.shard is not None
    part = (options.parts or {}).get(key.name)
    return narrowed(spec, part) if part is not None else shares.share_of(spec, *options.shard)
