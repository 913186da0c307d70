"""The source page of the second pass: each profiled launch's CUDA source lines with their metrics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ncuverify.errors import InputError
from ncuverify.explain.reading import page_rows
from ncuverify.ncu.numbers import cell_number
from ncuverify.ncu.pages import fit

# Source-page columns that describe a row rather than measure it.
_SOURCE_DESCRIPTIVE = frozenset({"Line No", "Source", "Address"})


@dataclass(frozen=True)
class LineRow:
    """One CUDA source line of the source page, with that line's metrics aggregated over its SASS."""

    file: str
    line: int
    text: str
    metrics: Mapping[str, float]  # NaN where ncu printed "-" or "n/a"; text-valued columns left out


@dataclass(frozen=True)
class SourceBlock:
    """One profiled launch of the source page."""

    kernel: str
    lines: tuple[LineRow, ...]


@dataclass(frozen=True)
class _Columns:
    """Where a source-page header puts the columns this module reads."""

    names: tuple[str, ...]
    source: int  # the first "Source" column is the CUDA text; the second one is the SASS text

    @classmethod
    def of(cls, header: list[str]) -> _Columns:
        if "Source" not in header:
            raise InputError('the ncu source page has a "Line No" header without a "Source" column')
        return cls(tuple(header), header.index("Source"))


def parse_source(source_csv: str) -> list[SourceBlock]:
    """One block per profiled launch, in launch order, with its CUDA source lines.

    A launch runs from a "Function Name" row to the next one. A "File Path" row sets the file of the
    rows after it, which ncu prints before the "Function Name" row and again within a launch where the
    kernel spans several files (inlined headers). SASS rows (no line number) are skipped: the CUDA line
    row above them already holds their sum. A page of ncu's notices alone (`==WARNING== No lineinfo
    available ...`) is what ncu prints for kernels built without line information (a library's,
    PyTorch's): no blocks.
    """
    blocks: list[SourceBlock] = []
    kernel: str | None = None
    lines: list[LineRow] = []
    file = ""
    columns: _Columns | None = None
    rows = page_rows(source_csv, "source")
    if not rows and all(line.startswith("==") for line in source_csv.splitlines() if line.strip()):
        return blocks
    for fields in rows:
        key = fields[0]
        if key == "File Path":
            file = _second(fields)
        elif key == "Function Name":
            if kernel is not None:
                blocks.append(SourceBlock(kernel, tuple(lines)))
            kernel, lines = _second(fields), []
        elif key == "Line No":
            columns = _Columns.of(fields)
        elif columns is not None and key.isdigit():
            kernel = "" if kernel is None else kernel  # rows before any "Function Name": unnamed launch
            lines.append(_line_row(fit(fields, len(columns.names), columns.source), columns, file))
    if columns is None:
        raise InputError(
            'the ncu source page is not a CSV of the expected shape: no header row starting with "Line No" '
            "(expected the output of `ncu -i REPORT --csv --page source --print-source cuda,sass`)"
        )
    if kernel is not None:
        blocks.append(SourceBlock(kernel, tuple(lines)))
    return blocks


def _second(fields: list[str]) -> str:
    return fields[1].strip() if len(fields) > 1 else ""


def _line_row(fields: list[str], columns: _Columns, file: str) -> LineRow:
    metrics: dict[str, float] = {}
    for name, value in zip(columns.names, fields, strict=False):
        number = cell_number(value)
        if name not in _SOURCE_DESCRIPTIVE and number is not None:
            metrics[name] = number
    text = fields[columns.source] if columns.source < len(fields) else ""
    return LineRow(file=file, line=int(fields[0]), text=text.strip(), metrics=MappingProxyType(metrics))
