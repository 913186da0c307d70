from ncuverify.pipeline import Environment


def test_the_environment_says_why_it_cannot_measure(monkeypatch):
    from ncuverify import environment, pipeline
    from ncuverify.errors import EnvironmentProblem

    def no_driver(index: int = 0):
        raise EnvironmentProblem("no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded")

    monkeypatch.setattr(pipeline, "detect_gpu", no_driver)
    probed = Environment.probe("ncu")
    assert (probed.gpu, probed.ncu) == (None, None)
    assert probed.problem == "no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded"
    gpu = environment.Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    monkeypatch.setattr(pipeline, "detect_gpu", lambda index=0: gpu)
    probed = Environment.probe("no-such-ncu")
    assert probed.gpu == gpu and probed.ncu is None and "ncu is not on the PATH" in (probed.problem or "")
