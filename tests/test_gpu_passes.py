"""On a real GPU under Nsight Compute: the pass model predicts the replay passes ncu reports for every
launch of a run. Skipped, with the reason, where there is no GPU."""

from pathlib import Path

import pytest
from conftest import DATA, ROOT
from test_passes import recorded_launches

from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.profile.passes import model_for

pytestmark = pytest.mark.gpu


def test_the_model_predicts_the_passes_of_every_launch_of_a_live_run(gpu_environment, tmp_path: Path):
    paths = [
        DATA / "sample.yaml",
        ROOT / "expectations" / "transpose.yaml",
        ROOT / "expectations" / "bank_conflicts.yaml",
    ]
    check_files(paths, CheckOptions(save_profile=tmp_path), gpu_environment)
    model = model_for(gpu_environment.gpu.arch, gpu_environment.ncu)
    launches = recorded_launches(tmp_path)
    assert launches
    wrong = [
        (sorted(metrics), ncu, model.passes(metrics))
        for metrics, ncu in launches
        if model.passes(metrics) != ncu
    ]
    assert wrong == [], model.source
