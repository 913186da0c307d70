"""What a program case's `env` may set: an allow-list of classes of names, less one table of the names
that the classes exclude, each with why.

The program's environment is also ncu's: ncu starts from a bash script, loads its own libraries and
injects them into the program. So a name that a shell, the dynamic loader, the C library, an
interpreter or the profiler reads could make ncu run a command or load code that is not the program's,
or change what it measures; such names are refused, as are those ncuverify sets itself. What only the
program reads (its framework's and CUDA's switches, any name of its own) passes.
"""

from __future__ import annotations

import re

# The classes of names that reach the program: (pattern, what they are for). Every class is a plain
# upper-case name, so the table below applies to each of them.
ALLOWED_ENV = (
    ("CUDA_*", "CUDA's device and runtime switches (CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING ...)"),
    ("TORCH_*, PYTORCH_*, TRITON_*, CUPY_*", "the frameworks' switches"),
    ("NCCL_*, CUBLAS_*, CUBLASLT_*, CUDNN_*", "the CUDA libraries' switches"),
    ("OMP_*, MKL_*, OPENBLAS_*", "thread counts of the host's math libraries"),
    ("[A-Z][A-Z0-9_]*", "any other upper-case name the program reads"),
)
_PLAIN_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,127}", re.ASCII)

_NCUVERIFY = "ncuverify sets it"
_BASH = "bash reads it (ncu starts from a bash script)"
_LOADER = "the dynamic loader reads it: it loads code into ncu and the program"
_LIBC = "the C library reads it (files it loads, how it allocates or resolves)"
_LOCALE = "ncuverify sets the C locale, the number format ncu's output is read in"
_PROFILER = "ncu, or the profiling library it injects, reads it"
_INTERPRETER = "an interpreter reads it: it runs or loads code before the program's own"

# The names the classes above exclude: a name, or a prefix ending in `*`, and why.
REFUSED_ENV: dict[str, str] = {
    # What ncuverify sets for the program: where programs are, who runs them, which GPU.
    "PATH": _NCUVERIFY,
    "HOME": _NCUVERIFY,
    "TMPDIR": _NCUVERIFY + "; the C library reads it",
    "USER": _NCUVERIFY,
    "LOGNAME": _NCUVERIFY,
    "CUDA_VISIBLE_DEVICES": _NCUVERIFY + ": the GPU that is profiled",
    "CUDA_DEVICE_ORDER": "it changes which GPU CUDA_VISIBLE_DEVICES names (ncuverify picks the GPU)",
    "CUDA_MPS_*": "it sends the program's work to an MPS server, which ncu does not profile",
    # Shells: a file sourced, options turned on, how words are split and commands found (what only an
    # interactive shell reads, PS1, HISTFILE, PROMPT_COMMAND, changes nothing in a script).
    "BASH*": "bash reads it (ncu starts from a bash script): BASH_ENV names a file it runs first",
    "ENV": "a POSIX shell runs the file it names",
    "SHELLOPTS": _BASH,
    "SHELL": "programs start it as the user's shell",
    "IFS": _BASH,
    "PS4": _BASH,
    "CDPATH": _BASH,
    "GLOBIGNORE": _BASH,
    "EXECIGNORE": _BASH,
    "FIGNORE": _BASH,
    "GLOBSORT": _BASH,
    "FUNCNEST": _BASH,
    "TIMEFORMAT": _BASH,
    "CHILD_MAX": _BASH,
    "OPTERR": _BASH,
    "OPTIND": _BASH,
    "PWD": _BASH,
    "OLDPWD": _BASH,
    "SHLVL": _BASH,
    "POSIXLY_CORRECT": "bash and the C library's option parsing change behaviour on it",
    "TEXTDOMAIN*": "gettext loads message catalogues from where it says",
    # The dynamic loader (ld.so(8)) and the C library (glibc's list of unsafe variables, and more).
    "LD_*": _LOADER,
    "DYLD_*": _LOADER,
    "GLIBC_TUNABLES": _LIBC,
    "MALLOC_*": _LIBC,
    "GCONV_PATH": _LIBC,
    "GETCONF_DIR": _LIBC,
    "LOCPATH": _LIBC,
    "NLSPATH": _LIBC,
    "NIS_PATH": _LIBC,
    "HOSTALIASES": _LIBC,
    "RES_OPTIONS": _LIBC,
    "RESOLV_*": _LIBC,
    "LOCALDOMAIN": _LIBC,
    "TZ": _LIBC,
    "TZDIR": _LIBC,
    "DATEMSK": _LIBC,
    "GMON_OUT_PREFIX": _LIBC,
    "LIBC_FATAL_STDERR_": _LIBC,
    "MEMUSAGE_*": _LIBC,
    "SEGFAULT_*": _LIBC,
    "PCPROFILE_OUTPUT": _LIBC,
    "MSGVERB": _LIBC,
    "SEV_LEVEL": _LIBC,
    "LANG": _LOCALE,
    "LANGUAGE": _LOCALE,
    "LC_*": _LOCALE,
    "TERM*": "terminal libraries load the terminal description it names",
    # The profiler: ncu's own switches, and the libraries it injects.
    "NV_*": _PROFILER,
    "NSIGHT*": _PROFILER,
    "NVTX_*": "ncu and NVTX read it: NVTX_INJECTION64_PATH names a library to load",
    "CUDA_INJECTION*": "ncu sets it: it names the library CUDA loads into the program",
    "QT_*": "Qt, which Nsight Compute ships, loads plugins from where it says",
    "QML*": "Qt, which Nsight Compute ships, loads modules from where it says",
    "DBUS_*": "it names the message bus that libraries connect to",
    # Interpreters and tools that run or load code named by a variable.
    "PYTHON*": _INTERPRETER,
    "PERL*": _INTERPRETER,
    "RUBY*": _INTERPRETER,
    "GEM_*": _INTERPRETER,
    "NODE_*": _INTERPRETER,
    "JAVA_*": _INTERPRETER,
    "JDK_*": _INTERPRETER,
    "CLASSPATH": _INTERPRETER,
    "LUA_*": _INTERPRETER,
    "TCL*": _INTERPRETER,
    "R_LIBS*": _INTERPRETER,
    "R_PROFILE*": _INTERPRETER,
    "R_ENVIRON*": _INTERPRETER,
    "GIT_*": "git runs the commands and reads the files it names",
    "SSL_*": "TLS libraries load the certificates and files it names",
    "OPENSSL_*": "OpenSSL loads the configuration and engines it names",
    "XDG_*": "libraries look for their configuration and data where it says",
}
_REFUSED_NAMES = {name: why for name, why in REFUSED_ENV.items() if not name.endswith("*")}
_REFUSED_PREFIXES = tuple((name[:-1], why) for name, why in REFUSED_ENV.items() if name.endswith("*"))


def env_refusal(name: str) -> str | None:
    """Why a program case may not set the variable name; None where it may."""
    if not _PLAIN_NAME.fullmatch(name):
        return (
            f"{name!r} may not be set: only upper-case names ([A-Z][A-Z0-9_]*, at most 128) reach the"
            " program; lower-case and other names are what shells and tools read"
        )
    why = _REFUSED_NAMES.get(name)
    if why is None:
        why = next((reason for prefix, reason in _REFUSED_PREFIXES if name.startswith(prefix)), None)
    return f"{name} may not be set: {why}" if why is not None else None
