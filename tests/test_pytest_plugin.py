"""The pytest plugin, run in a pytester sandbox on the recorded sample (no GPU needed)."""

import shutil
from importlib.metadata import entry_points

import pandas  # noqa: F401  # before pytester's runs, which forget the modules a run imports: numpy imports once
import pytest
from conftest import DATA, FIXTURES


def run_pytest(pytester, *args: str):
    """pytest in the sandbox, with the plugin loaded as `pip install` registers it, or by name where
    the package is used from a checkout (no entry point)."""
    installed = any(e.value.startswith("ncuverify") for e in entry_points(group="pytest11"))
    return (
        pytester.runpytest(*args) if installed else pytester.runpytest("-p", "ncuverify.pytest_plugin", *args)
    )


def sandbox(pytester, text: str | None = None):
    folder = pytester.path / "expectations"
    folder.mkdir()
    (folder / "sample.yaml").write_text(text if text is not None else (DATA / "sample.yaml").read_text())
    return folder


def test_every_claim_is_a_test(pytester):
    sandbox(pytester)
    result = run_pytest(pytester, "expectations", "--ncuverify-from-profile", str(FIXTURES), "-v")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        ["*sample.yaml::contiguous_four_sectors PASSED*", "*sample.yaml::stride32_sector_ratio PASSED*"]
    )


def test_a_failing_claim_fails_its_test_with_the_numbers(pytester):
    sandbox(
        pytester,
        (DATA / "sample.yaml").read_text().replace("expect: {equals: 32}", "expect: {equals: 33}", 1),
    )
    result = run_pytest(pytester, "expectations", "--ncuverify-from-profile", str(FIXTURES))
    result.assert_outcomes(passed=7, failed=1)
    result.stdout.fnmatch_lines(
        ["*failed: *measured 32, expected == 33*", "*source: sample.txt §1: stride 32 touches 32 sectors*"]
    )


