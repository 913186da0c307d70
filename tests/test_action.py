"""action.yml, the composite GitHub Action: its shell steps run with bash as GitHub would run them (the
`${{ ... }}` expressions replaced by the inputs, each step's env set), ncuverify being this checkout's,
on the static claims of a small expectation file: the results are written, the exit code is the step's,
and an input that looks like shell code stays a path."""

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ncuverify_script

REPO = Path(__file__).resolve().parent.parent


ACTION = yaml.safe_load((REPO / "action.yml").read_text())
CITE = {"document": "d", "section": "1", "figure": "f"}
OUTPUTS = ("results.json", "results.xml", "report.html", "summary.md", "results.sarif")


def _expectations(folder: Path, registers_at_most: int) -> Path:
    (folder / ".ncuverify-root").touch()
    content = {
        "arch": "sm_90",
        "kernels": {
            "k": {"source": 'extern "C" __global__ void k(float* x) { x[0] = 1.f; }\n', "entry": "k"}
        },
        "cases": {"c": {"kernel": "k", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 32}]}},
        "claims": [
            {
                "id": "few_registers",
                "case": "c",
                "metric": "static__registers_per_thread",
                "expect": {"at_most": registers_at_most},
                "cite": CITE,
            }
        ],
    }
    path = folder / "k.yaml"
    path.write_text(yaml.safe_dump(content))
    return path


def _steps_that_run() -> dict[str, dict]:
    return {step["id"]: step for step in ACTION["runs"]["steps"] if "run" in step}


def _filled(text: str, inputs: dict[str, str]) -> str:
    """The text with GitHub's expressions replaced, as the runner does before a step runs."""
    given = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | inputs

    def value(found: re.Match[str]) -> str:
        expression = found.group(1).strip()
        if expression == "github.action_path":
            return str(REPO)
        assert expression.startswith("inputs."), expression
        return given[expression.removeprefix("inputs.")]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def _run_step(step_id: str, folder: Path, inputs: dict[str, str]) -> subprocess.CompletedProcess[str]:
    step = _steps_that_run()[step_id]
    assert step["shell"] == "bash"
    # ncuverify on the PATH: this checkout's package, run by this interpreter
    bin_folder = folder / "bin"
    bin_folder.mkdir(exist_ok=True)
    ncuverify_script(bin_folder)
    env = {name: _filled(str(value), inputs) for name, value in step.get("env", {}).items()}
    path = f"{bin_folder}:/usr/bin:/bin"
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", _filled(step["run"], inputs)],
        cwd=folder, env={**env, "PATH": path, "GITHUB_ACTIONS": "true", "HOME": str(folder)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_inputs_reach_the_scripts_as_variables_only():
    for step in _steps_that_run().values():
        assert "${{" not in step["run"], step["id"]  # an input is never script text
    install = _steps_that_run()["install"]
    assert install["env"]["NCUVERIFY_SOURCE"] == "${{ github.action_path }}"
    assert "pip install" in install["run"]
    uploads = [step for step in ACTION["runs"]["steps"] if step.get("uses", "").startswith("actions/upload")]
    assert [step["if"] for step in uploads] == ["always()"]  # kept when the check fails too
    assert uploads[0]["with"]["path"] == "${{ inputs.output-dir }}"


@pytest.mark.parametrize(("bound", "code"), [(255, 0), (1, 1)])
def test_the_check_writes_every_output_and_exits_as_ncuverify(tmp_path, bound, code):
    _expectations(tmp_path, bound)
    ran = _run_step("check", tmp_path, {"paths": "k.yaml", "args": "--static-only", "output-dir": "out"})
    assert ran.returncode == code, ran.stdout + ran.stderr
    for name in OUTPUTS:
        assert (tmp_path / "out" / name).stat().st_size > 0, name
    results = (tmp_path / "out" / "results.xml").read_text()
    assert "few_registers" in results


def test_a_missing_baseline_fails_the_step(tmp_path):
    _expectations(tmp_path, 255)
    inputs = {"paths": "k.yaml", "args": "--static-only", "baseline": "nothing.json"}
    ran = _run_step("check", tmp_path, inputs)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "nothing.json" in ran.stdout + ran.stderr


def test_a_path_that_looks_like_code_or_an_option_is_a_path(tmp_path):
    _expectations(tmp_path, 255)
    inputs = {"paths": "k.yaml $(touch pwned) --version", "args": "--static-only"}
    ran = _run_step("check", tmp_path, inputs)
    assert ran.returncode == 2, ran.stdout + ran.stderr  # the two odd words: files that are not there
    assert not (tmp_path / "pwned").exists()
