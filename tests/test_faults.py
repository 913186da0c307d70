"""Naming a fault by running its case again without the profiler."""

from stalling_runs import CASES, assert_no_process_of


def test_a_fault_rerun_that_never_ends_is_stopped(tmp_path, monkeypatch):
    import sys

    from ncuverify.profile import faults

    hang = tmp_path / "hang.py"
    # Only the parent prints its group: two processes writing the one output file could mix their lines.
    hang.write_text("import os, time\nif os.fork():\n    print(os.getpgid(0), flush=True)\ntime.sleep(600)\n")
    real_start = faults.start
    monkeypatch.setattr(
        faults,
        "start",
        lambda command, output, device=None: real_start([sys.executable, str(hang)], output, device),
    )
    assert faults.name_the_fault(tmp_path / "fault", [CASES[0]], 1) is None
    assert_no_process_of(int((tmp_path / "fault" / "output.txt").read_text().split()[0]))
