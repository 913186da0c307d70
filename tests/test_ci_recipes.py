"""The sharded CI recipes of docs/ci.md (a GitHub Actions matrix, a Slurm job array, a Kubernetes Indexed
Job) and docs/ci/gitlab-ci.yml, read out of the docs: each parses, splits the suite into as many shares
as it runs jobs, shares one compile cache, merges, and names only commands and options that exist."""

import re
import shlex
import subprocess
from typing import Any

import pytest
import typer
import yaml
from conftest import ROOT

from ncuverify.cli import app
from ncuverify.cli.option_groups import shard_of

CI = ROOT / "docs" / "ci.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# `ncuverify SUBCOMMAND ...` up to the end of its shell command: a quote that closes it, ||, ;, && or a
# line's end
# a GitHub Actions expression, `${{ matrix.shard }}`, written without its spaces: one shell word
EXPRESSION = re.compile(r"\$\{\{\s*([^}\s]+)\s*\}\}")
COMMAND = re.compile(r"ncuverify ([a-z]+)((?:[ \t]+(?:\"[^\"]*\"|'[^']*'|[^\s\"'|;&]+))*)")


def recipe(heading: str) -> list[tuple[str, str]]:
    """The code blocks (language, text) of the section of docs/ci.md under this heading."""
    text = CI.read_text()
    start = text.index(f"\n### {heading}")
    end = min(i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1)) if i != -1)
    return BLOCK.findall(text[start:end])


def strings(value: Any) -> list[str]:
    """Every string of a parsed YAML document."""
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in strings(key) + strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return [value] if isinstance(value, str) else []


def commands(texts: list[str]) -> list[tuple[str, list[str]]]:
    """Each ncuverify command of these texts (shell continuation lines joined): subcommand, arguments."""
    found = []
    for text in texts:
        text = EXPRESSION.sub(lambda matched: "${{" + matched[1] + "}}", text.replace("\\\n", " "))
        for subcommand, rest in COMMAND.findall(text):
            found.append((subcommand, shlex.split(rest)))
    return found


def assert_options_exist(found: list[tuple[str, list[str]]]) -> None:
    group = typer.main.get_command(app)
    for subcommand, arguments in found:
        command = group.commands[subcommand]  # type: ignore[attr-defined]
        known = {opt for param in command.params for opt in [*param.opts, *param.secondary_opts]}
        for argument in arguments:
            if argument.startswith("-"):
                assert argument.split("=")[0] in known, f"ncuverify {subcommand} has no option {argument}"


def shard_option(arguments: list[str]) -> str:
    return arguments[arguments.index("--shard") + 1]


def test_the_github_matrix_runs_each_share_once_and_merges_them():
    ((language, text),) = recipe("GitHub Actions")
    assert language == "yaml"
    workflow = yaml.safe_load(text)
    jobs = workflow["jobs"]
    matrix = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert jobs["shard"]["env"]["NCUVERIFY_CACHE_DIR"]
    assert any(step.get("uses", "").startswith("actions/cache@") for step in jobs["shard"]["steps"])
    found = commands(strings(workflow))
    (check,) = [arguments for subcommand, arguments in found if subcommand == "check"]
    assert shard_option(check) == f"${{{{matrix.shard}}}}/{len(matrix)}" and matrix == list(
        range(1, len(matrix) + 1)
    )
    assert jobs["merge"]["needs"] == "shard"
    assert [subcommand for subcommand, _ in found].count("merge") == 1
    assert_options_exist(found)


def test_the_slurm_array_is_a_valid_script_whose_tasks_are_the_shares():
    blocks = recipe("Slurm")
    assert [language for language, _ in blocks] == ["bash", "bash"]
    for _, text in blocks:
        subprocess.run(["bash", "-n"], input=text, text=True, check=True)
    script, submit = (text for _, text in blocks)
    low, high = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", script, re.MULTILINE).groups())  # type: ignore[union-attr]
    assert 'export NCUVERIFY_CACHE_DIR="$HOME/.cache/ncuverify"' in script
    found = commands([script, submit])
    (check,) = [arguments for subcommand, arguments in found if subcommand == "check"]
    assert shard_option(check) == "auto"
    environment = {
        "SLURM_ARRAY_TASK_MIN": str(low),
        "SLURM_ARRAY_TASK_MAX": str(high),
        "SLURM_ARRAY_TASK_STEP": "1",
    }
    shares = [
        shard_of("auto", {**environment, "SLURM_ARRAY_TASK_ID": str(task)}) for task in range(low, high + 1)
    ]
    assert shares == [(k, high - low + 1) for k in range(1, high - low + 2)]
    assert '--dependency="afterany:$array"' in submit
    assert [subcommand for subcommand, _ in found] == ["check", "merge"]
    assert_options_exist(found)


def test_the_kubernetes_indexed_job_gives_its_count_as_auto_n():
    blocks = recipe("Kubernetes")
    assert [language for language, _ in blocks] == ["yaml", "bash"]
    job = yaml.safe_load(blocks[0][1])
    subprocess.run(["bash", "-n"], input=blocks[1][1], text=True, check=True)
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    assert {"name": "NCUVERIFY_CACHE_DIR", "value": "/cache/ncuverify"} in container["env"]
    found = commands(strings(job)) + commands([blocks[1][1]])
    (check,) = [arguments for subcommand, arguments in found if subcommand == "check"]
    assert shard_option(check) == f"auto/{spec['completions']}"
    shares = [
        shard_of(shard_option(check), {"JOB_COMPLETION_INDEX": str(i)}) for i in range(spec["completions"])
    ]
    assert shares == [(k, spec["completions"]) for k in range(1, spec["completions"] + 1)]
    assert [subcommand for subcommand, _ in found] == ["check", "merge"]
    assert_options_exist(found)


@pytest.mark.parametrize("name", ["gitlab-ci.yml", "gpu-runner.yml"])
def test_the_example_pipelines_name_options_that_exist(name: str):
    found = commands(strings(yaml.safe_load((ROOT / "docs" / "ci" / name).read_text())))
    assert_options_exist(found)
