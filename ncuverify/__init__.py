"""ncuverify: turn quantitative claims about CUDA kernels into checks measured on the hardware."""

__version__ = "0.1.0"
