"""ncuverify doctor: each finding from what the machine gives (the readers faked), its remedy, and
the exit code."""

import pytest
from cli_invoke import invoke_command
from conftest import FAKE_NCU

from ncuverify import doctor
from ncuverify.doctor import Finding, State
from ncuverify.environment import Environment, Gpu
from ncuverify.errors import EnvironmentProblem, ExitCode

PARAMS = "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: {}\nNvLinkDisable: 0\n"
CAP_SYS_ADMIN = 1 << 21


@pytest.mark.parametrize(
    ("params", "capabilities", "uid", "state"),
    [
        (PARAMS.format(0), 0, 1000, State.OK),
        (PARAMS.format(1), 0, 0, State.OK),  # root
        (PARAMS.format(1), CAP_SYS_ADMIN | 0b101, 1000, State.OK),
        (PARAMS.format(1), ~CAP_SYS_ADMIN & 0xFFFF_FFFF_FF, 1000, State.MISSING),
        (None, 0, 1000, State.NOTE),  # no driver, or the file hidden: the trial tells
        ("RmProfilingAdminOnly: x\n", 0, 1000, State.NOTE),
    ],
)
def test_the_counters_are_open_kept_to_administrators_or_not_known(params, capabilities, uid, state):
    found = doctor.counter_finding(params, capabilities, uid, container=False)
    assert found.state is state
    if state is State.MISSING:
        assert "NVreg_RestrictProfilingToAdminUsers=0" in found.remedy and "CAP_SYS_ADMIN" in found.remedy


def test_in_a_container_the_hosts_setting_and_the_capability_are_named():
    found = doctor.counter_finding(PARAMS.format(1), 0, 1000, container=True)
    assert found.state is State.MISSING and "--cap-add SYS_ADMIN" in found.detail


def test_mig_is_named_by_gpu_and_never_stops_a_check():
    assert doctor.mig_finding(["Disabled"]).state is State.OK
    enabled = doctor.mig_finding(["Disabled", "Enabled"])
    assert enabled.state is State.NOTE and "GPU 1" in enabled.detail and not enabled.needed
    assert doctor.mig_finding([]).state is State.NOTE


def test_each_gpu_is_a_line_and_a_missing_one_says_why():
    gpus = [Gpu(0, "NVIDIA H200", "sm_90", "13.0"), Gpu(1, "NVIDIA H200", "sm_90", "13.0")]
    found = doctor.gpu_findings(gpus, None, "580.1")
    assert [(f.what, f.state, f.detail) for f in found] == [
        ("GPU", State.OK, "0: NVIDIA H200 (sm_90)"),
        ("GPU", State.OK, "1: NVIDIA H200 (sm_90)"),
        ("driver", State.OK, "580.1, CUDA 13.0"),
    ]
    assert doctor.gpu_findings(gpus[:1], None, None)[-1].detail == "CUDA 13.0", "no kernel module named"
    [missing] = doctor.gpu_findings([], "no NVIDIA GPU: the driver found no device", None)
    assert missing.state is State.MISSING and missing.needed and "driver" in missing.remedy


def test_a_missing_compiler_stops_a_check_and_a_missing_disassembler_does_not():
    def no_nvrtc():
        raise OSError("libnvrtc.so.13: cannot open shared object file")

    found = {f.what: f for f in doctor.toolchain_findings(no_nvrtc, lambda name: None)}
    assert found["NVRTC"].state is State.MISSING and found["NVRTC"].needed
    assert all(found[tool].state is State.MISSING and not found[tool].needed for tool in ("nvcc", "nvdisasm"))
    assert "cuda-toolkit[nvdisasm]" in found["nvdisasm"].remedy
    assert doctor.exit_code(list(found.values())) == ExitCode.NOT_MEASURABLE
    fine = doctor.toolchain_findings(lambda: (13, 0), lambda name: None)
    assert doctor.exit_code(fine) == ExitCode.OK, "disassemblers are for SASS claims alone"


