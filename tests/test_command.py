"""ncu's command line: only the metrics and kernels the claims need."""

from pathlib import Path

from ncuverify.profile import NcuOptions, ncu_command


def test_command_asks_for_what_the_claims_need(tmp_path: Path):
    command = ncu_command(
        NcuOptions(executable="/opt/ncu"),
        ["b.sum", "a.sum", "b.sum"],
        ["scale", "_Z11read_strideILi1EEvPKfPf", "scale"],
        tmp_path / "ncu.log",
        tmp_path / "plan.json",
    )
    assert command[0] == "/opt/ncu"

    def option(name: str) -> str:
        return command[command.index(name) + 1]

    assert option("--metrics") == "a.sum,b.sum"
    assert option("--clock-control") == "none"
    assert option("--page") == "raw" and option("--print-units") == "base" and "--csv" in command
    assert option("--kernel-name-base") == "mangled"
    assert option("--kernel-name") == "regex:^(_Z11read_strideILi1EEvPKfPf|scale)$"
    assert option("--log-file") == str(tmp_path / "ncu.log")
    assert command[-3:] == ["-m", "ncuverify.runner", str(tmp_path / "plan.json")]


def test_clock_control_can_be_changed(tmp_path: Path):
    command = ncu_command(NcuOptions(clock_control="base"), ["a.sum"], ["k"], tmp_path / "l", tmp_path / "p")
    assert command[command.index("--clock-control") + 1] == "base"


def test_buffer_metrics_are_not_asked_of_ncu(tmp_path: Path):
    from ncuverify.names import is_ncu_metric

    assert not is_ncu_metric("buffer__cycles.mean")
    assert not is_ncu_metric("static__registers_per_thread")
    assert is_ncu_metric("device__attribute_multiprocessor_count")
    command = ncu_command(NcuOptions(), [], ["k"], tmp_path / "l", tmp_path / "p")
    assert command[command.index("--metrics") + 1] == "gpu__time_duration.sum"
