"""Command-line paths to expectation files: a file for itself, a folder for its *.yaml and *.yml files."""

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.errors import InputError
from ncuverify.spec import expand_paths


def test_folders_stand_for_their_yaml_and_yml_files_each_once(tmp_path):
    (tmp_path / "b.yaml").write_text("")
    (tmp_path / "a.yml").write_text("")
    (tmp_path / "c.txt").write_text("")
    found = expand_paths([tmp_path, tmp_path / "b.yaml", tmp_path])
    assert found == [tmp_path / "b.yaml", tmp_path / "a.yml"]


def test_a_fifo_among_the_expectation_files_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "hang.yaml")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'hang.yaml'}: not a regular file")):
        expand_paths([tmp_path])


@given(names=st.lists(st.text(min_size=1, max_size=20), max_size=4))
@settings(max_examples=40, deadline=None)
def test_expanding_any_paths_gives_files_or_one_input_error(names):
    try:
        found = expand_paths([Path(name) for name in names])
    except InputError as error:
        assert "\x1b" not in str(error)
    else:
        assert all(path.is_file() for path in found)


def test_a_folder_named_like_an_expectation_file_is_refused(tmp_path):
    (tmp_path / "x.yaml").mkdir()
    (tmp_path / "y.yaml").write_text("")
    with pytest.raises(InputError) as refused:
        expand_paths([tmp_path])
    assert str(refused.value) == f"{tmp_path / 'x.yaml'}: is a folder, not an expectation file"
