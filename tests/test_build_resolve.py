"""The include resolver: what a kernel's preprocessor may read, refused before NVRTC runs where it lies
outside the project. The planted files hold a secret that must never reach a message."""

import os
from pathlib import Path

import pytest
from build_projects import outside_message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncuverify.build.resolve import GraphLimits, Roots, Source, resolve
from ncuverify.errors import InputError

SECRET = "SECRET_7c41e9"


@pytest.fixture
def layout(tmp_path):
    """A project (/project) with a kernel folder, a sibling folder and an include folder, and beside it
    a folder that is not the project's, holding a secret."""
    project = tmp_path / "project"
    for folder in ("kernels", "common", "include/sub"):
        (project / folder).mkdir(parents=True)
    (project / ".ncuverify-root").write_text("")
    (project / "common" / "util.cuh").write_text("#pragma once\n#define UTIL 1\n")
    (project / "include" / "sub" / "deep.h").write_text('#include "../top.h"\n')
    (project / "include" / "top.h").write_text("#define TOP 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.h").write_text(f"{SECRET}\n")
    (outside / "shared.h").write_text('#include "secret.h"\n')
    return project, outside


def roots_of(project: Path, *allowed: Path) -> Roots:
    return Roots(project=project.resolve(), allowed=tuple(a.resolve() for a in allowed))


def walk(project: Path, text: str, *allowed: Path, include_dirs=(), limits: GraphLimits | None = None):
    kernels = project / "kernels"
    source = Source(text.encode(), "kernels/k.cu", kernels)
    folders = [kernels, *(project / d for d in include_dirs)]
    return resolve(source, folders, roots_of(project, *allowed), limits or GraphLimits())


def refusal(project: Path, text: str, *allowed: Path, **kwargs) -> str:
    with pytest.raises(InputError) as error:
        walk(project, text, *allowed, **kwargs)
    message = str(error.value)
    assert SECRET not in message
    return message


# --- refusals -----------------------------------------------------------------------------------------------


def test_an_absolute_include_outside_is_refused(layout):
    project, outside = layout
    message = refusal(project, f'int a;\n#include "{outside}/secret.h"\n')
    assert message == f'kernels/k.cu:2: #include "{outside}/secret.h": {outside_message(project)}'


def test_system_files_are_refused(layout, monkeypatch):
    project, _ = layout
    monkeypatch.setenv("NCUVERIFY_TEST_TOKEN", SECRET)
    for target in ("/proc/self/environ", "/etc/passwd"):
        message = refusal(project, f'#include "{target}"\n')
        assert message == f'kernels/k.cu:1: #include "{target}": {outside_message(project)}'
        assert "root:" not in message


def test_an_absolute_path_inside_the_project_is_refused_too(layout):
    project, _ = layout
    header = (project / "common" / "util.cuh").resolve()
    assert refusal(project, f'#include "{header}"\n') == (
        f'kernels/k.cu:1: #include "{header}": an absolute path; name the header relative to the including '
        "file or an include folder"
    )


def test_climbing_out_with_dots_is_refused(layout):
    project, _ = layout
    message = refusal(project, '#include "../../outside/secret.h"\n')
    assert message == f'kernels/k.cu:1: #include "../../outside/secret.h": {outside_message(project)}'


def test_a_link_out_of_the_project_is_refused(layout):
    project, outside = layout
    (project / "kernels" / "evil.h").symlink_to(outside / "secret.h")
    (project / "linked").symlink_to(outside, target_is_directory=True)
    assert (
        refusal(project, '#include "evil.h"\n')
        == f'kernels/k.cu:1: #include "evil.h": {outside_message(project)}'
    )
    assert refusal(project, '#include "../linked/secret.h"\n').endswith(outside_message(project))


def test_a_header_is_refused_where_it_includes_outside(layout):
    project, _ = layout
    (project / "common" / "bad.cuh").write_text('// fine so far\n\n#include "../../outside/secret.h"\n')
    message = refusal(project, '#include "../common/bad.cuh"\n')
    assert message == f'common/bad.cuh:3: #include "../../outside/secret.h": {outside_message(project)}'


