"""What an artifact's fatbins unpack to, read from their headers before cuobjdump runs: real fatbins
(plain, compressed, concatenated, inside objects, libraries and executables) counted as cuobjdump
writes them, and fatbins that would unpack to more than the bounds refused without cuobjdump running."""

import struct
from pathlib import Path

import pytest
from artifact_builds import FIXTURES, artifacts  # noqa: F401 (a fixture)
from cli_invoke import invoke_command
from forged_cubins import CountedDeadline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncuverify.build import artifacts as reading
from ncuverify.build import artifacts_fatbin
from ncuverify.build.artifacts import artifact_cubins, read_artifact
from ncuverify.build.artifacts_fatbin import check_unpacked, unpacked
from ncuverify.build.limits import MIB, Deadline
from ncuverify.errors import ExitCode, InputError

# Where an entry's fields lie in its header (the first entry's header follows the container's 16 bytes).
FIRST_ENTRY = 16
UNPACKED_AT = 56  # what a compressed payload unpacks to
TABLE_AT = 20  # where a concatenation's table lies, from its entry's start
BIG_GLOBAL = FIXTURES / "big_global.fatbin"  # 11 KB, a 300 MiB cubin compressed (see big_global.cu)
REFUSAL_300_MIB = (
    "a cubin in it unpacks to 300 MiB, more than the 256 MiB one cubin may be; refusing to extract it"
)


def forged(source: Path, into: Path, *fields: tuple[int, str, int]) -> Path:
    """A copy of source with each (offset, struct format, value) written over it."""
    data = bytearray(source.read_bytes())
    for offset, form, value in fields:
        struct.pack_into(form, data, offset, value)
    into.write_bytes(bytes(data))
    return into


@pytest.fixture
def watched_cuobjdump(stand_in_tool, monkeypatch, tmp_path):
    """cuobjdump replaced by a script that leaves a mark where it runs: a test asserts it never did."""
    mark = tmp_path / "cuobjdump-ran"
    tool, _ = stand_in_tool(f"touch {mark}", "cuobjdump")
    monkeypatch.setattr(reading, "find_tool", lambda name: tool)
    return mark


# --- real fatbins ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kernels.fatbin", "compressed.fatbin", "concatenated.fatbin"])
def test_the_headers_say_the_bytes_cuobjdump_writes(artifacts, tmp_path, name):  # noqa: F811
    """Each entry's size, as its header says it, is its cubin's as cuobjdump extracts it, but for the
    padding of an entry's payload to 8 bytes."""
    path = artifacts(name)
    found = unpacked(path.read_bytes(), Deadline())
    written = [len(cubin.data) for cubin in artifact_cubins(path)]
    assert found.entries == len(written) == 2
    assert sum(written) <= found.total <= sum(written) + 8 * len(written)
    assert max(written) <= found.largest <= max(written) + 8


def test_a_compressed_fatbin_is_counted_unpacked(artifacts):  # noqa: F811
    plain, compressed = artifacts("kernels.fatbin"), artifacts("compressed.fatbin")
    assert compressed.stat().st_size < plain.stat().st_size / 3
    unpacked_size = unpacked(compressed.read_bytes(), Deadline()).total
    assert unpacked_size > compressed.stat().st_size * 3


@pytest.mark.parametrize("name", ["kernels.o", "libkernels.a", "libkernels.so", "program"])
def test_the_fatbins_of_objects_libraries_and_executables_are_counted(artifacts, name):  # noqa: F811
    """Their .nv_fatbin sections hold a container per unit (the CUDA runtime's own among them), with
    PTX beside the cubins: every entry counts."""
    path = artifacts(name)
    found = check_unpacked(path, path, Deadline())
    assert found.entries >= len(artifact_cubins(path)) >= 1
    assert 0 < found.largest <= found.total < path.stat().st_size


def test_magic_bytes_that_head_no_container_are_passed_over():
    magic = struct.pack("<I", 0xBA55ED50)
    data = b"text" + magic + struct.pack("<HHQ", 1, 32, 2**60) + b"more text" + magic
    assert unpacked(data, Deadline()).entries == 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**16), st.binary(min_size=1, max_size=8))
def test_any_damage_to_a_fatbin_is_counted_or_refused_in_one_line(artifacts, tmp_path, at, patch):  # noqa: F811
    """The fatbin is untrusted: whatever its bytes, its headers are counted or it is refused, never an
    exception other than InputError."""
    data = artifacts("concatenated.fatbin").read_bytes()
    at %= len(data)
    damaged = tmp_path / "damaged.fatbin"
    damaged.write_bytes(data[:at] + patch + data[at + len(patch) :])
    try:
        found = check_unpacked(damaged, damaged, Deadline())
    except InputError as error:
        assert "\n" not in str(error)
    else:
        assert found.total >= 0


# --- refused before cuobjdump runs --------------------------------------------------------------------------


