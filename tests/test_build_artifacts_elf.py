"""A cubin's ELF read for its arch and kernels: crafted or cut headers and tables are refused."""

import struct

import pytest
from artifact_builds import artifacts  # noqa: F401 (a fixture)
from forged_cubins import (
    PROGBITS,
    STRTAB,
    SYMTAB,
    CountedDeadline,
    header,
    new_header,
    section_table,
    with_sections,
)

from ncuverify.build.artifacts_elf import read_cubin
from ncuverify.errors import InputError


def test_the_header_gives_the_arch_and_the_symbols_the_kernels(artifacts):  # noqa: F811
    header = read_cubin(artifacts("kernels.cubin").read_bytes(), "k")
    assert header.arch == "sm_90"
    assert header.kernels == ("_Z5twicePf", "_Z5twicePi", "_Z6strideIfEvPT_i", "_ZN2ns4copyEPfPKfi", "scale")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "no ELF header"),
        (b"\x7fELF" + b"\0" * 60, "not a 64-bit little-endian ELF"),
        (b"\x7fELF\x02\x01" + b"\0" * 12 + struct.pack("<H", 62) + b"\0" * 44, "machine 62 is not CUDA"),
    ],
)
def test_what_is_no_cuda_elf_is_refused(data, reason):
    with pytest.raises(InputError, match=f"k: not a readable cubin \\({reason}"):
        read_cubin(data, "k")


def test_a_section_table_past_the_end_is_refused(artifacts):  # noqa: F811
    data = bytearray(artifacts("kernels.cubin").read_bytes())
    struct.pack_into("<Q", data, 40, len(data))  # the section table starts at the end
    with pytest.raises(InputError, match="its section table lies past its end"):
        read_cubin(bytes(data), "k")


def test_a_name_longer_than_the_bound_is_refused(artifacts, monkeypatch):  # noqa: F811
    from ncuverify.build import artifacts_elf

    monkeypatch.setattr(artifacts_elf, "MAX_NAME_BYTES", 4)  # "scale" is five
    with pytest.raises(InputError, match="not in its string table or longer than 4 bytes"):
        read_cubin(artifacts("kernels.cubin").read_bytes(), "k")


# --- tables larger than the bounds --------------------------------------------------------------------------


def refused_at_once(data: bytes, match: str) -> None:
    """Refused before any symbol is read: the loop over the symbols looks at the deadline first."""
    deadline = CountedDeadline()
    with pytest.raises(InputError, match=match):
        read_cubin(data, "k", deadline)
    assert deadline.looks == 0, "symbols were read before the refusal"


def test_thousands_of_symbol_tables_are_refused_at_once(artifacts):  # noqa: F811
    """Each over the same symbols: their bytes add up to more than the file's, and they are too many."""
    cubin = artifacts("kernels.cubin").read_bytes()
    forged = with_sections(cubin, [header(cubin, SYMTAB)] * 5000)
    refused_at_once(forged, r"^k: its \d+ sections add up to \d+ bytes, more than 4 times its \d+; refusing")
    fewer = with_sections(cubin, [header(cubin, SYMTAB)] * 100)
    refused_at_once(
        fewer, r"^k: it has 101 symbol tables, more than the 16 a cubin may; refusing to read it$"
    )


def test_thousands_of_sections_over_the_same_bytes_are_refused_at_once(artifacts):  # noqa: F811
    cubin = artifacts("kernels.cubin").read_bytes()
    forged = with_sections(cubin, [new_header(PROGBITS, 0, len(cubin))] * 5000)
    refused_at_once(forged, r"sections add up to \d+ bytes, more than 4 times its \d+; refusing to read it")


def test_more_symbols_than_the_bound_are_refused(artifacts, monkeypatch):  # noqa: F811
    from ncuverify.build import artifacts_elf

    monkeypatch.setattr(artifacts_elf, "MAX_SYMBOLS", 3)
    refused_at_once(
        artifacts("kernels.cubin").read_bytes(), r"it has \d+ symbols, more than the 3 a cubin may"
    )


def test_kernel_names_that_add_up_to_more_than_the_cubin_are_refused(artifacts, monkeypatch):  # noqa: F811
    """A hundred kernel symbols naming one string of 1000 bytes: a real cubin stores each name once."""
    from ncuverify.build import artifacts_elf

    names_read: list[int] = []
    read_name = artifacts_elf._string
    monkeypatch.setattr(
        artifacts_elf, "_string", lambda data, table, at: names_read.append(at) or read_name(data, table, at)
    )
    cubin = artifacts("kernels.cubin").read_bytes()
    names = b"k" * 1000 + b"\0"
    entry = struct.pack("<IBBHQQ", 0, 0x12, 0x10, 0, 0, 0)  # a global function, marked a kernel
    count = section_table(cubin)[2]
    strtab = new_header(STRTAB, len(cubin), len(names))
    symtab = new_header(SYMTAB, len(cubin) + len(names), 100 * len(entry), link=count, entry_size=len(entry))
    forged = with_sections(cubin, [strtab, symtab], names + entry * 100)
    with pytest.raises(
        InputError, match=r"its kernels' names add up to more than its own \d+ bytes; refusing"
    ):
        read_cubin(forged, "k")
    # the real kernels' few names, then the long one until the names add up to more than the file
    assert len(names_read) <= 5 + len(forged) // len(names) + 1 < 100


def test_reading_stops_at_the_deadline(artifacts):  # noqa: F811
    from ncuverify.build.limits import Deadline

    with pytest.raises(
        InputError, match=r"^k: reading its tables took longer than 0 s; refusing to read it$"
    ):
        read_cubin(artifacts("kernels.cubin").read_bytes(), "k", Deadline(0))


def test_a_section_past_the_end_is_refused(artifacts):  # noqa: F811
    cubin = artifacts("kernels.cubin").read_bytes()
    forged = with_sections(cubin, [new_header(PROGBITS, len(cubin), 2**20)])
    with pytest.raises(InputError, match=r"not a readable cubin \(its section \d+ lies past its end\)"):
        read_cubin(forged, "k")
