"""`ncuverify doctor`: what this machine offers a check, each finding with its remedy. The GPUs and
their driver, Nsight Compute, whether the counters can be read (the driver's admin-only setting, the
capability that suffices, a container), MIG, and the compile toolchain; then, where a GPU and ncu
are there, a trial: one kernel profiled for one counter, which is the proof that ncu suits the driver
and may read the counters here.

Each check reads the machine through a function it is given (the defaults read this one), so that
every finding can be shown without the hardware that gives it."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ncuverify.environment import Gpu
from ncuverify.errors import EnvironmentProblem, ExitCode
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.text import one_line


class State(Enum):
    OK = "ok"
    MISSING = "missing"  # not here, or not working
    NOTE = "note"  # worth knowing; a check still runs


@dataclass(frozen=True)
class Finding:
    what: str  # GPU, driver, ncu, counters, MIG, NVRTC, nvcc, cuobjdump, nvdisasm, trial
    state: State
    detail: str
    remedy: str = ""
    needed: bool = True  # `check` cannot profile without it


def missing(findings: list[Finding]) -> list[str]:
    """What `check` needs to profile and does not find here."""
    return [f.what for f in findings if f.needed and f.state is State.MISSING]


def exit_code(findings: list[Finding]) -> ExitCode:
    """OK where everything `check` needs is there, else NOT_MEASURABLE."""
    return ExitCode.NOT_MEASURABLE if missing(findings) else ExitCode.OK


# What the tools asked answer within; one that takes longer is stuck.
TOOL_TIMEOUT_S = 10.0
# What lets this process read counters the driver keeps to administrators.
ADMIN_REMEDY = (
    "run as root or with CAP_SYS_ADMIN, or load the driver with NVreg_RestrictProfilingToAdminUsers=0"
)
# The trial's ncu process: its start, one launch, one pass.
TRIAL_TIMEOUT_S = 120.0
# The driver's setting that keeps the counters to administrators, and the capability that passes it.
_ADMIN_ONLY = re.compile(r"^RmProfilingAdminOnly:\s*(\d+)\s*$", re.MULTILINE)
_CAP_SYS_ADMIN = 21
_KERNEL_MODULE = re.compile(r"Kernel Module\s+([0-9]+(?:\.[0-9]+){1,3})")


def gpu_findings(gpus: list[Gpu], problem: str | None, kernel_module: str | None) -> list[Finding]:
    """Each GPU (name, architecture) and the driver's versions: its kernel module's, where known, and
    the CUDA version it supports; a missing GPU with why."""
    if problem is not None or not gpus:
        remedy = "install the NVIDIA driver, or run where a GPU is (a container needs --gpus all)"
        return [Finding("GPU", State.MISSING, one_line(problem or "no NVIDIA GPU"), remedy)]
    findings = [Finding("GPU", State.OK, one_line(f"{gpu.index}: {gpu.name} ({gpu.arch})")) for gpu in gpus]
    versions = [kernel_module or "", f"CUDA {gpus[0].driver_version}"]
    findings.append(Finding("driver", State.OK, one_line(", ".join(v for v in versions if v)), needed=False))
    return findings


def ncu_finding(
    executable: str, find: Callable[[str], str], version: Callable[[str], str | None]
) -> tuple[Finding, str | None]:
    """ncu's version and path (its problem says the remedy: install it, a newer one, --ncu PATH)."""
    try:
        path = find(executable)
    except EnvironmentProblem as problem:
        return Finding("ncu", State.MISSING, one_line(str(problem))), None
    return Finding("ncu", State.OK, one_line(f"{version(path) or 'unknown version'} at {path}")), path


