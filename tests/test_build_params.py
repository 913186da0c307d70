"""A kernel's parameters read from its cubin, and a case's arguments checked against them before
anything runs."""

from pathlib import Path

import pytest
import yaml
from artifact_builds import artifacts  # noqa: F401 (a fixture)
from conftest import COMPILE_CACHE, DATA
from forged_cubins import PROGBITS, new_header, with_sections
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.build import build_spec
from ncuverify.build.artifacts_elf import sections
from ncuverify.build.params import check_arguments, kernel_parameters, parameter_sizes
from ncuverify.errors import ExitCode, InputError
from ncuverify.spec import load


@pytest.fixture(scope="module")
def sample_builds():
    return build_spec(load(DATA / "sample.yaml"), "sm_90", COMPILE_CACHE)


def test_the_cubin_says_each_parameter_s_size_in_order(sample_builds):
    # read_stride<1>(const float*, float*); scale(const float*, float*, float, int)
    stride = sample_builds["read_stride1"]
    assert parameter_sizes(stride.cubin, stride.symbol) == (8, 8)
    scale = sample_builds["scale"]
    assert parameter_sizes(scale.cubin, scale.symbol) == (8, 8, 4, 4)


def test_a_cubin_that_does_not_say_gives_no_sizes(sample_builds):
    cubin = sample_builds["scale"].cubin
    assert parameter_sizes(cubin, "no_such_kernel") is None
    assert parameter_sizes(cubin[:100], "scale") is None  # cut short
    assert parameter_sizes(b"not an ELF file", "scale") is None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096), st.integers(0, 2**16), st.binary(min_size=1, max_size=8))
def test_any_damage_to_a_cubin_gives_sizes_or_none(sample_builds, noise, at, patch):
    """The cubin is untrusted: whatever its bytes, the reader answers, or refuses in one line a cubin
    whose tables are past their bounds (damage can make its sections add up to more than it holds);
    nothing else is raised."""
    cubin = sample_builds["scale"].cubin
    at %= len(cubin)
    damaged = cubin[:at] + patch + cubin[at + len(patch) :]
    for data in (noise, b"\x7fELF\x02\x01" + noise, damaged, cubin[:at]):
        try:
            sizes = parameter_sizes(data, "scale")
        except InputError as error:
            assert "refusing to read" in str(error) and "\n" not in str(error)
            continue
        assert sizes is None or all(isinstance(size, int) for size in sizes)


def test_every_kernel_of_a_cubin_is_read_at_once_its_section_table_once(artifacts, monkeypatch):  # noqa: F811
    from ncuverify.build import params
    from ncuverify.build.artifacts_elf import read_cubin

    cubin = artifacts("kernels.cubin").read_bytes()
    symbols = read_cubin(cubin, "k").kernels
    tables = []
    monkeypatch.setattr(params, "sections", lambda data: tables.append(1) or sections(data))
    found = kernel_parameters(cubin, symbols, "k")
    assert len(tables) == 1
    assert found == {symbol: parameter_sizes(cubin, symbol) for symbol in symbols}
    assert found["scale"] == (8, 4) and found["_ZN2ns4copyEPfPKfi"] == (8, 8, 4)


def test_more_info_records_than_the_bound_are_refused(artifacts, monkeypatch):  # noqa: F811
    from ncuverify.build import params

    monkeypatch.setattr(params, "MAX_INFO_RECORDS", 3)
    cubin = artifacts("kernels.cubin").read_bytes()
    with pytest.raises(InputError, match=r"^k: its kernels' \.nv\.info sections hold more than 3 records"):
        kernel_parameters(cubin, ["scale", "_Z5twicePf"], "k")


def test_thousands_of_sections_over_the_same_bytes_are_refused_at_once(artifacts, monkeypatch):  # noqa: F811
    from ncuverify.build import params

    names_read: list[object] = []
    monkeypatch.setattr(params, "section_name", lambda data, names, section: names_read.append(section))
    cubin = artifacts("kernels.cubin").read_bytes()
    forged = with_sections(cubin, [new_header(PROGBITS, 0, len(cubin))] * 5000)
    with pytest.raises(InputError, match=r"^k: its \d+ sections add up to \d+ bytes, more than 4 times its"):
        kernel_parameters(forged, ["scale"], "k")
    assert names_read == [], "sections were looked at before the refusal"


def test_the_sample_s_cases_fit_their_kernels(sample_builds):
    check_arguments(load(DATA / "sample.yaml"), sample_builds)


