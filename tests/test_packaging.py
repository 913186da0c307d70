"""Ready to publish: `python -m build` makes an sdist from the checkout's files and a wheel from that
sdist, each holding every module and data file the package reads; the wheel installed alone into a
fresh virtual environment (its dependencies this environment's, so nothing is downloaded) runs, and
says the version of the checkout."""

import importlib.util
import subprocess
import sys
import tarfile
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

import ncuverify

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def _can_build() -> str | None:
    """Why the package cannot be built without downloading anything here, or None."""
    if importlib.util.find_spec("build") is None:
        return "needs the build package (pip install -e '.[dev]')"
    if int(version("setuptools").split(".")[0]) < 77:
        return "needs setuptools 77 or later, as pyproject.toml's build-system asks (pip install -e '.[dev]')"
    return None


def _checkout(into: Path) -> Path:
    """The checkout's files as git knows them (committed or not, ignored ones left out): no build
    folder, egg-info or cache of the working tree reaches the package."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return into


def _package_files() -> set[str]:
    """What the package reads at run time: its modules and its data, as paths in a wheel."""
    package = REPO / "ncuverify"
    wanted = [*package.rglob("*.py"), *(package / "data").glob("*.txt")]
    return {path.relative_to(REPO).as_posix() for path in wanted if "__pycache__" not in path.parts}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """The sdist and the wheel, built as a release would be (the wheel from the sdist)."""
    if (reason := _can_build()) is not None:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("package")
    source = _checkout(folder / "source")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(folder / "dist"), str(source)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (sdist,) = (folder / "dist").glob("ncuverify-*.tar.gz")
    (wheel,) = (folder / "dist").glob("ncuverify-*.whl")
    return sdist, wheel


def test_the_wheel_and_the_sdist_hold_every_module_and_data_file(built):
    sdist, wheel = built
    expected = _package_files()
    assert "ncuverify/data/metrics-gh100.txt" in expected
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert expected <= in_wheel, sorted(expected - in_wheel)
    with tarfile.open(sdist) as archive:
        # ncuverify-X.Y.Z/ncuverify/...
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert expected <= in_sdist, sorted(expected - in_sdist)
    assert "pyproject.toml" in in_sdist


def test_the_wheel_installed_alone_runs_and_says_its_version(built, tmp_path):
    _, wheel = built
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    # the dependencies: this environment's, after the venv's own (so the wheel's ncuverify comes first)
    visible = [path for path in sys.path if path.endswith("site-packages")]
    (Path(site_packages) / "dependencies.pth").write_text("\n".join(visible) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    ran = subprocess.run(
        [str(venv / "bin" / "ncuverify"), "--version"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == f"ncuverify {ncuverify.__version__}"
    # the wheel's copy, not the checkout's, reading its data: the metric names of the H100
    read = (
        "import ncuverify, ncuverify.ncu.metrics as m; print(ncuverify.__file__, len(m.known_bases('gh100')))"
    )
    where, names = subprocess.run(
        [str(python), "-c", read], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert where.startswith(site_packages), where
    assert int(names) > 100
