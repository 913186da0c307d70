"""What `ncuverify lint` and `ncuverify build` ask of a file, and a check asks too: the architecture to
build for, the metric names checked against that chip's, the kernels built, and what the builds warn of."""

from __future__ import annotations

import shutil
from pathlib import Path

from ncuverify.build import KernelBuild, build_spec
from ncuverify.build.artifacts_json import is_listing, read_listing
from ncuverify.build.artifacts_listing import ListedKernel, listed, path_kernels
from ncuverify.build.demangle import demangle
from ncuverify.build.params import check_arguments
from ncuverify.environment import Environment
from ncuverify.errors import InputError
from ncuverify.names import is_ncu_metric
from ncuverify.ncu import metrics
from ncuverify.options import CheckOptions
from ncuverify.spec import Spec, load

EXPECTATION_SUFFIXES = (".yaml", ".yml")


def build_file(
    path: Path, options: CheckOptions, environment: Environment, lint: bool = False
) -> dict[str, KernelBuild] | str:
    """The kernels of one file, built; or why they could not be. With lint, the metric names are
    checked against the target chip's list too."""
    try:
        spec = load(path)
        arch = target_arch(spec, options, environment)
        if arch is None and not spec.content.kernels:
            return {}  # program cases only: nothing to build, and no chip to check metric names on
        if arch is None:
            return "no architecture to build for: pass --arch or set 'arch' in the file"
        if lint:
            check_metric_names(spec, arch, environment.ncu or shutil.which(options.ncu.executable))
        builds = build_spec(spec, arch, options.cache, options.build)
        if lint:
            check_arguments(spec, builds)
        return builds
    except InputError as error:
        return str(error)


def check_metric_names(spec: Spec, arch: str, ncu: str | None = None) -> None:
    """Refuse, before anything runs, metric names that ncu does not know on arch's chip."""
    problems = []
    for claim in spec.content.claims:
        names = {ref.name for ref in claim.metric_refs() if is_ncu_metric(ref.name)}
        for name, suggestion in metrics.unknown(names, arch, ncu).items():
            hint = f" (did you mean {suggestion}?)" if suggestion else ""
            problems.append(f"{spec.path}: claim {claim.id}: ncu knows no metric {name} on {arch}{hint}")
    if problems:
        raise InputError("\n".join(problems))


def target_arch(spec: Spec, options: CheckOptions, environment: Environment) -> str | None:
    """--arch, else the GPU's own architecture, else the file's `arch` (for machines without a GPU)."""
    if options.arch is not None:
        return options.arch
    if environment.gpu is not None:
        return environment.gpu.arch
    return spec.content.arch


def build_warnings(builds: dict[str, KernelBuild]) -> list[str]:
    """What the builds warn of (a damaged cache entry rebuilt, ...), each once: kernels compiled
    together share their warnings."""
    return list(dict.fromkeys(w for build in builds.values() for w in getattr(build, "warnings", ())))


def path_kernels_listed(path: Path, options: CheckOptions, environment: Environment) -> list[ListedKernel]:
    """What `build` lists for a path: an expectation file's kernels, a `build --json` file's, or those
    of a .cu file, an artifact or a folder of them; InputError where it cannot."""
    if is_listing(path):
        return read_listing(path)
    if path.suffix in EXPECTATION_SUFFIXES:
        built = build_file(path, options, environment)
        if isinstance(built, str):
            raise InputError(f"{path}: {built}")
        return listed_builds(path, built)
    # An artifact holds its architectures: each is listed unless --arch picks one. A source is built
    # for --arch, else the GPU's.
    source_arch = options.arch or (environment.gpu.arch if environment.gpu is not None else None)
    return path_kernels(path, source_arch, options.arch, options.build, options.cache)


def listed_builds(path: Path, builds: dict[str, KernelBuild]) -> list[ListedKernel]:
    """An expectation file's kernels, built, as `build --json` lists them."""
    signatures = demangle(build.symbol for build in builds.values())
    return [
        listed((build.symbol, signatures[build.symbol], build.arch, build.facts), str(path))
        for build in builds.values()
    ]
