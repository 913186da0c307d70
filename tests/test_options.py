"""The options of a run: one factory, with the command line's defaults, for every caller."""

import copy
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES
from test_pytest_plugin import run_pytest
from typer.testing import CliRunner

import ncuverify
from ncuverify import options, pipeline
from ncuverify.build import BuildLimits
from ncuverify.build import cache as compile_cache
from ncuverify.build.cache import CompileCache
from ncuverify.cli import app
from ncuverify.errors import ExitCode, InputError
from ncuverify.profile import NcuOptions
from ncuverify.results import FileResult


def test_a_run_compiles_through_the_cache_remembers_passes_and_explains_unless_told_not_to():
    made = options.for_run()
    assert made.cache == CompileCache(compile_cache.default_folder())
    assert made.passes is not None and made.passes.path == compile_cache.passes_file()
    assert made.explain and made.build == BuildLimits() and made.ncu == NcuOptions()
    uncached = options.for_run(cache=False, explain=False)
    assert (uncached.cache, uncached.passes, uncached.explain) == (None, None, False)


def test_build_limits_refuse_a_missing_folder_and_a_timeless_timeout_naming_the_options(tmp_path):
    (tmp_path / "headers").mkdir()
    limits = options.build_limits([tmp_path / "headers", tmp_path / "headers" / ".." / "headers"], 30.0)
    assert limits == BuildLimits(allowed_roots=((tmp_path / "headers").resolve(),), timeout_s=30.0)
    with pytest.raises(InputError) as refused:
        options.build_limits([tmp_path / "none"], float("nan"), "allow_include", "compile_timeout")
    assert str(refused.value).splitlines() == [
        f"allow_include: {tmp_path / 'none'}: no such folder",
        "compile_timeout: nan: give a number of seconds above 0 and at most 604800",
    ]


@pytest.fixture
def seen(monkeypatch) -> list[options.CheckOptions]:
    """The options every run is given (as they were then: a run may learn ncu's passes); no file is
    checked."""
    recorded: list[options.CheckOptions] = []

    def record(files, run):
        recorded.append(copy.deepcopy(run))
        return [FileResult(path, []) for path in files]

    monkeypatch.setattr(pipeline, "check_files", record)
    return recorded


def test_the_api_the_plugin_and_the_command_line_make_the_same_options(seen, pytester, tmp_path):
    sample = DATA / "sample.yaml"
    (tmp_path / "headers").mkdir()
    ncuverify.check(sample, arch="sm_90", from_profile=FIXTURES, allow_include=[tmp_path / "headers"])
    result = CliRunner().invoke(
        app,
        [
            "check",
            "--arch",
            "sm_90",
            "--from-profile",
            str(FIXTURES),
            "--allow-include",
            str(tmp_path / "headers"),
            str(sample),
        ],
    )
    assert result.exit_code == ExitCode.OK, result.output
    folder = pytester.path / "expectations"
    folder.mkdir()
    (folder / "sample.yaml").write_text(sample.read_text())
    pytester.makeini(f"[pytest]\nncuverify_allow_include = {tmp_path / 'headers'}\n")
    run_pytest(
        pytester, "expectations", "--ncuverify-arch", "sm_90",
        "--ncuverify-from-profile", str(FIXTURES),
    )  # fmt: skip
    api, cli, plugin = seen
    assert plugin.loaded is not None and list(plugin.loaded) == [(folder / "sample.yaml").resolve()]
    assert api == cli == replace(plugin, loaded=None), "the plugin gives the files as it read them, no more"
    assert api.cache is not None and api.passes is not None
    assert api.build.allowed_roots == ((tmp_path / "headers").resolve(),)


def test_the_plugin_takes_the_compile_limit_from_the_ini_file_and_refuses_a_wrong_one(seen, pytester):
    folder = pytester.path / "expectations"
    folder.mkdir()
    (folder / "sample.yaml").write_text((DATA / "sample.yaml").read_text())
    pytester.makeini("[pytest]\nncuverify_compile_timeout = 30\n")
    run_pytest(pytester, "expectations")
    assert [run.build.timeout_s for run in seen] == [30.0]
    for wrong, said in (("soon", "'soon': give a number of seconds"), ("-1", "-1.0: give a number")):
        pytester.makeini(f"[pytest]\nncuverify_compile_timeout = {wrong}\n")
        refused = run_pytest(pytester, "expectations")
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        refused.stderr.fnmatch_lines([f"*ncuverify_compile_timeout: {said}*"])
    assert len(seen) == 1


def test_the_api_refuses_an_include_folder_that_is_not_one(seen, tmp_path):
    with pytest.raises(InputError, match=r"allow_include: .*: no such folder"):
        ncuverify.check(DATA / "sample.yaml", allow_include=[Path(tmp_path / "none")])
    assert seen == []


def test_sources_are_built_for_the_arch_given_else_the_gpus_else_sm_90_said():
    from conftest import NO_GPU

    from ncuverify.environment import Gpu

    with_gpu = replace(NO_GPU, gpu=Gpu(0, "NVIDIA A100", "sm_80", "550.0"), problem=None)
    assert options.source_arch("sm_89", with_gpu) == ("sm_89", None)
    assert options.source_arch(None, with_gpu) == ("sm_80", None)
    assert options.source_arch(None, NO_GPU) == (
        "sm_90",
        "no GPU here: building for sm_90 (pass --arch to choose)",
    )
