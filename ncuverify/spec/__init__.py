"""Stage 1: load an expectation file and validate it into typed values.

The YAML is read with PyYAML's safe composer and turned into plain values by hand, so that every value
keeps its line number (for error messages), duplicate keys are refused, plain scalars are typed as
YAML 1.2's core schema types them (not as YAML 1.1: 010 is not 8, yes is not true), and what reading
costs is bounded: the file's size, its nesting, the values it writes and what its aliases add to them
once expanded (as many as it writes: a large plain file reads, a billion laughs does not). pydantic then
validates the shape, strictly where numbers belong; references between kernels, cases and claims are
checked last. The problems are reported together (the first MAX_PROBLEMS), each with the file, the
line and the field.
"""

from ncuverify.spec.arguments import (
    BufferArg,
    Float32Arg,
    Float64Arg,
    Int32Arg,
    Int64Arg,
    UInt32Arg,
    UInt64Arg,
)
from ncuverify.spec.cases import CaseSpec
from ncuverify.spec.claims import Citation, Claim, Expectation, ExpectedFailure
from ncuverify.spec.expectation_file import ExpectationFile, Spec, Tolerance
from ncuverify.spec.fields import ARCH_PATTERN
from ncuverify.spec.kernels import KernelSpec
from ncuverify.spec.loading import MAX_FILE_BYTES, load
from ncuverify.spec.paths import expand_paths
from ncuverify.spec.project import project_root
from ncuverify.spec.schema import json_schema
from ncuverify.spec.yaml_reader import read_yaml

__all__ = [
    "ARCH_PATTERN",
    "MAX_FILE_BYTES",
    "BufferArg",
    "CaseSpec",
    "Citation",
    "Claim",
    "Expectation",
    "ExpectationFile",
    "ExpectedFailure",
    "Float32Arg",
    "Float64Arg",
    "Int32Arg",
    "Int64Arg",
    "KernelSpec",
    "Spec",
    "Tolerance",
    "UInt32Arg",
    "UInt64Arg",
    "expand_paths",
    "json_schema",
    "load",
    "project_root",
    "read_yaml",
]