def test_the_ncu_found_is_named_with_its_version():
    found, path = doctor.ncu_finding("ncu", lambda name: "/opt/ncu", lambda path: "2025.3.1.0")
    assert (found.state, found.detail, path) == (State.OK, "2025.3.1.0 at /opt/ncu", "/opt/ncu")

    def absent(name):
        raise EnvironmentProblem("Nsight Compute's ncu is not on the PATH")

    missing, path = doctor.ncu_finding("ncu", absent, lambda path: None)
    assert missing.state is State.MISSING and path is None


def test_the_trial_fails_with_what_ncu_measured(monkeypatch, tmp_path):
    """The stand-in ncu reads a counter as the length of its name (24), not the one warp launched."""
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    fake = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    monkeypatch.setattr(Environment, "probe", classmethod(lambda cls, ncu: fake))
    found = doctor.trial_finding(str(FAKE_NCU), "sm_90")
    assert found.state is State.MISSING and found.needed
    assert found.detail == "profiling one kernel failed: measured 24, expected == 1" and found.remedy


def test_the_trial_says_what_stopped_ncu(monkeypatch):
    stopped = Environment(
        None, None, "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM)"
    )
    monkeypatch.setattr(Environment, "probe", classmethod(lambda cls, ncu: stopped))
    found = doctor.trial_finding("ncu", "sm_90")
    assert "ERR_NVGPUCTRPERM" in found.detail and "NVreg_RestrictProfilingToAdminUsers=0" in found.remedy


def test_without_a_gpu_doctor_exits_3_naming_what_is_missing(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(
        doctor, "_gpus", lambda: (_ for _ in ()).throw(EnvironmentProblem("no NVIDIA GPU: x"))
    )
    result = invoke_command("doctor", "--ncu", "/nonexistent/ncu")
    assert result.exit_code == ExitCode.NOT_MEASURABLE, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "missing GPU        no NVIDIA GPU: x"
    assert any(line.startswith("missing ncu ") for line in lines)
    assert lines[-1] == "doctor: check cannot profile here (GPU, ncu)"
    assert all(len(line) <= 80 or " " not in line[19:] for line in lines), "a path alone may be longer"
    assert not any(line.startswith(("ok      trial", "missing trial")) for line in lines), "no trial"


def test_a_hostile_ncu_version_is_shown_as_text(tmp_path, monkeypatch):
    ncu = tmp_path / "ncu"
    ncu.write_text("#!/bin/sh\necho 'Version 2025.3.1.0 \x1b[2J[bold]x'\n")
    ncu.chmod(0o755)
    monkeypatch.setattr(doctor, "_gpus", lambda: (_ for _ in ()).throw(EnvironmentProblem("no GPU")))
    result = invoke_command("doctor", "--ncu", str(ncu), "--no-trial")
    assert "\x1b" not in result.stdout and f"ok      ncu        2025.3.1.0 at {ncu}" in result.stdout


def test_findings_that_are_only_notes_leave_the_exit_code_ok():
    findings = [Finding("GPU", State.OK, "0: x"), Finding("MIG", State.NOTE, "not known", needed=False)]
    assert doctor.exit_code(findings) == ExitCode.OK


def test_with_a_gpu_and_ncu_every_check_runs_and_the_trial_comes_last(monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    gpu = Gpu(0, "Fake GPU", "sm_90", "13.0")
    monkeypatch.setattr(doctor, "_gpus", lambda: [gpu])
    monkeypatch.setattr(doctor, "_kernel_module", lambda: "580.159.04")
    fake = Environment(gpu, str(FAKE_NCU), None, gpu_count=1)
    monkeypatch.setattr(Environment, "probe", classmethod(lambda cls, ncu: fake))
    findings = doctor.examine(str(FAKE_NCU))
    found = {f.what: f for f in findings}
    assert (found["GPU"].detail, found["driver"].detail) == ("0: Fake GPU (sm_90)", "580.159.04, CUDA 13.0")
    assert found["ncu"].state is State.OK and found["ncu"].detail.endswith(f" at {FAKE_NCU}")
    assert findings[-1].what == "trial" and "measured 24, expected == 1" in findings[-1].detail
    assert doctor.missing(findings) == ["trial"]
