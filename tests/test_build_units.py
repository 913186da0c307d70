"""A kernel's compile unit and the NVRTC command line it stands for."""

from build_projects import spec_with

from ncuverify.build import build_spec
from ncuverify.build.resolve import Roots
from ncuverify.build.units import nvrtc_options, unit_of


def test_nvrtc_options_carry_the_choices(tmp_path):

    spec = spec_with(
        tmp_path,
        {
            "k": {
                "source": "x",
                "entry": "k",
                "lineinfo": True,
                "std": "c++20",
                "max_registers": 40,
                "defines": {"A": 1, "B": None},
                "flags": ["--use_fast_math"],
            }
        },
    )
    roots = Roots(project=tmp_path.resolve())
    options = nvrtc_options(unit_of(spec.path, "k", spec.content.kernels["k"], "sm_90", roots))
    for expected in [
        "-arch=sm_90",
        "--std=c++20",
        "--ptxas-options=-v",
        "--generate-line-info",
        "--maxrregcount=40",
        "--define-macro=A=1",
        "--define-macro=B",
        "--no-cache",
    ]:
        assert expected in options
    assert options[-1] == "--use_fast_math"


def test_allowed_flags_are_passed_in_full(repo):

    root, _ = repo
    (root / "include").mkdir()
    (root / "include" / "width.h").write_text("#define WIDTH 4\n")
    flags = [
        "-DA=3",
        "-D",
        "B",
        "-U",
        "C",
        "--use_fast_math",
        "-ftz=true",
        "-Xptxas",
        "--warn-on-spills",
        "-I",
        "include",
    ]
    source = (
        '#include <width.h>\nextern "C" __global__ void k(float* o) { o[threadIdx.x] = A * B * WIDTH; }\n'
    )
    spec = spec_with(root, {"k": {"source": source, "entry": "k", "flags": flags}})
    unit = unit_of(spec.path, "k", spec.content.kernels["k"], "sm_90", Roots(project=root.resolve()))
    assert list(unit.options) == [
        "--define-macro=A=3",
        "--define-macro=B",
        "--undefine-macro=C",
        "--use_fast_math",
        "--ftz=true",
        "--ptxas-options=--warn-on-spills",
    ]
    assert unit.include_dirs == (str((root / "include").resolve()),)
    assert build_spec(spec, "sm_90")["k"].symbol == "k"
