"""ncu's error lines read out of its log, the one way every stage reads them."""

from ncuverify.ncu.log import error_lines


def test_each_error_line_gives_what_follows_its_mark():
    log = (
        "==PROF== Connected to process 4242\n"
        "==ERROR== LaunchFailed: the kernel faulted  \n"
        "==WARNING== No lineinfo\n"
        "[4242] runner ==ERROR== Failed to profile kernel\r\n"
        '"ID","Kernel Name"\n'
    )
    assert error_lines(log) == ["LaunchFailed: the kernel faulted", "Failed to profile kernel"]


def test_a_log_without_errors_has_none():
    assert error_lines("==PROF== Disconnected from process 4242\n==WARNING== ==ERROR\n") == []
    assert error_lines("") == []


def test_only_the_first_mark_of_a_line_is_cut():
    assert error_lines("==ERROR== ncu said ==ERROR== twice") == ["ncu said ==ERROR== twice"]
