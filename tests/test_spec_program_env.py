"""What a program case's `env` may set: the allowed classes of names, and the names they exclude, why."""

import pytest
from cli_invoke import invoke_command
from expectation_edits import problems, write

from ncuverify.spec.program_env import REFUSED_ENV, env_refusal

ALLOWED = [
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "CUDA_CACHE_DISABLE",
    "TORCH_SHOW_CPP_STACKTRACES",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TRITON_CACHE_DIR",
    "CUPY_CACHE_DIR",
    "NCCL_DEBUG",
    "CUBLAS_WORKSPACE_CONFIG",
    "CUDNN_LOGINFO_DBG",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "SIZE",
    "BENCH_N",
    "HISTOGRAM_BINS",  # no shell variable's prefix
    "NVIDIA_TF32_OVERRIDE",  # not NV_
]

# The names a shell, the loader, the C library, an interpreter or the profiler reads, and what
# ncuverify sets: each refused, with its reason.
REFUSED = {
    "BASH_ENV": "bash reads it",
    "BASHOPTS": "bash reads it",
    "ENV": "a POSIX shell runs the file it names",
    "SHELLOPTS": "bash reads it",
    "IFS": "bash reads it",
    "PS4": "bash reads it",
    "CDPATH": "bash reads it",
    "GLOBIGNORE": "bash reads it",
    "HOME": "ncuverify sets it",
    "PATH": "ncuverify sets it",
    "SHELL": "programs start it as the user's shell",
    "TMPDIR": "ncuverify sets it",
    "CUDA_VISIBLE_DEVICES": "ncuverify sets it: the GPU that is profiled",
    "CUDA_DEVICE_ORDER": "ncuverify picks the GPU",
    "CUDA_MPS_PIPE_DIRECTORY": "MPS server",
    "LD_PRELOAD": "the dynamic loader reads it",
    "LD_AUDIT": "the dynamic loader reads it",
    "DYLD_INSERT_LIBRARIES": "the dynamic loader reads it",
    "PYTHONSTARTUP": "an interpreter reads it",
    "PYTHONPATH": "an interpreter reads it",
    "NV_COMPUTE_PROFILER_LOCAL_CONNECTION_OVERRIDE": "ncu, or the profiling library it injects, reads it",
    "NSIGHT_COMPUTE_HOME": "ncu, or the profiling library it injects, reads it",
    "NVTX_INJECTION64_PATH": "names a library to load",
    "CUDA_INJECTION64_PATH": "ncu sets it: it names the library CUDA loads",
    "GLIBC_TUNABLES": "the C library reads it",
    "MALLOC_CHECK_": "the C library reads it",
    "GCONV_PATH": "the C library reads it",
    "LOCPATH": "the C library reads it",
    "NLSPATH": "the C library reads it",
    "HOSTALIASES": "the C library reads it",
    "RES_OPTIONS": "the C library reads it",
    "LOCALDOMAIN": "the C library reads it",
    "TZ": "the C library reads it",
    "TZDIR": "the C library reads it",
    "LANG": "ncuverify sets the C locale",
    "LC_ALL": "ncuverify sets the C locale",
    "LC_NUMERIC": "ncuverify sets the C locale",
    "TERMINFO": "terminal libraries load the terminal description",
    "PERL5OPT": "an interpreter reads it",
    "RUBYOPT": "an interpreter reads it",
    "NODE_OPTIONS": "an interpreter reads it",
    "JAVA_TOOL_OPTIONS": "an interpreter reads it",
    "JDK_JAVA_OPTIONS": "an interpreter reads it",
    "GIT_SSH_COMMAND": "git runs the commands",
    "SSL_CERT_FILE": "TLS libraries load",
    "OPENSSL_CONF": "OpenSSL loads the configuration and engines",
    "XDG_CONFIG_HOME": "libraries look for their configuration",
    "QT_PLUGIN_PATH": "loads plugins",
    "_JAVA_OPTIONS": "only upper-case names",
    "http_proxy": "only upper-case names",
    "Path": "only upper-case names",
    "1X": "only upper-case names",
    "A-B": "only upper-case names",
    "A" * 129: "at most 128",
}


@pytest.mark.parametrize("name", ALLOWED)
def test_the_allowed_classes_reach_the_program(name):
    assert env_refusal(name) is None


@pytest.mark.parametrize(("name", "why"), REFUSED.items(), ids=lambda value: str(value)[:40])
def test_what_a_shell_loader_library_interpreter_or_profiler_reads_is_refused_saying_why(name, why):
    refusal = env_refusal(name)
    assert refusal is not None and why in refusal
    assert refusal.startswith((f"{name} may not be set: ", f"{name!r} may not be set: "))
    assert "\n" not in refusal


def test_every_entry_of_the_table_says_why_and_is_refused():
    for entry, why in REFUSED_ENV.items():
        name = entry.rstrip("*") + ("X" if entry.endswith("*") else "")
        assert why and env_refusal(name) == f"{name} may not be set: {why}"


def program_file(env: str) -> str:
    return f"""
cases:
  add:
    program: {{command: [python3, add.py], env: {env}}}
    kernel: add
claims:
  - id: add_time
    case: add
    metric: gpu__time_duration.sum
    expect: {{at_least: 0}}
    cite: {{document: d.txt, section: '1', figure: f}}
"""


def test_a_refused_name_is_named_where_the_file_sets_it(tmp_path):
    said = problems(write(tmp_path, program_file("{TORCH_SHOW: '1', BASH_ENV: /tmp/x.sh}")))
    assert "cases.add.program.env.BASH_ENV: BASH_ENV may not be set: bash reads it" in said


def test_lint_refuses_the_file_with_exit_2_and_one_line(tmp_path):
    (tmp_path / ".ncuverify-root").touch()
    path = write(tmp_path, program_file("{LD_PRELOAD: /tmp/x.so}"))
    result = invoke_command("lint", str(path))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if "LD_PRELOAD" in line]
    assert len(lines) == 1 and "the dynamic loader reads it" in lines[0]
