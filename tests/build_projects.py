"""Expectation files and projects of kernels, written in a temporary folder, for the build's tests: a
project beside a folder that holds a secret, and the check that a refusal shows none of it."""

from pathlib import Path

import pytest
import yaml

from ncuverify.build import BuildLimits, build_spec
from ncuverify.errors import InputError
from ncuverify.spec import load


def spec_with(tmp_path: Path, kernels: dict, name: str = "k.yaml"):
    first = next(iter(kernels))
    content = {
        "kernels": kernels,
        "cases": {"c": {"kernel": first, "grid": 1, "block": 32}},
        "claims": [
            {
                "id": "x",
                "case": "c",
                "metric": "m.sum",
                "expect": {"equals": 1},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(content))
    return load(path)


SECRET = "SECRET_5d02aa"
KERNEL = 'extern "C" __global__ void k(float* o) { o[threadIdx.x] = 1.f; }\n'


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A project with a kernel folder, entered (so that messages name kernels/k.cu), and beside it a
    folder that is not the project's, holding a secret."""
    root = tmp_path / "repo"
    (root / "kernels").mkdir(parents=True)
    (root / ".ncuverify-root").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.h").write_text(f"{SECRET}\n")
    monkeypatch.chdir(root)
    return root, outside


def kernel_file(root: Path, text: str, **kernel):
    (root / "kernels" / "k.cu").write_text(text)
    return spec_with(root, {"k": {"file": "kernels/k.cu", "entry": "k", **kernel}})


def refused(spec, limits: BuildLimits | None = None) -> str:
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90", limits=limits or BuildLimits())
    message = str(error.value)
    assert SECRET not in message
    return message


def outside_message(project: Path) -> str:
    """How the include walk refuses a file outside the project."""
    return (
        f"lies outside the project ({project.resolve()}: the nearest folder up holding .git, pyproject.toml,"
        " .ncuverify-root) and the CUDA headers; a folder beside the project "
        "can be allowed with --allow-include DIR"
    )
