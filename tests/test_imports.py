"""What a check of static claims and a replay import: neither pandas nor numpy, whose imports cost more
than the check itself (the measurement table is plain rows until a DataFrame is asked of it); and the
package's import graph, deferred imports included: no cycles, the spec below the build."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from confinement import checkout_environment
from conftest import COMPILE_CACHE, DATA, FIXTURES

import ncuverify

CHECK = """
import sys
from pathlib import Path
from pathlib import Path
from ncuverify.build.cache import CompileCache
from ncuverify.environment import Environment
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
import ncuverify.cli
options = CheckOptions(cache=CompileCache(Path({cache!r})), {how})
[result] = check_files([Path({path!r})], options, Environment(None, None, "no GPU"))
assert result.claims and result.input_error is None, result.input_error
print(sorted(name for name in ("pandas", "numpy") if name in sys.modules))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "how"),
    [
        (DATA / "static.yaml", "static_only=True"),
        (DATA / "sample.yaml", f"from_profile=Path({str(FIXTURES)!r})"),
    ],
    ids=["static", "replay"],
)
def test_a_check_imports_neither_pandas_nor_numpy(path, how, tmp_path):
    program = CHECK.format(cache=str(COMPILE_CACHE.folder), path=str(path), how=how)
    completed = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=checkout_environment(),
    )
    assert list(tmp_path.iterdir()) == [], "the check wrote nothing where it ran"
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


# --- the import graph -------------------------------------------------------------------------------------

PACKAGE = Path(ncuverify.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["ncuverify", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# Every module but the package's own __init__: Python runs it before any module of the package, and it
# imports the api only when `ncuverify.check` is first asked for, as the public face of the package.
MODULES = {
    _module_name(path): path for path in sorted(PACKAGE.rglob("*.py")) if path != PACKAGE / "__init__.py"
}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(name: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of the package that an import statement in module name loads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


def _imports(name: str) -> set[str]:
    """Every module of the package that a module imports: at its top and inside its functions alike,
    not in `if TYPE_CHECKING:` blocks (for types only, never run)."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(MODULES[name].read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                pending += child.orelse
            elif isinstance(child, ast.Import | ast.ImportFrom):
                found.update(m for m in _imported(name, child) if m in MODULES and m != name)
            else:
                pending.append(child)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _top(name: str) -> str:
    """The top-level package or module a module belongs to: ncuverify.spec.claims -> ncuverify.spec."""
    return ".".join(name.split(".")[:2])


def test_the_graph_reads_imports_at_the_top_and_inside_functions():
    assert "ncuverify.spec.arguments" in GRAPH["ncuverify.build.params"]  # imported inside a function
    assert "ncuverify.spec" not in GRAPH["ncuverify.build.artifacts_spec"]  # only under TYPE_CHECKING there
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others():
    assert _cycles(GRAPH) == []


def test_no_top_level_package_imports_itself_through_others():
    packages: dict[str, set[str]] = {}
    for name, imported in GRAPH.items():
        packages.setdefault(_top(name), set()).update(_top(m) for m in imported if _top(m) != _top(name))
    assert _cycles(packages) == []


def test_the_spec_imports_nothing_of_the_build():
    spec = {
        name: sorted(m for m in imported if _top(m) == "ncuverify.build") for name, imported in GRAPH.items()
    }
    assert {name: found for name, found in spec.items() if _top(name) == "ncuverify.spec" and found} == {}


def test_the_names_import_nothing_of_the_package():
    assert GRAPH["ncuverify.names"] == set()