def test_a_computed_include_is_refused(layout):
    project, _ = layout
    text = '#define WHERE "../../outside/secret.h"\n#include WHERE\n'
    assert refusal(project, text) == (
        "kernels/k.cu:2: #include WHERE: a header name computed from macros cannot be checked; name the header "
        "in quotes or angle brackets"
    )


def test_has_include_outside_and_its_aliases_are_refused(layout):
    project, _ = layout
    assert refusal(project, '#if __has_include("/etc/passwd")\n#endif\n').endswith(outside_message(project))
    assert refusal(project, "#define PROBE __has_include\n") == (
        "kernels/k.cu:1: #define PROBE __has_include: __has_include without its header name in parentheses "
        "(an alias, or one pasted from tokens) could test any path, and cannot be checked"
    )


def test_a_special_file_is_refused_unread(layout):
    project, _ = layout
    os.mkfifo(project / "kernels" / "pipe.h")  # reading it would wait for a writer
    assert (
        refusal(project, '#include "pipe.h"\n')
        == 'kernels/k.cu:1: #include "pipe.h": kernels/pipe.h is not a regular file'
    )


def test_every_folder_a_header_may_be_found_in_is_checked(layout):
    # NVRTC takes the first it finds; whichever that is, the other must be allowed too.
    project, outside = layout
    (project / "include" / "twin.h").write_text("")
    (project / "common" / "twin.h").symlink_to(outside / "secret.h")
    message = refusal(project, "#include <twin.h>\n", include_dirs=("include", "common"))
    assert message.endswith(outside_message(project))


# --- what is walked -----------------------------------------------------------------------------------------


def test_headers_anywhere_in_the_project_are_walked(layout):
    project, _ = layout
    files = walk(project, '#include "../common/util.cuh"\n#include <sub/deep.h>\n', include_dirs=("include",))
    assert [(f.root, f.relative) for f in files] == [
        ("project", "common/util.cuh"),
        ("project", "include/sub/deep.h"),
        ("project", "include/top.h"),
    ]


def test_an_allowed_folder_is_walked_like_the_project(layout):
    project, outside = layout
    (outside / "ok.h").write_text("#define OK 1\n")
    files = walk(project, f'#include "{os.path.relpath(outside, project / "kernels")}/ok.h"\n', outside)
    assert [(f.root, f.relative) for f in files] == [("allowed", "ok.h")]
    # ... and what it includes is checked like the project's: secret.h is in the allowed folder too.
    assert [(f.root, f.relative) for f in walk(project, '#include "../../outside/shared.h"\n', outside)] == [
        ("allowed", "secret.h"),
        ("allowed", "shared.h"),
    ]


def test_the_cuda_headers_are_trusted_and_not_walked(layout):
    project, _ = layout
    from ncuverify.build import cuda_include_dirs

    toolkit = tuple(Path(d).resolve() for d in cuda_include_dirs())
    if not toolkit:
        pytest.skip("no CUDA headers here")
    roots = Roots(project=project.resolve(), toolkit=toolkit)
    source = Source(b"#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n", "k.cu", project / "kernels")
    assert resolve(source, list(toolkit), roots) == ()


def test_a_header_not_found_is_left_to_nvrtc(layout):
    project, _ = layout
    assert walk(project, '#include "nowhere.h"\n#include <nowhere/either.h>\n') == ()


def test_inline_source_has_no_folder_of_its_own(layout):
    project, _ = layout
    (project / "kernels" / "near.h").write_text("")
    source = Source(b'#include "near.h"\n', "f.yaml:inline", None)
    assert resolve(source, [project / "include"], roots_of(project)) == ()


def test_a_header_that_includes_itself_is_walked_once(layout):
    project, _ = layout
    (project / "kernels" / "self.h").write_text('#include "self.h"\n')
    assert [f.relative for f in walk(project, '#include "self.h"\n')] == ["kernels/self.h"]


# --- bounds -------------------------------------------------------------------------------------------------


def test_the_number_of_files_is_bounded(layout):
    project, _ = layout
    for i in range(5):
        (project / "kernels" / f"h{i}.h").write_text("")
    text = "".join(f'#include "h{i}.h"\n' for i in range(5))
    assert refusal(project, text, limits=GraphLimits(max_files=3)) == (
        'kernels/k.cu:4: #include "h3.h": more than 3 files are included; refusing to read on'
    )


