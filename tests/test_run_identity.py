"""The identity of a suite: the same expectation files, with the same contents, wherever they are."""

import os
import shutil
from pathlib import Path

from ncuverify import export


def project(folder: Path, files: dict[str, str]) -> list[Path]:
    folder.mkdir(parents=True)
    (folder / ".ncuverify-root").write_text("")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return [folder / name for name in files]


def test_the_same_files_give_the_same_suite_wherever_they_are(tmp_path: Path):
    here = project(tmp_path / "here", {"e/a.yaml": "a", "e/b.yaml": "b"})
    there = project(tmp_path / "elsewhere" / "there", {"e/a.yaml": "a", "e/b.yaml": "b"})
    assert export.suite_digest(here) == export.suite_digest(list(reversed(there)))
    assert len(export.suite_digest(here)) == 64


def test_other_or_edited_files_give_another_suite(tmp_path: Path):
    first = export.suite_digest(project(tmp_path / "1", {"e/a.yaml": "a", "e/b.yaml": "b"}))
    assert export.suite_digest(project(tmp_path / "2", {"e/a.yaml": "a", "e/b.yaml": "b!"})) != first
    assert export.suite_digest(project(tmp_path / "3", {"e/a.yaml": "a"})) != first
    assert export.suite_digest(project(tmp_path / "4", {"e/a.yaml": "a", "f/b.yaml": "b"})) != first


def test_a_file_that_cannot_be_read_contributes_its_path(tmp_path: Path):
    (folder,) = [tmp_path / "p"]
    folder.mkdir()
    (folder / ".ncuverify-root").write_text("")
    os.mkfifo(folder / "pipe.yaml")  # reading it would wait for a writer for ever
    with_pipe = export.suite_digest([folder / "pipe.yaml", folder / "absent.yaml"])
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / ".ncuverify-root").write_text("")
    assert export.suite_digest([folder / "pipe.yaml", folder / "absent.yaml"]) == with_pipe
    assert export.suite_digest([folder / "absent.yaml"]) != with_pipe
