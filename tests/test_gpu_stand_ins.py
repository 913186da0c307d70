"""On a real GPU under Nsight Compute: each stand-in metric equals the metric it stands in for, launch by
launch, over the suite's files that read them. Skipped, with the reason, where there is no GPU."""

from pathlib import Path

import pytest
from conftest import ROOT

from ncuverify.build import build_spec
from ncuverify.names import STAND_INS
from ncuverify.profile import NcuOptions
from ncuverify.profile.plan import FileCases, plan_cases
from ncuverify.profile.run import run_ncu
from ncuverify.profile.table import tidy_rows
from ncuverify.spec import load

pytestmark = pytest.mark.gpu

# The files whose kernels load and store global and shared memory in every pattern the suite has:
# coalesced, strided, transposed, padded, conflicting.
FILES = ("coalescing.yaml", "transpose.yaml", "bank_conflicts.yaml", "async_copy.yaml")


def test_each_stand_in_equals_its_original_on_every_launch(gpu_environment, tmp_path: Path):
    arch = gpu_environment.gpu.arch
    files = []
    for name in FILES:
        spec = load(ROOT / "expectations" / name)
        files.append(FileCases(name, spec, build_spec(spec, arch), list(spec.content.claims)))
    planned, _ = plan_cases(files, tmp_path)
    both = {metric for s in STAND_INS.values() for metric in (s.original, s.stand_in)}
    ncu = NcuOptions(executable=gpu_environment.ncu or "ncu")
    run = run_ncu(tmp_path / "run", list(planned.values()), both, ncu)
    assert all(status.ok for status in run.cases), [s.error for s in run.cases if not s.ok]
    by_launch: dict[int, dict[str, float]] = {}
    for launch, _, metric, value, _ in tidy_rows(run.report):
        by_launch.setdefault(launch, {})[metric] = value
    assert len(by_launch) >= len(planned)
    for original, stand_in in STAND_INS.items():
        pairs = [(v[original], v[stand_in.stand_in]) for v in by_launch.values()]
        differing = [
            (launch, pair) for launch, pair in zip(by_launch, pairs, strict=True) if pair[0] != pair[1]
        ]
        assert not differing, (original, differing[:5])
