"""`binary:` kernels of an expectation file: found in the project, picked by name, judged on their
facts; and the paths, names and claims that are refused."""

import os
import re
import struct

import pytest
import yaml
from artifact_builds import artifacts  # noqa: F401 (a fixture)
from cli_invoke import invoke_command
from forged_cubins import SYMTAB, new_header, with_sections

from ncuverify.build import BuildLimits, build_spec
from ncuverify.build.inventory import build_sets
from ncuverify.build.limits import Deadline
from ncuverify.errors import ExitCode, InputError
from ncuverify.spec import load

CITE = {"document": "d.txt", "section": "1", "figure": "f"}


def write(folder, kernels, claims=(), cases=None):
    """An expectation file; without cases, one case on the first kernel and a claim on its stack."""
    if cases is None:
        kernel = next(iter(kernels))
        cases = {"c": {"kernel": kernel, "grid": 1, "block": 32, "args": []}}
        claims = [
            {
                "id": "stack",
                "case": "c",
                "metric": "static__stack_frame_bytes",
                "expect": {"equals": 0},
                "cite": CITE,
            }
        ]
    content = {"arch": "sm_90", "kernels": kernels, "cases": cases, "claims": list(claims)}
    path = folder / "check.yaml"
    path.write_text(yaml.safe_dump(content))
    return path


def test_an_entry_names_a_kernel_of_a_fatbin_by_its_cpp_name(artifacts):  # noqa: F811
    folder = artifacts("kernels.fatbin").parent
    spec = load(write(folder, {"k": {"binary": "kernels.fatbin", "entry": "stride<float>"}}))
    build = build_spec(spec, "sm_80")["k"]
    assert build.symbol == "_Z6strideIfEvPT_i" and build.arch == "sm_80"
    assert build.cubin[:4] == b"\x7fELF" and build.facts.ptxas is None
    assert build_spec(spec, "sm_90")["k"].arch == "sm_90"


def test_overloads_and_unknown_names_list_the_candidates(artifacts):  # noqa: F811
    folder = artifacts("libkernels.so").parent
    spec = load(
        write(
            folder,
            {
                "a": {"binary": "libkernels.so", "entry": "twice"},
                "b": {"binary": "libkernels.so", "entry": "nope"},
            },
        )
    )
    with pytest.raises(InputError) as raised:
        build_spec(spec, "sm_90")
    assert "kernels.a.entry: 'twice' names 2 kernels: twice(float*)" in str(raised.value)
    assert "no kernel 'nope' in" in str(raised.value)
    assert "(it holds: ns::copy, scale, stride<float>, twice)" in str(raised.value)


def test_a_symbol_names_one_overload(artifacts):  # noqa: F811
    folder = artifacts("libkernels.so").parent
    spec = load(write(folder, {"a": {"binary": "libkernels.so", "entry": "_Z5twicePi"}}))
    assert build_spec(spec, "sm_90")["a"].symbol == "_Z5twicePi"


def test_a_match_entry_selects_a_set_of_an_archive(artifacts):  # noqa: F811
    folder = artifacts("libkernels.a").parent
    kernels = {
        "one": {"binary": "libkernels.a", "entry": "scale"},
        "all": {"binary": "libkernels.a", "match": "twice"},
    }
    spec = load(write(folder, kernels))
    chosen = build_sets(spec, "sm_90")["all"].kernels
    assert [k.signature for k in chosen] == ["twice(float*)", "twice(int*)"]


def check_scale(artifacts, binary, metric, expect):  # noqa: F811
    """`check --static-only` of one claim on the artifact's `scale` kernel."""
    folder = artifacts(binary).parent
    claim = {"id": "claim", "case": "c", "metric": metric, "expect": expect, "cite": CITE}
    args = [{"buffer": "float32", "count": 32}, {"float32": 2.0}]
    case = {"c": {"kernel": "s", "grid": 1, "block": 32, "args": args}}
    path = write(folder, {"s": {"binary": binary, "entry": "scale"}}, [claim], case)
    return invoke_command("check", "--static-only", str(path))


