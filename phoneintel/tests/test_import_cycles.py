"""No two files import each other, directly or around a loop (STYLE.md: "When two modules
import each other, one of them holds something that belongs to a third").

Every non-test .py file of the repository and of the Python client is read as an AST; an
import anywhere in a file (at the top, inside a function, under TYPE_CHECKING) is an edge
to the file it names. A loop is a strongly connected group of two or more files.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = (ROOT / "clients/python/src", ROOT)  # the client's package first: it is deeper
SKIPPED = {".venv", "node_modules", ".git", "tests", "test-output", ".dev-services"}


def _module_name(path: Path) -> str:
    for root in SOURCE_ROOTS:
        if path.is_relative_to(root):
            parts = list(path.relative_to(root).with_suffix("").parts)
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise AssertionError(path)


def _source_files() -> dict[str, Path]:
    files = {}
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT).parts
        if SKIPPED.isdisjoint(relative) and path.name != "conftest.py":
            files[_module_name(path)] = path
    return files


def _imports(module: str, path: Path) -> set[str]:
    """The dotted names the file imports, `from a import b` as both `a.b` and `a`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    files = _source_files()

    def file_of(name: str) -> str | None:
        parts = name.split(".")
        while parts and ".".join(parts) not in files:
            parts.pop()
        return ".".join(parts) or None

    graph = {}
    for module, path in files.items():
        targets = {file_of(name) for name in _imports(module, path)}
        graph[module] = {target for target in targets if target and target != module}
    return graph


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one file (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def test_no_file_imports_itself_around_a_loop():
    graph = import_graph()
    assert "phoneintel_client.bulk" in graph and "accounts.selectors.key_read" in graph
    found = {
        " <-> ".join(group): [f"{a} -> {b}" for a in group for b in sorted(graph[a] & set(group))]
        for group in loops(graph)
    }
    assert found == {}


def test_the_loop_finder_finds_a_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert loops(graph) == [["a", "b", "c"]]
    assert loops({**graph, "c": set()}) == []
