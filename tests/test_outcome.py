"""What an ncu process leaves, read back: the runner's status."""

import pytest

from ncuverify.errors import EnvironmentProblem


def test_a_damaged_status_from_the_runner_is_an_environment_problem(tmp_path, monkeypatch):
    from ncuverify.profile.outcome import read_status

    path = tmp_path / "status.json"
    path.write_text('[{"case": "a", "ok": "yes"}]')
    with pytest.raises(EnvironmentProblem) as problem:
        read_status(path, ["a"])
    assert str(problem.value) == "the runner's status could not be read ([0].ok: not true or false)"
    path.write_text('[{"case": "z", "ok": true}]')
    with pytest.raises(EnvironmentProblem, match=r"\(case 'z' is not in its plan\)"):
        read_status(path, ["a"])
