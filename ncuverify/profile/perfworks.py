"""How many hardware passes a set of counters takes on a chip, from NVIDIA's perfworks host library
(`libnvperf_host.so`: the scheduler of counters that CUPTI and Nsight Compute both use), through ctypes
and with no GPU: the metrics evaluator gives each metric's raw counters, a raw-metrics configuration
of those counters gives its number of passes.

The library ships in the `nvidia-cuda-cupti` wheel, in a CUDA toolkit (`extras/CUPTI/lib64`) and with
Nsight Compute. It is looked for only in installed places (site-packages, CUDA_HOME or CUDA_PATH,
/usr/local/cuda*, the folder of the ncu in use), never in the working folder, which a pull request
controls; NCUVERIFY_NVPERF_HOST names it, or `none` to ask it nothing. Every failure (no library, a
call that fails, a metric it does not know) is None: the pass model then uses its own table
(ncuverify.profile.passes).
"""

from __future__ import annotations

import ctypes
import glob
import os
import shutil
import site
import sysconfig
from pathlib import Path

LIBRARY = "libnvperf_host.so"
LIBRARY_VARIABLE = "NCUVERIFY_NVPERF_HOST"
# perfworks's enum for a configuration of counters collected by replay (NVPA_ACTIVITY_KIND_PROFILER)
_ACTIVITY_KIND_PROFILER = 1

_size_t, _void_p, _char_p, _u8 = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint8


def _params(name: str, fields: list[tuple[str, object]]) -> type[ctypes.Structure]:
    """A perfworks parameter struct: its size first (the library checks it, refusing a layout it does
    not know), a private pointer, then its own fields (nvperf_host.h, nvperf_cuda_host.h)."""
    return type(
        name, (ctypes.Structure,), {"_fields_": [("structSize", _size_t), ("pPriv", _void_p), *fields]}
    )


class _EvalRequest(ctypes.Structure):
    _fields_ = [
        ("metricIndex", _size_t),
        ("metricType", _u8),
        ("rollupOp", _u8),
        ("submetric", ctypes.c_uint16),
    ]


class _RawRequest(ctypes.Structure):
    _fields_ = [
        ("structSize", _size_t),
        ("pPriv", _void_p),
        ("pMetricName", _char_p),
        ("isolated", _u8),
        ("keepInstances", _u8),
    ]


_Initialize = _params("Initialize", [])
_ScratchSize = _params(
    "ScratchSize",
    [("pChipName", _char_p), ("pCounterAvailabilityImage", _void_p), ("scratchBufferSize", _size_t)],
)
_EvaluatorInit = _params(
    "EvaluatorInit",
    [
        ("pScratchBuffer", _void_p),
        ("scratchBufferSize", _size_t),
        ("pChipName", _char_p),
        ("pCounterAvailabilityImage", _void_p),
        ("pCounterDataImage", _void_p),
        ("counterDataImageSize", _size_t),
        ("pMetricsEvaluator", _void_p),
    ],
)
_ToRequest = _params(
    "ToRequest",
    [
        ("pMetricsEvaluator", _void_p),
        ("pMetricName", _char_p),
        ("pMetricEvalRequest", ctypes.POINTER(_EvalRequest)),
        ("metricEvalRequestStructSize", _size_t),
    ],
)
_RawDependencies = _params(
    "RawDependencies",
    [
        ("pMetricsEvaluator", _void_p),
        ("pMetricEvalRequests", ctypes.POINTER(_EvalRequest)),
        ("numMetricEvalRequests", _size_t),
        ("metricEvalRequestStructSize", _size_t),
        ("metricEvalRequestStrideSize", _size_t),
        ("ppRawDependencies", ctypes.POINTER(_char_p)),
        ("numRawDependencies", _size_t),
        ("ppOptionalRawDependencies", ctypes.POINTER(_char_p)),
        ("numOptionalRawDependencies", _size_t),
    ],
)
_ConfigCreate = _params(
    "ConfigCreate",
    [
        ("activityKind", ctypes.c_int),
        ("pChipName", _char_p),
        ("pCounterAvailabilityImage", _void_p),
        ("pRawMetricsConfig", _void_p),
    ],
)
_BeginPassGroup = _params("BeginPassGroup", [("pRawMetricsConfig", _void_p), ("maxPassCount", _size_t)])
_AddMetrics = _params(
    "AddMetrics",
    [
        ("pRawMetricsConfig", _void_p),
        ("pRawMetricRequests", ctypes.POINTER(_RawRequest)),
        ("numMetricRequests", _size_t),
    ],
)
_Config = _params("Config", [("pRawMetricsConfig", _void_p)])
_Generate = _params("Generate", [("pRawMetricsConfig", _void_p), ("mergeAllPassGroups", _u8)])
_NumPasses = _params("NumPasses", [("pRawMetricsConfig", _void_p), ("numPasses", _size_t)])


class PerfworksError(Exception):
    """A perfworks call that failed, or a library that cannot be used."""


