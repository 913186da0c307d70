"""The pytest plugin: `pytest expectations/` collects every claim of every expectation file as a test,
named by file and claim id, with ncuverify's verdicts as pytest's outcomes.

Files in a folder named `expectations` are collected; `--ncuverify` collects every YAML file given.
The files are checked together, once per session, when the first claim runs: one profile of all of
them, as `ncuverify check` makes, with its options (the compile cache, ncu's passes remembered). Under
pytest-xdist each worker checks a file when it runs the file's first claim, on a GPU of its own (worker
K on GPU K, round the GPUs there are); `--dist loadfile` gives each file to one worker whole. The
ini values `ncuverify_allow_include` and `ncuverify_compile_timeout` set the build limits, as
`--allow-include` and `--compile-timeout` do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ncuverify.errors import InputError
from ncuverify.text import one_line, printable

# pytest loads an installed plugin in every run, whatever it tests: what checks claims (spec, build,
# profile, judge: about 0.4 s of imports) is imported only once an expectation file is collected.
if TYPE_CHECKING:
    from ncuverify.build import BuildLimits
    from ncuverify.options import CheckOptions
    from ncuverify.results import FileResult
    from ncuverify.spec import Spec

_RESULTS: pytest.StashKey[dict[Path, FileResult]] = pytest.StashKey()
_FILES = pytest.StashKey[list[Path]]()  # every expectation file collected, in order
# The build limits an ini file sets, checked as pytest starts.
_LIMITS: pytest.StashKey[BuildLimits] = pytest.StashKey()
# The claims each file's selected items name (after -k, -m and node ids): only they are checked.
_SELECTED = pytest.StashKey[dict[Path, frozenset[str]]]()
_COLLECTED = pytest.StashKey[dict[Path, set[str]]]()  # every claim collected, by file
# Every file collected, as read: checked as read.
_LOADED: pytest.StashKey[dict[Path, Spec]] = pytest.StashKey()
_RUN: pytest.StashKey[CheckOptions] = pytest.StashKey()  # the session's run options, made once
# The ini file's compile time limit where it sets none: BuildLimits' own default.
DEFAULT_COMPILE_TIMEOUT = "120"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ncuverify", "claims about CUDA kernels")
    group.addoption(
        "--ncuverify", action="store_true", help="collect every YAML file given as an expectation file"
    )
    group.addoption("--ncuverify-arch", default=None, help="build for this architecture, e.g. sm_90")
    group.addoption("--ncuverify-from-profile", default=None, help="judge profiles recorded in this folder")
    group.addoption("--ncuverify-ncu", default="ncu", help="the ncu executable")
    parser.addini(
        "ncuverify_allow_include",
        "folders outside the project that kernels may include from",
        type="paths",
        default=[],
    )
    parser.addini(
        "ncuverify_compile_timeout",
        "stop compiling one kernel source after this many seconds",
        default=DEFAULT_COMPILE_TIMEOUT,
    )


def pytest_configure(config: pytest.Config) -> None:
    """The build limits an ini file sets, refused as a usage error before anything is collected (where
    it sets none, the defaults are made when the first claim runs)."""
    allow_include = config.getini("ncuverify_allow_include")
    timeout = str(config.getini("ncuverify_compile_timeout"))
    if allow_include or timeout != DEFAULT_COMPILE_TIMEOUT:
        config.stash[_LIMITS] = _build_limits(allow_include, timeout)


def _build_limits(allow_include: list[Path], timeout: str) -> BuildLimits:
    from ncuverify import options

    try:
        return options.build_limits(
            allow_include, _seconds(timeout), "ncuverify_allow_include", "ncuverify_compile_timeout"
        )
    except InputError as error:
        raise pytest.UsageError(printable(str(error))) from None


def _seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise pytest.UsageError(
            f"ncuverify_compile_timeout: {one_line(repr(text))}: give a number of seconds"
        ) from None


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what they do
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selected: dict[Path, set[str]] = {}
    for item in items:
        if isinstance(item, ClaimItem):
            selected.setdefault(item.path.resolve(), set()).add(item.name)
    config.stash[_SELECTED] = {path: frozenset(names) for path, names in selected.items()}


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """An expectation file: any YAML file given with --ncuverify; else a YAML file in a folder named
    `expectations` that is one (see is_expectation_file). Other YAML is left alone."""
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    asked = parent.config.getoption("ncuverify")
    if not asked and (file_path.parent.name != "expectations" or not is_expectation_file(file_path)):
        return None
    return ExpectationFile.from_parent(parent, path=file_path)


# What is read of a YAML file to tell whether it is an expectation file: its start, where the schema
# comment and, in every file ncuverify writes, the top-level keys are.
_SNIFF_BYTES = 64 * 1024
_TOP_LEVEL_KEY = re.compile(rb"^(kernels|cases|claims)\s*:", re.MULTILINE)


def is_expectation_file(path: Path) -> bool:
    """Whether a YAML file says it is an expectation file: it points editors at ncuverify's schema, or
    has a top-level key of one (kernels, cases, claims). A file that cannot be read is left to
    collection, which says why."""
    try:
        with path.open("rb") as file:
            start = file.read(_SNIFF_BYTES)
    except OSError:
        return True
    return b"expectations.schema.json" in start.split(b"\n", 1)[0] or _TOP_LEVEL_KEY.search(start) is not None


class ExpectationFile(pytest.File):
    def collect(self) -> Any:
        from ncuverify.spec import load

        try:
            spec = load(self.path)
        except InputError as error:
            raise self.CollectError(printable(str(error))) from None
        self.config.stash.setdefault(_FILES, []).append(self.path)
        collected = self.config.stash.setdefault(_COLLECTED, {})
        collected[self.path.resolve()] = {claim.id for claim in spec.content.claims}
        self.config.stash.setdefault(_LOADED, {})[self.path.resolve()] = spec
        for claim in spec.content.claims:
            yield ClaimItem.from_parent(self, name=claim.id)


class ClaimFailed(Exception):
    """A claim that did not hold; its message is the report."""


class ClaimItem(pytest.Item):
    def runtest(self) -> None:
        from ncuverify.explain import claim_lines
        from ncuverify.results import Verdict

        result = _file_result(self.config, self.path)
        # Ids, figures, messages and ncu's text come from files: shown with their control characters
        # and escape sequences made visible, never sent raw to the terminal.
        if result.internal_error is not None:
            raise ClaimFailed(one_line(result.internal_error))
        if result.input_error is not None:
            raise ClaimFailed(printable(result.input_error))
        claim_result = next((r for r in result.claims if r.claim.id == self.name), None)
        if claim_result is None:
            raise ClaimFailed(one_line(f"{self.path}: no verdict for claim {self.name}"))
        verdict, reason = claim_result.verdict, one_line(claim_result.reason or "")
        if verdict in (Verdict.SKIPPED, Verdict.OTHER_ARCH):
            pytest.skip(reason)
        if verdict is Verdict.XFAILED:
            pytest.xfail(reason)
        if verdict is not Verdict.PASSED:
            source = claim_result.claim.source_line()
            lines = [f"{verdict.value}: {claim_result.claim.metric}: {reason}", *([source] if source else [])]
            if self.name in result.explanations:
                lines += claim_lines(self.name, result.explanations[self.name])
            raise ClaimFailed("\n".join(one_line(line) for line in lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _file_result(config: pytest.Config, path: Path) -> FileResult:
    """The file's results: outside pytest-xdist every file with a selected claim is checked on the first
    call, in one run; in a worker, each file on its own when the worker first needs it, on the
    worker's GPU. Only the selected claims are checked."""
    from ncuverify import pipeline

    results = config.stash.setdefault(_RESULTS, {})
    if path not in results:
        worker = xdist_worker(os.environ)
        files = config.stash.get(_FILES, []) if worker is None else [path]
        if _RUN not in config.stash:
            config.stash[_RUN] = _run_options(config, worker)
        run = config.stash[_RUN]
        selected = config.stash.get(_SELECTED, None)
        if selected is not None:
            files = [file for file in files if file.resolve() in selected]
            # a file whose every claim is selected is checked whole, as the command line checks it
            collected = config.stash.get(_COLLECTED, {})
            narrowed = {file: names for file, names in selected.items() if names != collected.get(file)}
            run = replace(run, claims=narrowed) if narrowed else run
        results.update(zip(files, pipeline.check_files(files, run), strict=True))
    return results[path]


