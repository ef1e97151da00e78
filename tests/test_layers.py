"""The house (DESIGN.md): the rooms of tracker/ import only down, no module imports another's
underscore names, and no import cycle exists anywhere in the project."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
from importlinter.application import use_cases
from importlinter.configuration import configure

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("domain", "projections", "tracker")


def test_the_rooms_import_only_down() -> None:
    configure()
    # The contracts are in pyproject.toml; a broken one is printed with the offending chain.
    assert use_cases.lint_imports(config_filename=str(ROOT / "pyproject.toml")) is True


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
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
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
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


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)
    # A package's __init__ that re-exports its own modules is not a cycle of the code's logic.
    for package in list(graph.modules):
        for child in graph.find_children(package):
            if graph.direct_import_exists(importer=package, imported=child):
                graph.remove_import(importer=package, imported=child)
    described = []
    for component in _cycles(graph):
        members = set(component)
        lines = []
        for importer in component:
            for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    lines.append(f"{importer}:{detail['line_number']} imports {imported}")
        described.append("; ".join(lines))
    assert described == []


def test_no_module_imports_another_modules_underscore_names() -> None:
    reach_ins = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            reach_ins.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{alias.name}")
    assert reach_ins == []