def find_library(ncu: str | None = None) -> Path | None:
    """libnvperf_host.so where an installation keeps it (see the module's notes); None where none is, or
    where NCUVERIFY_NVPERF_HOST says `none`."""
    named = os.environ.get(LIBRARY_VARIABLE, "")
    if named:
        return None if named == "none" else Path(named)
    folders: list[str] = []
    for packages in {
        *site.getsitepackages(),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    }:
        folders += glob.glob(os.path.join(packages, "nvidia", "cu1*", "lib"))
        folders.append(os.path.join(packages, "nvidia", "cuda_cupti", "lib"))
    for root in (
        os.environ.get("CUDA_HOME"),
        os.environ.get("CUDA_PATH"),
        *sorted(glob.glob("/usr/local/cuda*")),
    ):
        if root:
            folders += [os.path.join(root, "extras", "CUPTI", "lib64"), os.path.join(root, "lib64")]
            folders.append(os.path.join(root, "lib"))
    found_ncu = shutil.which(ncu or "ncu")
    if found_ncu is not None:
        home = os.path.dirname(os.path.realpath(found_ncu))
        folders += sorted(glob.glob(os.path.join(home, "target", "linux-*")))
    for folder in folders:
        path = Path(folder) / LIBRARY
        if path.is_file():
            return path
    return None


class Perfworks:
    """perfworks's counter scheduler for one chip (`GH100`): made once, then asked for any set."""

    def __init__(self, library: Path, chip: str) -> None:
        try:
            self._library = ctypes.CDLL(str(library))
        except OSError as error:
            raise PerfworksError(f"{library}: cannot be loaded ({error})") from None
        self._chip = chip.upper().encode()
        self._call("NVPW_InitializeHost", _Initialize(ctypes.sizeof(_Initialize)))
        size = _ScratchSize(ctypes.sizeof(_ScratchSize), None, self._chip, None, 0)
        self._call("NVPW_CUDA_MetricsEvaluator_CalculateScratchBufferSize", size)
        self._scratch = (ctypes.c_uint8 * size.scratchBufferSize)()
        init = _EvaluatorInit(
            ctypes.sizeof(_EvaluatorInit), None, ctypes.cast(self._scratch, _void_p), size.scratchBufferSize
        )
        init.pChipName = self._chip
        self._call("NVPW_CUDA_MetricsEvaluator_Initialize", init)
        self._evaluator = init.pMetricsEvaluator
        self._raw: dict[str, tuple[bytes, ...]] = {}  # each metric's raw counters, asked once
        self._passes: dict[frozenset[bytes], int] = {}  # sets of other metrics may need the same counters

    def _call(self, name: str, params: ctypes.Structure) -> None:
        function = getattr(self._library, name, None)
        if function is None:
            raise PerfworksError(f"{name}: not in the library")
        status = function(ctypes.byref(params))
        if status != 0:
            raise PerfworksError(f"{name}: status {status}")

    def raw_counters(self, metric: str) -> tuple[bytes, ...]:
        """The raw counters a metric is computed from. PerfworksError for a metric the chip lacks."""
        if metric not in self._raw:
            self._raw[metric] = self._ask_raw_counters(metric)
        return self._raw[metric]

    def _ask_raw_counters(self, metric: str) -> tuple[bytes, ...]:
        request = _EvalRequest()
        size = ctypes.sizeof(_EvalRequest)
        self._call(
            "NVPW_MetricsEvaluator_ConvertMetricNameToMetricEvalRequest",
            _ToRequest(
                ctypes.sizeof(_ToRequest),
                None,
                self._evaluator,
                metric.encode(),
                ctypes.pointer(request),
                size,
            ),
        )
        dependencies = _RawDependencies(
            ctypes.sizeof(_RawDependencies), None, self._evaluator, ctypes.pointer(request), 1, size, size
        )
        self._call("NVPW_MetricsEvaluator_GetMetricRawDependencies", dependencies)  # how many
        names = (_char_p * max(1, dependencies.numRawDependencies))()
        optional = (_char_p * max(1, dependencies.numOptionalRawDependencies))()
        dependencies.ppRawDependencies, dependencies.ppOptionalRawDependencies = names, optional
        self._call("NVPW_MetricsEvaluator_GetMetricRawDependencies", dependencies)
        return tuple(name for name in names[: dependencies.numRawDependencies] if name)

    def passes(self, metrics: frozenset[str]) -> int:
        """The hardware passes that collecting these metrics takes. PerfworksError where it cannot say."""
        needed = frozenset(counter for metric in metrics for counter in self.raw_counters(metric))
        if needed not in self._passes:
            self._passes[needed] = self._ask_passes(sorted(needed)) if needed else 0
        return self._passes[needed]

    def _ask_passes(self, counters: list[bytes]) -> int:
        create = _ConfigCreate(ctypes.sizeof(_ConfigCreate), None, _ACTIVITY_KIND_PROFILER, self._chip)
        self._call("NVPW_CUDA_RawMetricsConfig_Create_V2", create)
        config = create.pRawMetricsConfig
        try:
            self._call(
                "NVPW_RawMetricsConfig_BeginPassGroup",
                _BeginPassGroup(ctypes.sizeof(_BeginPassGroup), None, config, 0),
            )
            requests = (_RawRequest * len(counters))()
            for index, counter in enumerate(counters):
                requests[index] = _RawRequest(ctypes.sizeof(_RawRequest), None, counter, 1, 1)
            add = _AddMetrics(ctypes.sizeof(_AddMetrics), None, config, requests, len(counters))
            self._call("NVPW_RawMetricsConfig_AddMetrics", add)
            self._call("NVPW_RawMetricsConfig_EndPassGroup", _Config(ctypes.sizeof(_Config), None, config))
            self._call(
                "NVPW_RawMetricsConfig_GenerateConfigImage",
                _Generate(ctypes.sizeof(_Generate), None, config, 0),
            )
            count = _NumPasses(ctypes.sizeof(_NumPasses), None, config, 0)
            self._call("NVPW_RawMetricsConfig_GetNumPasses_V2", count)
            return int(count.numPasses)
        finally:
            self._call("NVPW_RawMetricsConfig_Destroy", _Config(ctypes.sizeof(_Config), None, config))
