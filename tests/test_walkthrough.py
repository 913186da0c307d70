"""The getting-started page's walkthrough, run as written: each `$ ` command of its section, in order,
in a copy of examples/repository, with `ncuverify` (this checkout), `cmake` and `nvcc` on the PATH and
no GPU. Each must exit 0, and what the page shows under it must be what it prints (timings aside, in
order; the page may leave lines out). Needs cmake (the machine's or the dev extra's wheel), nvcc (the
CUDA wheels') and g++, as CI has."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from artifact_builds import _nvcc
from conftest import ROOT, cmake_tools, ncuverify_script

pytestmark = pytest.mark.slow

PAGE = ROOT / "docs" / "getting-started.md"
HEADING = "### Walkthrough: a repository from `init` to a gate"
REPOSITORY = ROOT / "examples" / "repository"
_TIMING = re.compile(r" in [0-9]+\.[0-9] s")


def walkthrough() -> list[tuple[str, list[str]]]:
    """Each command of the section with the lines the page shows it printing."""
    text = PAGE.read_text()
    section = text[text.index(HEADING) :]
    section = section[: section.index("\n### ", len(HEADING))]
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"^```\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def _tools(folder: Path) -> str:
    """A PATH with this checkout's ncuverify, cmake and nvcc first."""
    ncuverify_script(folder)
    nvcc, cmake = _nvcc(), cmake_tools()
    if nvcc is None or cmake is None or shutil.which("g++") is None:
        pytest.skip("the walkthrough needs cmake, nvcc and g++")
    folders = [folder, Path(nvcc).parent, Path(cmake[0]).parent]
    return os.pathsep.join([*map(str, folders), os.environ.get("PATH", "")])


def _said(output: str) -> list[str]:
    return [_TIMING.sub("", line).rstrip() for line in output.splitlines()]


def _in_order(shown: list[str], printed: list[str]) -> bool:
    lines = iter(printed)
    return all(any(line == wanted for line in lines) for wanted in shown)


def test_the_page_has_a_walkthrough_from_init_to_a_ratchet():
    commands = [command for command, _ in walkthrough()]
    assert commands[0].startswith("cmake ") and "ncuverify init src/ -o gate/" in commands
    assert any("baseline save" in c for c in commands) and any("--baseline" in c for c in commands)


def test_the_walkthrough_runs_as_written(tmp_path):
    repository = tmp_path / "repository"
    shutil.copytree(REPOSITORY, repository, ignore=shutil.ignore_patterns("build", "gate", "baseline.json"))
    tools = tmp_path / "tools"
    tools.mkdir()
    environment = {**os.environ, "PATH": _tools(tools), "COLUMNS": "200", "NO_COLOR": "1"}
    environment.pop("CUDA_HOME", None), environment.pop("CUDA_PATH", None)
    for command, shown in walkthrough():
        ran = subprocess.run(
            ["bash", "-c", command],
            cwd=repository,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # as a terminal shows them
            text=True,
            timeout=600,
        )
        printed = _said(ran.stdout)
        assert ran.returncode == 0, f"$ {command}\n{ran.stdout}"
        assert _in_order(_said("\n".join(shown)), printed), f"$ {command}\nshown: {shown}\nprinted: {printed}"