def counter_finding(params: str | None, capabilities: int, uid: int, container: bool) -> Finding:
    """Whether the driver keeps the counters to administrators and whether this process is one."""
    setting = _ADMIN_ONLY.search(params or "")
    where = (
        " (in a container: the host's driver setting applies, and --cap-add SYS_ADMIN passes it)"
        if container
        else ""
    )
    if setting is None:
        return Finding(
            "counters",
            State.NOTE,
            f"the driver's setting is not readable here (/proc/driver/nvidia/params){where}; the trial tells",
            needed=False,
        )
    if setting.group(1) == "0":
        return Finding("counters", State.OK, f"open to every user (RmProfilingAdminOnly: 0){where}")
    if uid == 0 or capabilities >> _CAP_SYS_ADMIN & 1:
        return Finding(
            "counters",
            State.OK,
            f"kept to administrators (RmProfilingAdminOnly: 1), and this process is one (root or CAP_SYS_ADMIN){where}",
        )
    return Finding(
        "counters",
        State.MISSING,
        f"kept to administrators (RmProfilingAdminOnly: 1), and this process is not one{where}",
        ADMIN_REMEDY,
    )


def mig_finding(modes: list[str]) -> Finding:
    """MIG on a GPU: ncu profiles an instance, not the whole GPU, and some metrics are not there."""
    enabled = [str(index) for index, mode in enumerate(modes) if mode.strip().lower() == "enabled"]
    if not modes:
        return Finding("MIG", State.NOTE, "not known (no nvidia-smi)", needed=False)
    if enabled:
        return Finding(
            "MIG",
            State.NOTE,
            f"enabled on GPU {', '.join(enabled)}: ncu measures one instance, and whole-GPU metrics are missing",
            "profile on a GPU with MIG off for device-wide claims",
            needed=False,
        )
    return Finding("MIG", State.OK, "off", needed=False)


def toolchain_findings(
    nvrtc: Callable[[], tuple[int, int]], tool: Callable[[str], str | None]
) -> list[Finding]:
    """NVRTC (every check compiles with it), nvcc (for `compiler: nvcc` kernels), cuobjdump and
    nvdisasm (for SASS claims and built artifacts)."""
    try:
        major, minor = nvrtc()
        findings = [Finding("NVRTC", State.OK, f"{major}.{minor}")]
    except Exception as error:  # no NVRTC library: nothing compiles
        findings = [
            Finding(
                "NVRTC",
                State.MISSING,
                one_line(f"cannot be loaded: {error}"),
                "pip install 'cuda-toolkit[nvrtc]' or install a CUDA toolkit",
            )
        ]
    remedies = {
        "nvcc": "pip install 'cuda-toolkit[nvcc]' or install a CUDA toolkit: kernels with `compiler: nvcc` need it",
        "g++": "install g++: nvcc compiles host code with it",
        "cuobjdump": "pip install 'cuda-toolkit[cuobjdump]' or install a CUDA toolkit: claims on SASS and built artifacts need it",
        "nvdisasm": "pip install 'cuda-toolkit[nvdisasm]' or install a CUDA toolkit: claims on SASS need it",
    }
    for name, remedy in remedies.items():
        found = tool(name)
        findings.append(
            Finding(name, State.OK, found, needed=False)
            if found
            else Finding(name, State.MISSING, "not found", remedy, needed=False)
        )
    return findings


# The trial: one warp of a kernel that does nothing, and the counter of warps launched, which reads 1
# only where ncu runs with this driver and may read the counters.
TRIAL_FILE = """\
kernels:
  nothing:
    source: 'extern "C" __global__ void nothing() {}'
    entry: nothing
cases:
  one_warp: {kernel: nothing, grid: 1, block: 32, args: []}
claims:
  - id: counters_read
    case: one_warp
    metric: smsp__warps_launched.sum
    expect: {equals: 1}
    why: ncu profiles a kernel here and reads its counters
"""


