"""Kernels read from built artifacts: cubins extracted by cuobjdump, their arch from the ELF header,
their facts from the resource table and SASS; and the artifacts and tools that lie, hang or are none."""

import pytest
from artifact_builds import artifacts  # noqa: F401 (a fixture)

from ncuverify.build import artifacts as reading
from ncuverify.build.artifacts import artifact_cubins, read_artifact
from ncuverify.errors import InputError

KERNELS = ["ns::copy", "scale", "stride<float>", "twice", "twice"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kernels.cubin", "kernels.o", "libkernels.a", "libkernels.so", "program"])
def test_every_kind_of_artifact_gives_the_kernels_and_their_facts(artifacts, name):  # noqa: F811
    kernels = read_artifact(artifacts(name), "sm_90", sass=True)
    assert [k.name for k in kernels] == KERNELS
    by_name = {k.name: k for k in kernels}
    strided = by_name["stride<float>"]
    assert strided.arch == "sm_90" and strided.symbol == "_Z6strideIfEvPT_i"
    assert strided.signature == "void stride<float>(float*, int)"
    facts = strided.facts.metrics()
    assert facts["static__registers_per_thread"] > 0
    assert facts["static__stack_frame_bytes"] == 0
    assert facts["static__sass_instructions"] == len(strided.facts.sass)
    assert strided.facts.count("BAR") == 1  # the __syncthreads
    # Only a compiler's report says these.
    assert "static__spill_store_bytes" not in facts and "static__barriers" not in facts


def test_a_fatbin_gives_the_cubin_of_the_arch_asked(artifacts):  # noqa: F811
    path = artifacts("kernels.fatbin")
    assert {k.arch for k in read_artifact(path, "sm_80")} == {"sm_80"}
    assert {k.arch for k in read_artifact(path, None)} == {"sm_80", "sm_90"}
    with pytest.raises(InputError, match=r"holds no cubin for sm_100; it holds cubins for sm_80, sm_90"):
        read_artifact(path, "sm_100")


def test_an_artifact_read_again_comes_from_the_compile_cache(artifacts, tmp_path, monkeypatch):  # noqa: F811
    """cuobjdump's and nvdisasm's outputs are kept by the cubin's digest: a library is read once."""
    from ncuverify.build.cache import CompileCache

    path, cache = artifacts("kernels.fatbin"), CompileCache(tmp_path / "cache")
    first = read_artifact(path, "sm_90", cache=cache)
    calls = []
    monkeypatch.setattr(reading, "tool_outputs", lambda *args: calls.append(args) or ("", None))
    again = read_artifact(path, "sm_90", cache=cache)
    assert calls == [] and again == first
    read_artifact(path, "sm_80", cache=cache)  # another cubin: its tools run
    assert len(calls) == 1


def test_the_shared_memory_of_an_sm80_cubin_is_its_static_shared_memory(artifacts):  # noqa: F811
    kernels = {k.name: k for k in read_artifact(artifacts("kernels.fatbin"), "sm_80")}
    assert kernels["stride<float>"].facts.metrics()["static__shared_static_bytes"] == 64 * 4


def test_ptx_only_says_so(artifacts):  # noqa: F811
    with pytest.raises(InputError, match=r"holds PTX only \(sm_90\), no cubin"):
        read_artifact(artifacts("ptx_only.fatbin"), "sm_90")


def test_a_file_that_is_no_artifact_is_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not device code\n")
    with pytest.raises(InputError, match=r"notes\.txt: not an artifact cuobjdump can read"):
        read_artifact(text, "sm_90")


def test_a_truncated_cubin_is_refused(artifacts, tmp_path):  # noqa: F811
    cut = tmp_path / "cut.cubin"
    cut.write_bytes(artifacts("kernels.cubin").read_bytes()[:200])
    with pytest.raises(InputError, match=r"cut\.cubin: not a readable cubin"):
        artifact_cubins(cut)


def test_a_folder_or_fifo_is_refused(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    for name in ("fifo", ""):
        with pytest.raises(InputError, match="not a regular file"):
            artifact_cubins(tmp_path / name)


def test_an_oversized_artifact_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_ARTIFACT_BYTES", 10)
    big = tmp_path / "big.so"
    big.write_bytes(b"x" * 11)
    with pytest.raises(InputError, match="larger than"):
        artifact_cubins(big)


@pytest.fixture
def fake_cuobjdump(stand_in_tool, monkeypatch):
    """cuobjdump replaced by a shell script written per test; the temporary folders are watched."""

    def write(script: str):
        tool, scratch = stand_in_tool(script, "cuobjdump")
        monkeypatch.setattr(reading, "find_tool", lambda name: tool)
        return scratch

    return write


def test_a_cuobjdump_that_hangs_is_stopped(fake_cuobjdump, tmp_path):
    scratch = fake_cuobjdump("sleep 300")
    (tmp_path / "lib.so").write_bytes(b"\x7fELF not cuda")
    with pytest.raises(InputError, match=r"lib\.so: cuobjdump did not finish within 0\.5 s; stopped"):
        artifact_cubins(tmp_path / "lib.so", timeout_s=0.5)
    assert list(scratch.iterdir()) == []


def test_a_cuobjdump_that_lies_about_the_arch_is_caught(fake_cuobjdump, artifacts, tmp_path):  # noqa: F811
    cubin = artifacts("kernels.cubin")  # an sm_90 cubin, said to be sm_80
    fake_cuobjdump(f"cp {cubin} artifact.1.sm_80.cubin")
    (tmp_path / "lib.so").write_bytes(b"junk")
    with pytest.raises(InputError, match=r"cubin 1 \(sm_80\): cuobjdump says sm_80, its ELF header sm_90"):
        artifact_cubins(tmp_path / "lib.so")


@pytest.mark.parametrize("written", ["notes.txt", "sub/artifact.1.sm_90.cubin"])
def test_a_file_cuobjdump_should_not_write_is_refused(fake_cuobjdump, tmp_path, written):
    folder = written.rsplit("/", 1)[0] if "/" in written else "."
    fake_cuobjdump(f"mkdir -p {folder}; echo x > {written}")
    (tmp_path / "lib.so").write_bytes(b"junk")
    with pytest.raises(InputError, match="which no cubin it extracts is named"):
        artifact_cubins(tmp_path / "lib.so")


def test_without_cuobjdump_an_artifact_cannot_be_read(monkeypatch, tmp_path):
    monkeypatch.setattr(reading, "find_tool", lambda name: None)
    (tmp_path / "lib.so").write_bytes(b"junk")
    with pytest.raises(InputError, match="needs cuobjdump, which is not installed here"):
        artifact_cubins(tmp_path / "lib.so")


def test_too_many_cubins_are_refused(fake_cuobjdump, tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_CUBINS", 2)
    fake_cuobjdump("for i in 1 2 3; do echo x > artifact.$i.sm_90.cubin; done")
    (tmp_path / "lib.so").write_bytes(b"junk")
    with pytest.raises(InputError, match="holds more than 2 cubins"):
        artifact_cubins(tmp_path / "lib.so")


def test_a_cubin_larger_than_one_may_be_is_refused(fake_cuobjdump, artifacts, tmp_path, monkeypatch):  # noqa: F811
    """Whether the artifact is a cubin or cuobjdump extracted it (its headers said less, say)."""
    monkeypatch.setattr(reading, "MAX_CUBIN_BYTES", 1000)
    with pytest.raises(
        InputError, match=r"kernels\.cubin: a cubin of [\d,]+ bytes, more than the 1,000 bytes"
    ):
        artifact_cubins(artifacts("kernels.cubin"))
    fake_cuobjdump("head -c 1001 /dev/zero > artifact.2.sm_90.cubin")
    (tmp_path / "lib.so").write_bytes(b"junk")
    with pytest.raises(
        InputError, match=r"lib\.so: cubin 2 \(sm_90\): a cubin of 1,001 bytes, more than the 1,000"
    ):
        artifact_cubins(tmp_path / "lib.so")


def test_extracted_cubins_larger_than_the_total_are_refused(fake_cuobjdump, tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_UNPACKED_BYTES", 1500)
    fake_cuobjdump("for i in 1 2; do head -c 1000 /dev/zero > artifact.$i.sm_90.cubin; done")
    (tmp_path / "lib.so").write_bytes(b"junk")
    with pytest.raises(InputError, match="holds more than 4096 cubins or 1,500 bytes of them"):
        artifact_cubins(tmp_path / "lib.so")