def test_the_depth_is_bounded(layout):
    project, _ = layout
    for i in range(4):
        (project / "kernels" / f"d{i}.h").write_text(f'#include "d{i + 1}.h"\n')
    (project / "kernels" / "d4.h").write_text("")
    assert refusal(project, '#include "d0.h"\n', limits=GraphLimits(max_depth=3)) == (
        'kernels/d2.h:1: #include "d3.h": includes nest more than 3 deep; refusing to read on'
    )


def test_the_size_of_a_file_is_bounded(layout):
    project, _ = layout
    (project / "kernels" / "big.h").write_bytes(b"/" * 2048)
    assert refusal(project, '#include "big.h"\n', limits=GraphLimits(max_file_bytes=1024)) == (
        'kernels/k.cu:1: #include "big.h": kernels/big.h: larger than 0 MiB; refusing to read it'
    )


# --- properties ---------------------------------------------------------------------------------------------

_LINE = st.tuples(
    st.sampled_from(["", " ", "\t", "/* c */", "*/", "x; ", "\\\n", "\r"]),
    st.sampled_from(["#", "%:", "??=", "# ", ""]),
    st.sampled_from(["", " ", "/**/", "/*\n*/", "\\\n", "\t"]),
    st.sampled_from(
        ["include", "include_next", "embed", "incl\\\nude", "if __has_include(", "define X", "if"]
    ),
    st.sampled_from(["", " ", "/**/", "\\\n"]),
    st.sampled_from(
        [
            '"link.h"',
            '"../../outside/secret.h"',
            '"../kernels/../../outside/secret.h"',
            "<secret.h>",
            '"/etc/passwd"',
            "MACRO",
            '"../common/util.cuh"',
            "<util.cuh>",
            "<sub/deep.h>",
            '"nowhere.h"',
            "",
        ]
    ),
    st.sampled_from(["\n", ")\n", "\r\n", "\\\n", " // c\n", "", "\n#endif\n"]),
).map("".join)
_NOISE = st.sampled_from(["/*", "*/", "//", '"', 'R"(', ')"', "\\", "??/", "\n", "\n#if 0\n", "\n#endif\n"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_LINE, _NOISE), max_size=12).map("".join))
def test_arbitrary_directives_never_reach_outside(layout, text):
    project, outside = layout
    link = project / "kernels" / "link.h"
    if not link.is_symlink():
        link.symlink_to(outside / "secret.h")
    try:
        files = walk(project, text, include_dirs=("include", "common"))
    except InputError as error:
        assert SECRET not in str(error)
        return
    for file in files:
        assert file.path.is_relative_to(project.resolve())
        assert SECRET not in file.path.read_text()


# --- the host compiler's system headers (compiler: nvcc) ------------------------------------------------


def system_walk(project: Path, system: Path, text: str):
    kernels = project / "kernels"
    roots = Roots(project=project.resolve(), system=(system.resolve(),))
    return resolve(Source(text.encode(), "kernels/k.cu", kernels), [kernels, system.resolve()], roots)


def test_a_system_header_is_trusted_and_not_walked(layout, tmp_path):
    project, _ = layout
    system = tmp_path / "system"
    system.mkdir()
    (system / "cstdio").write_text('#include "../outside/secret.h"\n')
    assert system_walk(project, system, "#include <cstdio>\n") == ()


def test_a_header_outside_every_root_is_still_refused_with_system_headers(layout, tmp_path):
    project, _ = layout
    system = tmp_path / "system"
    system.mkdir()
    with pytest.raises(InputError, match="lies outside the project"):
        system_walk(project, system, '#include "../../outside/secret.h"\n')


def test_a_project_file_reached_only_through_a_system_folder_is_refused(layout, tmp_path):
    project, _ = layout
    system = tmp_path / "system"
    system.mkdir()
    (project / "kernels" / "inner.h").write_text("int inner;\n")
    (system / "inner_link.h").symlink_to(project / "kernels" / "inner.h")
    with pytest.raises(InputError, match="reached through the host compiler's system header folder"):
        system_walk(project, system, "#include <inner_link.h>\n")
