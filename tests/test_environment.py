"""What the machine offers, and the probes of it (ncu --version, --query-metrics), which cannot hang."""

import json
from pathlib import Path

import pytest
from conftest import DATA, assert_group_ends

from ncuverify import environment
from ncuverify.environment import Environment


def test_the_environment_says_why_it_cannot_measure(monkeypatch):
    from ncuverify.errors import EnvironmentProblem

    def no_driver(index: int = 0):
        raise EnvironmentProblem("no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded")

    monkeypatch.setattr(environment, "detect_gpu", no_driver)
    probed = Environment.probe("ncu")
    assert (probed.gpu, probed.ncu) == (None, None)
    assert probed.problem == "no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded"
    gpu = environment.Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    monkeypatch.setattr(environment, "detect_gpu", lambda index=0: gpu)
    probed = Environment.probe("no-such-ncu")
    assert probed.gpu == gpu and probed.ncu is None and "ncu is not on the PATH" in (probed.problem or "")


# --- probes that cannot hang ----------------------------------------------------------------------------

STALLING_NCU = DATA / "fake_ncu" / "stalling_ncu"


def probe_groups(notes: Path) -> list[int]:
    return [json.loads(line)["pgid"] for line in notes.read_text().splitlines()]


def test_a_child_holding_ncu_s_output_does_not_keep_the_version_probe_waiting(tmp_path, monkeypatch):
    from ncuverify.environment import find_ncu, ncu_version

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.delenv("FAKE_NCU_STALL", raising=False)
    assert ncu_version(str(STALLING_NCU)) == "2025.3.1.0"
    assert find_ncu(str(STALLING_NCU)) == str(STALLING_NCU)
    for group in probe_groups(tmp_path / "notes.jsonl"):
        assert_group_ends(group)


@pytest.mark.slow
def test_an_ncu_that_hangs_on_its_version_is_stopped_and_cannot_measure(tmp_path, monkeypatch):
    from ncuverify import environment
    from ncuverify.errors import EnvironmentProblem

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(environment, "VERSION_TIMEOUT_S", 1)
    with pytest.raises(EnvironmentProblem) as problem:
        environment.find_ncu(str(STALLING_NCU))
    assert str(problem.value) == f"{STALLING_NCU} --version did not answer within 1 s; stopped: is it ncu?"
    [group] = probe_groups(tmp_path / "notes.jsonl")
    assert_group_ends(group)
    gpu = environment.Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    monkeypatch.setattr(environment, "detect_gpu", lambda index=0: gpu)
    probed = Environment.probe(str(STALLING_NCU))
    assert probed.ncu is None and probed.problem == str(problem.value)


@pytest.mark.parametrize(
    "answer",
    [
        "Version ²⁰²⁵.1",
        "Version 2025",
        "Version",
        "NVIDIA (R) Nsight Compute\n",
        "Version 2025.1.0\x1b[2J",
        "Version " + "9" * 10_000 + ".1",
        "",
    ],
)
def test_a_version_answer_that_names_no_version_is_no_ncu(tmp_path, answer):
    from ncuverify.environment import find_ncu
    from ncuverify.errors import EnvironmentProblem

    (tmp_path / "answer").write_text(answer)
    fake = tmp_path / "ncu"
    fake.write_text(f"#!/bin/sh\nexec /bin/cat {tmp_path / 'answer'}\n")
    fake.chmod(0o755)
    with pytest.raises(EnvironmentProblem) as problem:
        find_ncu(str(fake))
    assert str(problem.value) == f"{fake} does not say which Nsight Compute it is (ncu --version): is it ncu?"


def test_an_old_ncu_is_named_with_its_version(tmp_path):
    from ncuverify.environment import find_ncu
    from ncuverify.errors import EnvironmentProblem

    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\necho 'Version 2021.3.1.0 (build 1)'\n")
    fake.chmod(0o755)
    with pytest.raises(
        EnvironmentProblem,
        match=r"^ncu 2021\.3\.1\.0 is too old: ncuverify needs Nsight Compute 2022\.1 or newer$",
    ):
        find_ncu(str(fake))


def test_a_metric_list_that_never_comes_is_a_clear_error_asked_once(tmp_path, monkeypatch):
    from ncuverify.errors import InputError
    from ncuverify.ncu import metrics

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(metrics, "QUERY_TIMEOUT_S", 1)
    metrics._listed.cache_clear()
    try:
        for _ in range(2):
            with pytest.raises(InputError) as refused:
                metrics.unknown({"sm__cycles_elapsed.sum"}, "sm_70", str(STALLING_NCU))
        assert str(refused.value) == (
            f"{STALLING_NCU} --query-metrics --chip gv100 did not answer within 1 s; stopped: "
            "the metric names cannot be checked against ncu's list"
        )
        [group] = probe_groups(tmp_path / "notes.jsonl")  # asked once
        assert_group_ends(group)
    finally:
        metrics._listed.cache_clear()


def test_the_metric_list_of_an_unshipped_chip_comes_from_ncu(tmp_path, monkeypatch):
    from ncuverify.ncu import metrics

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.delenv("FAKE_NCU_STALL", raising=False)
    metrics._listed.cache_clear()
    try:
        assert metrics.known_bases("gv100", str(STALLING_NCU)) == frozenset({"sm__cycles_elapsed"})
        assert metrics.unknown(
            {"sm__cycles_elapsed.sum", "sm__cycle_elapsed.sum"}, "sm_70", str(STALLING_NCU)
        ) == {"sm__cycle_elapsed.sum": "sm__cycles_elapsed.sum"}
    finally:
        metrics._listed.cache_clear()
