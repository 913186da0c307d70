"""`ncuverify init`: a starter expectation file for the kernels of a source, which passes as written."""

from ncuverify.init.making import StarterFile, starter_file
from ncuverify.init.writing import write_new

__all__ = ["StarterFile", "starter_file", "write_new"]