def test_without_a_gpu_profiler_claims_skip_and_a_wrong_file_is_a_collection_error(pytester):
    folder = sandbox(pytester)
    shutil.copy(DATA / "static.yaml", folder / "static.yaml")
    (folder / "broken.yaml").write_text("kernels: {}\n")
    result = run_pytest(
        pytester,
        "expectations",
        "-rs",
        "--continue-on-collection-errors",
        "--ncuverify-arch",
        "sm_90",
        "-k",
        "static",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors") == 1  # broken.yaml
    assert outcomes.get("passed") == 6 and outcomes.get("skipped") == 1  # static.yaml: its one profiler claim
    result.stdout.fnmatch_lines(["*broken.yaml*"])


def test_other_yaml_is_left_alone(pytester):
    (pytester.path / "config.yaml").write_text("kernels: {}\n")
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = run_pytest(
        pytester,
    )
    result.assert_outcomes(passed=1)


def test_a_file_on_which_ncuverify_fails_fails_its_claims_and_the_others_pass(pytester, monkeypatch):
    from ncuverify.stages import prepare

    folder = sandbox(pytester)
    shutil.copy(DATA / "static.yaml", folder / "static.yaml")
    real_prepare = prepare.prepare_file

    def crashing_on_static(path, key, options, environment):
        if path.name == "static.yaml":
            raise RuntimeError("injected \x1b[2J")
        return real_prepare(path, key, options, environment)

    monkeypatch.setattr(prepare, "prepare_file", crashing_on_static)
    result = run_pytest(pytester, "expectations", "--ncuverify-from-profile", str(FIXTURES))
    result.assert_outcomes(passed=8, failed=7)  # sample.yaml's 8; static.yaml's 7, each with the line
    result.stdout.fnmatch_lines(["*internal error: RuntimeError: injected \\x1b[2J, please report it with *"])
    assert "\x1b[2J" not in result.stdout.str()


def test_failure_messages_show_markup_and_escape_sequences_as_text(pytester):
    folder = sandbox(pytester, (DATA / "hostile_text.yaml").read_text())
    result = run_pytest(pytester, "expectations", "--ncuverify-arch", "sm_90")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*source: [[]blink[]]doc[[]/blink[]] §1: a[[]i[]] :smile: \\x1b[[]2J"])
    assert "\x1b" not in result.stdout.str() and folder.is_dir()


def test_k_checks_only_the_files_and_the_claims_it_selects(pytester, monkeypatch):
    from ncuverify.stages import prepare

    folder = sandbox(pytester)
    shutil.copy(DATA / "static.yaml", folder / "static.yaml")
    real_prepare = prepare.prepare_file
    prepared_claims = []

    def noting_claims(path, key, options, environment):
        prepared = real_prepare(path, key, options, environment)
        prepared_claims.append((path.name, sorted(claim.id for claim in prepared.spec.content.claims)))
        return prepared

    monkeypatch.setattr(prepare, "prepare_file", noting_claims)
    arguments = ("expectations", "--ncuverify-from-profile", str(FIXTURES), "-k", "contiguous_four_sectors")
    result = run_pytest(pytester, *arguments)
    result.assert_outcomes(passed=1)
    assert prepared_claims == [("sample.yaml", ["contiguous_four_sectors"])], "static.yaml is not checked"


def test_a_file_is_read_once_at_collection_and_checked_as_read(pytester, monkeypatch):
    from ncuverify import pytest_plugin
    from ncuverify.stages import prepare

    sandbox(pytester)
    reads = []

    def counted(path):
        reads.append(path.name)
        return pytest_plugin.load(path)

    monkeypatch.setattr(prepare, "load", counted)
    result = run_pytest(pytester, "expectations", "--ncuverify-from-profile", str(FIXTURES))
    result.assert_outcomes(passed=8)
    assert reads == [], "the check took the file as collection read it"


def test_yaml_in_an_expectations_folder_that_is_no_expectation_file_is_left_alone(pytester):
    folder = sandbox(pytester)
    (folder / "workflow.yaml").write_text("name: ci\non: [push]\njobs: {test: {runs-on: ubuntu-latest}}\n")
    (folder / "commented.yml").write_text(
        "# yaml-language-server: $schema=../schema/expectations.schema.json\n"
    )
    arguments = ("expectations", "--ncuverify-from-profile", str(FIXTURES), "--continue-on-collection-errors")
    result = run_pytest(pytester, *arguments)
    result.assert_outcomes(passed=8, errors=1)  # sample.yaml's claims; commented.yml says it is one
    assert "workflow.yaml" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*commented.yml*"])
    # asked for with --ncuverify, any YAML file given is collected
    result = run_pytest(pytester, "--ncuverify", str(folder / "workflow.yaml"))
    result.assert_outcomes(errors=1)


def test_an_xdist_worker_is_known_by_what_pytest_xdist_sets_and_nothing_else():
    from ncuverify.pytest_plugin import worker_gpus, xdist_worker

    assert xdist_worker({"PYTEST_XDIST_WORKER": "gw3", "PYTEST_XDIST_WORKER_COUNT": "4"}) == (3, 4)
    for hostile in ({"PYTEST_XDIST_WORKER": "gw4", "PYTEST_XDIST_WORKER_COUNT": "4"},
                    {"PYTEST_XDIST_WORKER": "gw1"},
                    {"PYTEST_XDIST_WORKER": "gw1\n", "PYTEST_XDIST_WORKER_COUNT": "2"},
                    {"PYTEST_XDIST_WORKER": "gw٣", "PYTEST_XDIST_WORKER_COUNT": "4"},
                    {"PYTEST_XDIST_WORKER": "gw1", "PYTEST_XDIST_WORKER_COUNT": "9" * 5000},
                    {}):  # fmt: skip
        assert xdist_worker(hostile) is None, hostile
    assert [worker_gpus((k, 4), 2) for k in range(4)] == [(0,), (1,), (0,), (1,)]
    assert worker_gpus((0, 2), 0) is None, "no GPU: the default"


def outcomes(result) -> dict[str, str]:
    """Each claim's outcome, by node id, from pytest's -rA summary."""
    found = {}
    for line in result.outlines:
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "SKIPPED", "XFAIL", "ERROR") and "::" in rest:
            found[rest.split(" ")[0]] = word
    return found


@pytest.mark.slow
def test_xdist_workers_give_the_verdicts_of_one_process(pytester):
    folder = sandbox(
        pytester,
        (DATA / "sample.yaml").read_text().replace("expect: {equals: 32}", "expect: {equals: 33}", 1),
    )
    shutil.copy(DATA / "static.yaml", folder / "static.yaml")
    arguments = ("expectations", "--ncuverify-from-profile", str(FIXTURES), "-rA", "-p", "no:cacheprovider")
    installed = any(e.value.startswith("ncuverify") for e in entry_points(group="pytest11"))
    arguments += () if installed else ("-p", "ncuverify.pytest_plugin")
    alone = pytester.runpytest_subprocess(*arguments)
    spread = pytester.runpytest_subprocess(*arguments, "-n", "2", "--dist", "loadfile")
    assert outcomes(alone) and outcomes(spread) == outcomes(alone)
    assert "FAILED" in outcomes(alone).values() and "2 workers" in spread.stdout.str()


@pytest.mark.slow
def test_a_pytest_run_without_expectation_files_does_not_import_what_checks_claims(pytester):
    # an installed plugin loads in every pytest run: one that tests something else pays none of it
    pytester.makepyfile(
        test_other="""
import sys

def test_nothing_of_the_check_is_imported():
    heavy = ("ncuverify.pipeline", "ncuverify.spec", "ncuverify.options", "ncuverify.build", "pydantic")
    assert [name for name in heavy if name in sys.modules] == []
"""
    )
    installed = any(e.value.startswith("ncuverify") for e in entry_points(group="pytest11"))
    plugin = () if installed else ("-p", "ncuverify.pytest_plugin")
    result = pytester.runpytest_subprocess(*plugin, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nncuverify_compile_timeout = 30\n")  # limits set: checked as pytest starts
    result = pytester.runpytest_subprocess(*plugin, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)


def test_the_ini_file_s_default_compile_time_limit_is_the_build_limits_own():
    # the plugin tells an ini value from its default without importing the build stage: the two agree
    from ncuverify.build import BuildLimits
    from ncuverify.pytest_plugin import DEFAULT_COMPILE_TIMEOUT

    assert float(DEFAULT_COMPILE_TIMEOUT) == BuildLimits().timeout_s