def edited_sample(tmp_path: Path, old: str, new: str) -> Path:
    text = (DATA / "sample.yaml").read_text()
    assert old in text
    path = tmp_path / "sample.yaml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("      - {int32: 262144}\n", "", "args: 3 arguments, but kernel scale takes 4 parameters"),
        (
            "      - {int32: 262144}\n",
            "      - {int64: 262144}\n",
            "args[3]: an int64 (8 bytes), but parameter 3 of kernel scale is 4 bytes",
        ),
        (
            "      - {buffer: float32, count: 262144, fill: constant, value: 2.5}\n",
            "      - {float32: 2.5}\n",
            "args[0]: a float32 (4 bytes), but parameter 0 of kernel scale is 8 bytes",
        ),
    ],
    ids=["one_too_few", "another_size", "a_scalar_for_a_buffer"],
)
def test_arguments_that_do_not_fit_are_refused_naming_the_argument(tmp_path: Path, old, new, problem):
    path = edited_sample(tmp_path, old, new)
    spec = load(path)
    with pytest.raises(InputError) as refused:
        check_arguments(spec, build_spec(spec, "sm_90", COMPILE_CACHE))
    assert str(refused.value) == f"{path}: cases.scale_2d.{problem}"


def test_check_and_lint_refuse_it_with_exit_2_and_the_argument_named(tmp_path: Path):
    from cli_invoke import invoke_command

    path = edited_sample(tmp_path, "      - {int32: 262144}\n", "")
    message = f"{path}: cases.scale_2d.args: 3 arguments, but kernel scale takes 4 parameters"
    for command in (["check", "--static-only"], ["lint"]):
        result = invoke_command(*command, "--arch", "sm_90", str(path))
        assert result.exit_code == ExitCode.BAD_INPUT, result.stdout
        assert message in " ".join(result.stdout.split()), result.stdout


def test_a_struct_is_sized_by_its_c_layout_and_a_grid_constant_one_counts_alike():
    spec = load(DATA / "structs.yaml")
    builds = build_spec(spec, "sm_90", COMPILE_CACHE)
    # take_params(Params): one 48-byte parameter; take_grid_constant(const __grid_constant__ Small,
    # __nv_bfloat16, bool): 32, 2 and 1 bytes. The buffers only the structs point to are no parameters.
    params, grid_constant = builds["params"], builds["grid_constant"]
    assert parameter_sizes(params.cubin, params.symbol) == (48,)
    assert parameter_sizes(grid_constant.cubin, grid_constant.symbol) == (32, 2, 1)
    check_arguments(spec, builds)


def test_a_struct_of_another_size_is_refused_naming_the_parameter_and_both_sizes(tmp_path: Path):
    text = (DATA / "structs.yaml").read_text()
    (tmp_path / "structs.yaml").write_text(text.replace("        align: 16\n", ""))  # 24 bytes, not 32
    spec = load(tmp_path / "structs.yaml")
    with pytest.raises(InputError) as refused:
        check_arguments(spec, build_spec(spec, "sm_90", COMPILE_CACHE))
    assert str(refused.value) == (
        f"{tmp_path / 'structs.yaml'}: cases.grid_constant.args[0]: a struct (24 bytes), but parameter 0 of"
        " kernel grid_constant is 32 bytes"
    )


@pytest.mark.slow
def test_a_kernel_of_more_than_4_kib_of_parameters_is_read_too(tmp_path: Path):
    """ptxas describes its parameters in EIATTR_KPARAM_INFO_V2 records: read as the others, not taken for
    a kernel of none. And a kernel of 5000 one-byte parameters has them all read."""
    chars = ", ".join(f"char a{i}" for i in range(5000))
    kernels = {
        "wide": {
            "source": 'struct Big { char bytes[5000]; };\nextern "C" __global__ void wide(float* out, Big big,'
            " short h) { out[0] = big.bytes[1] + h; }\n",
            "entry": "wide",
        },
        "many": {
            "source": f'extern "C" __global__ void many(float* out, {chars}) {{ out[0] = a0 + a4999; }}\n',
            "entry": "many",
        },
    }
    case = {"kernel": "wide", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 32}]}
    claim = {"id": "r", "case": "c", "metric": "static__registers_per_thread", "expect": {"at_most": 255}}
    claim["cite"] = {"document": "d.txt", "section": "1", "figure": "f"}
    document = {"arch": "sm_90", "kernels": kernels, "cases": {"c": case}, "claims": [claim]}
    (tmp_path / ".ncuverify-root").touch()
    (tmp_path / "wide.yaml").write_text(yaml.safe_dump(document))
    spec = load(tmp_path / "wide.yaml")
    builds = build_spec(spec, "sm_90", COMPILE_CACHE)
    wide, many = builds["wide"], builds["many"]
    assert parameter_sizes(wide.cubin, wide.symbol) == (8, 5000, 2)
    assert parameter_sizes(many.cubin, many.symbol) == (8, *([1] * 5000))
    with pytest.raises(InputError, match=r"cases\.c\.args: 1 argument, but kernel wide takes 3 parameters"):
        check_arguments(spec, builds)