def test_a_forged_header_claiming_a_huge_size_is_refused_without_cuobjdump(
    artifacts,  # noqa: F811
    tmp_path,
    watched_cuobjdump,
):
    path = forged(
        artifacts("kernels.fatbin"), tmp_path / "forged.fatbin", (FIRST_ENTRY + UNPACKED_AT, "<Q", 2**40)
    )
    with pytest.raises(InputError) as raised:
        read_artifact(path, "sm_90")
    assert str(raised.value) == (
        f"{path}: a cubin in it unpacks to 1,048,576 MiB, more than the 256 MiB one cubin may be;"
        " refusing to extract it"
    )
    assert not watched_cuobjdump.exists()


def test_a_real_fatbin_that_unpacks_to_300_mib_is_refused_without_cuobjdump(watched_cuobjdump, monkeypatch):
    """big_global.fatbin, 11 KB as nvcc made it: cuobjdump -xelf would write a 300 MiB cubin."""
    assert BIG_GLOBAL.stat().st_size < 16 * 1024
    with pytest.raises(InputError) as raised:
        read_artifact(BIG_GLOBAL, "sm_90")
    assert str(raised.value) == f"{BIG_GLOBAL}: {REFUSAL_300_MIB}"
    assert not watched_cuobjdump.exists()
    monkeypatch.setattr(artifacts_fatbin, "MAX_CUBIN_BYTES", 1024 * MIB)
    assert unpacked(BIG_GLOBAL.read_bytes(), Deadline()).largest == 314_576_748  # what cuobjdump writes


def test_fatbins_over_the_total_together_are_refused(artifacts, tmp_path, watched_cuobjdump):  # noqa: F811
    """Five containers of a cubin of 250 MiB each: none over the bound alone, 1250 MiB together."""
    one = forged(
        artifacts("kernels.fatbin"), tmp_path / "one.fatbin", (FIRST_ENTRY + UNPACKED_AT, "<Q", 250 * MIB)
    )
    (tmp_path / "five.fatbin").write_bytes(one.read_bytes() * 5)
    with pytest.raises(InputError, match=r"five\.fatbin: its cubins unpack to more than the 1,024 MiB"):
        read_artifact(tmp_path / "five.fatbin", "sm_90")
    assert not watched_cuobjdump.exists()


def test_a_concatenation_s_cubins_are_counted_from_its_table(artifacts, tmp_path, watched_cuobjdump):  # noqa: F811
    """cuobjdump writes each cubin its table lists, however they overlap: one listed at 300 MiB is refused
    though the whole entry says it unpacks to 20 KB."""
    source = artifacts("concatenated.fatbin")
    data = source.read_bytes()
    (table,) = struct.unpack_from("<I", data, FIRST_ENTRY + TABLE_AT)
    second_size = FIRST_ENTRY + table + 8 + 64 + 8  # the table's count and size, one row, its offset and kind
    path = forged(source, tmp_path / "listed.fatbin", (second_size, "<Q", 300 * MIB))
    with pytest.raises(InputError, match="a cubin in it unpacks to 300 MiB"):
        read_artifact(path, "sm_90")
    assert not watched_cuobjdump.exists()


def test_a_container_that_runs_past_the_file_is_refused(artifacts, tmp_path, watched_cuobjdump):  # noqa: F811
    path = forged(artifacts("kernels.fatbin"), tmp_path / "cut.fatbin", (8, "<Q", 2**32))
    with pytest.raises(
        InputError, match=r"not an artifact cuobjdump can read \(its fatbin at byte 0 runs past"
    ):
        read_artifact(path, "sm_90")
    assert not watched_cuobjdump.exists()


def test_more_entries_than_the_bound_are_refused(artifacts, monkeypatch, watched_cuobjdump):  # noqa: F811
    monkeypatch.setattr(artifacts_fatbin, "MAX_FATBIN_ENTRIES", 1)
    with pytest.raises(InputError, match="its fatbins hold more than 1 entries; refusing to extract it"):
        read_artifact(artifacts("kernels.fatbin"), "sm_90")
    assert not watched_cuobjdump.exists()


def test_reading_the_headers_stops_at_the_deadline():
    """A file of nothing but the magic's bytes: millions of places to look at, stopped at the deadline
    (which passes here after a thousand looks at it, not by the clock)."""
    data = struct.pack("<I", 0xBA55ED50) * 1_000_000
    deadline = CountedDeadline(0.2, passes_after=1000)
    with pytest.raises(ValueError, match=r"reading its fatbin headers took longer than 0\.2 s"):
        unpacked(data, deadline)
    assert deadline.looks == 1001, "stopped at the first look past the deadline"


def test_the_command_line_refuses_it_with_exit_2_and_a_line_that_says_why(tmp_path, watched_cuobjdump):
    (tmp_path / ".ncuverify-root").touch()
    (tmp_path / "big.fatbin").write_bytes(BIG_GLOBAL.read_bytes())
    result = invoke_command("build", str(tmp_path / "big.fatbin"))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    said = [line for line in result.output.splitlines() if "unpacks to" in line]
    assert said == [f"{tmp_path / 'big.fatbin'}: {REFUSAL_300_MIB}"]
    assert "Traceback" not in result.output
    assert not watched_cuobjdump.exists()