def test_static_claims_hold_on_an_executables_kernel(artifacts, no_gpu):  # noqa: F811
    result = check_scale(artifacts, "program", "static__registers_per_thread", {"at_most": 32})
    assert result.exit_code == ExitCode.OK, result.output
    assert "1 passed" in result.output


def test_a_claim_on_a_fact_no_artifact_carries_is_bad_input(artifacts, no_gpu):  # noqa: F811
    result = check_scale(artifacts, "kernels.o", "static__spill_store_bytes", {"equals": 0})
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "does not say static__spill_store_bytes" in result.output and "sass(STL)" in result.output
    assert "Traceback" not in result.output


def test_a_cubin_of_a_thousand_symbol_tables_is_bad_input_at_once(artifacts, no_gpu, monkeypatch):  # noqa: F811
    """A thousand symbol tables over the same 100_000 symbols: read one after another, half a minute
    and more; refused by their bytes, which add up to far more than the file's, before any is read."""
    looks: list[Deadline] = []  # the loop over a table's symbols looks at its deadline first of all
    monkeypatch.setattr(Deadline, "passed", lambda deadline: looks.append(deadline) or False)
    cubin = artifacts("kernels.cubin").read_bytes()
    symbols = struct.pack("<IBBHQQ", 0, 0x12, 0, 0, 0, 0) * 100_000
    table = new_header(SYMTAB, len(cubin), len(symbols), link=2, entry_size=24)
    (artifacts("kernels.cubin").parent / "tables.cubin").write_bytes(
        with_sections(cubin, [table] * 1000, symbols)
    )
    result = check_scale(artifacts, "tables.cubin", "static__registers_per_thread", {"at_most": 32})
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert looks == [], "symbols were read before the refusal"
    assert re.search(r"tables\.cubin: its \d+ sections add up to \d+ bytes, more than 4 times", result.output)
    assert "refusing to read it" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("option", [{"defines": {"N": 1}}, {"lineinfo": True}, {"flags": ["-G"]}])
def test_compiler_options_are_refused_on_a_binary(tmp_path, option):
    (tmp_path / ".ncuverify-root").touch()
    path = write(tmp_path, {"k": {"binary": "k.cubin", "entry": "k", **option}})
    with pytest.raises(InputError, match="only mean something to a compiler"):
        load(path)


def test_binary_with_file_is_refused(tmp_path):
    path = write(tmp_path, {"k": {"binary": "k.cubin", "file": "k.cu", "entry": "k"}})
    with pytest.raises(InputError, match=r"exactly one of 'file' .*, 'source' .* or 'binary'"):
        load(path)


def test_paths_out_of_the_project_links_out_and_folders_are_refused(artifacts, tmp_path):  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    (project / ".ncuverify-root").touch()
    os.symlink(artifacts("kernels.cubin"), project / "linked.cubin")
    (project / "folder.cubin").mkdir()
    kernels = {
        "out": {"binary": str(artifacts("kernels.cubin")), "entry": "scale"},
        "link": {"binary": "linked.cubin", "entry": "scale"},
        "folder": {"binary": "folder.cubin", "entry": "scale"},
        "gone": {"binary": "gone.cubin", "entry": "scale"},
    }
    with pytest.raises(InputError) as raised:
        build_spec(load(write(project, kernels)), "sm_90")
    message = str(raised.value)
    assert message.count("lies outside the project") == 2
    assert "folder.cubin is not a regular file" in message and "no such file: gone.cubin" in message
    allowed = BuildLimits(allowed_roots=(artifacts("kernels.cubin").parent,))
    only_link = load(write(project, {"link": kernels["link"]}))
    assert build_spec(only_link, "sm_90", limits=allowed)["link"].symbol == "scale"