def trial_finding(ncu: str, arch: str) -> Finding:
    """One kernel profiled for one counter through ncuverify's own pipeline: passed, or why not (what
    ncu said, as a check would say it)."""
    from ncuverify import options, pipeline
    from ncuverify.profile import NcuOptions
    from ncuverify.results import Verdict

    with tempfile.TemporaryDirectory(prefix="ncuverify-doctor-") as folder:
        path = Path(folder) / "trial.yaml"
        path.write_text(TRIAL_FILE)
        run = options.for_run(arch=arch, ncu=NcuOptions(executable=ncu), cache=False, explain=False)
        [result] = pipeline.check_files([path], run)
    said = result.input_error or result.internal_error or result.not_run
    claim = result.claims[0] if result.claims else None
    if claim is not None and claim.verdict is Verdict.PASSED:
        return Finding("trial", State.OK, "one kernel profiled, its counters read")
    reason = one_line(said or (claim.reason if claim else None) or "no verdict")
    return Finding("trial", State.MISSING, f"profiling one kernel failed: {reason}", _trial_remedy(reason))


def _trial_remedy(reason: str) -> str:
    if "ERR_NVGPUCTRPERM" in reason:
        return ADMIN_REMEDY
    return "an ncu as new as the driver (ncu --version; see Nsight Compute's release notes for the drivers it supports)"


def examine(ncu: str = "ncu", trial: bool = True) -> list[Finding]:
    """Every finding about this machine, the trial last (where a GPU and ncu are there)."""
    from ncuverify.build.toolkit import find_tool, nvrtc_version
    from ncuverify.environment import find_ncu, ncu_version

    try:
        gpus, problem = _gpus(), None
    except EnvironmentProblem as error:
        gpus, problem = [], str(error)
    findings = gpu_findings(gpus, problem, _kernel_module())
    found_ncu, ncu_path = ncu_finding(ncu, find_ncu, ncu_version)
    findings.append(found_ncu)
    findings.append(
        counter_finding(_read("/proc/driver/nvidia/params"), _capabilities(), os.getuid(), _in_container())
    )
    findings.append(mig_finding(_mig_modes()))
    findings += toolchain_findings(
        nvrtc_version, lambda name: shutil.which(name) if name == "g++" else find_tool(name)
    )
    compiles = all(f.state is State.OK for f in findings if f.what == "NVRTC")
    if trial and gpus and ncu_path is not None and compiles:
        findings.append(trial_finding(ncu_path, gpus[0].arch))
    return findings


def _gpus() -> list[Gpu]:
    from ncuverify.environment import detect_gpu, gpu_count

    first = detect_gpu()  # EnvironmentProblem where there is none
    return [first, *(detect_gpu(index) for index in range(1, gpu_count()))]


def _kernel_module() -> str | None:
    """The NVIDIA kernel module's version (580.159.04), where /proc/driver/nvidia/version says it."""
    found = _KERNEL_MODULE.search(_read("/proc/driver/nvidia/version") or "")
    return found.group(1) if found else None


def _mig_modes() -> list[str]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        answer = run_bounded([smi, "--query-gpu=mig.mode.current", "--format=csv,noheader"], TOOL_TIMEOUT_S)
    except (OSError, TimedOut):
        return []
    return (
        [line for line in answer.stdout.splitlines()[:64] if len(line) <= 40]
        if answer.returncode == 0
        else []
    )


def _capabilities() -> int:
    """This process's effective capabilities (CapEff of /proc/self/status), 0 where not known."""
    found = re.search(r"^CapEff:\s*([0-9a-f]{1,16})$", _read("/proc/self/status") or "", re.MULTILINE)
    return int(found.group(1), 16) if found else 0


def _in_container() -> bool:
    markers = (Path("/.dockerenv"), Path("/run/.containerenv"))
    return any(marker.exists() for marker in markers) or any(
        word in (_read("/proc/1/cgroup") or "") for word in ("docker", "kubepods", "containerd", "lxc")
    )


def _read(path: str, limit: int = 64 * 1024) -> str | None:
    """The start of a small system file, None where it cannot be read."""
    try:
        with open(path, "rb") as file:
            return file.read(limit).decode(errors="replace")
    except OSError:
        return None
