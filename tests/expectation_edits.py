"""Expectation files for the spec tests: the sample and the case-ids file, edited, and their problems."""

from pathlib import Path

import pytest
import yaml
from conftest import DATA

from ncuverify.errors import InputError
from ncuverify.spec import load

SAMPLE = (DATA / "sample.yaml").read_text()


def write(tmp_path: Path, text: str, name: str = "claims.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def edited(tmp_path: Path, change) -> Path:
    """The sample file with one change made to its parsed content."""
    content = yaml.safe_load(SAMPLE)
    change(content)
    return write(tmp_path, yaml.safe_dump(content, sort_keys=False))


def problems(path: Path) -> str:
    with pytest.raises(InputError) as error:
        load(path)
    return str(error.value)


ID_RULE = "is not an id: an id has only letters, digits and _, and does not start with a digit"


CASE_IDS = (DATA / "case_ids.yaml").read_text()


def line_of(text: str, fragment: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if fragment in line)


def edit_problem(tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    """The problem the case-ids file has with one edit, and that file's text."""
    assert old in CASE_IDS
    text = CASE_IDS.replace(old, new, 1)
    path = write(tmp_path, text)
    return problems(path).replace(str(path), "f.yaml"), text


BUFFER = "{buffer: float32, count: 32}, {"


KERNEL = "    entry: copy\n"