def _run_options(config: pytest.Config, worker: tuple[int, int] | None) -> CheckOptions:
    from ncuverify import options
    from ncuverify.build import BuildLimits
    from ncuverify.environment import gpu_count
    from ncuverify.profile import NcuOptions

    from_profile = config.getoption("ncuverify_from_profile")
    ncu = NcuOptions(executable=config.getoption("ncuverify_ncu"))
    run = options.for_run(
        arch=config.getoption("ncuverify_arch"),
        ncu=ncu,
        from_profile=Path(from_profile) if from_profile else None,
        build=config.stash.get(_LIMITS, None) or BuildLimits(),  # the defaults where the ini sets none
    )
    gpus = worker_gpus(worker, gpu_count()) if worker is not None and not from_profile else None
    return replace(run, loaded=config.stash.get(_LOADED, {}), gpus=gpus)


# PYTEST_XDIST_WORKER names a worker gw0, gw1, ...; PYTEST_XDIST_WORKER_COUNT says how many there are.
_WORKER = re.compile(r"gw([0-9]{1,4})")


def xdist_worker(environ: Mapping[str, str]) -> tuple[int, int] | None:
    """This pytest-xdist worker's index and the number of workers; None outside a worker (or where
    the variables are not what pytest-xdist sets)."""
    named = _WORKER.fullmatch(environ.get("PYTEST_XDIST_WORKER", ""))
    count = environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if named is None or not (count.isascii() and count.isdigit() and len(count) <= 4):
        return None
    index, workers = int(named.group(1)), int(count)
    return (index, workers) if index < workers else None


def worker_gpus(worker: tuple[int, int], gpus: int) -> tuple[int, ...] | None:
    """The GPU a worker profiles on: worker K on GPU K, round the GPUs; None where there is none."""
    return (worker[0] % gpus,) if gpus > 0 else None
