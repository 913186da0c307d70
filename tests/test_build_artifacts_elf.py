"""A cubin's ELF read for its arch and kernels: crafted or cut headers and tables are refused."""

import struct

import pytest
from artifact_builds import artifacts  # noqa: F401 (a fixture)

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
