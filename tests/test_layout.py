"""The layout docs/architecture.md describes: no import cycle between the
project's modules (imports inside functions included), and each layer
imports only the layers to its left:

    kraft (wire format) -> loader (sources) -> fast (shortcuts) -> replay -> fs -> commands
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "metashell"
# a layer, and the layers it must not import
FORBIDDEN = {
    "metashell.kraft": ("metashell.loader", "metashell.fast", "metashell.replay", "metashell.fs", "metashell.commands",
                        "metashell.session", "metashell.spark"),
    "metashell.loader": ("metashell.replay", "metashell.fs", "metashell.commands", "metashell.session",
                         "metashell.spark"),
    "metashell.fast": ("metashell.replay", "metashell.queries", "metashell.fs", "metashell.commands", "metashell.session",
                       "metashell.spark"),
    "metashell.replay": ("metashell.fs", "metashell.commands", "metashell.session", "metashell.spark"),
    "metashell.fs": ("metashell.commands", "metashell.spark"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, modules) -> set[str]:
    """The project modules ``path`` imports, anywhere in it (``from P import
    m`` of a module ``m`` imports ``P.m``, of a name defined in ``P``, ``P``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                         for a in node.names)
    return {m for m in found if m.startswith("metashell")}


def graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a package whose
    ``__init__`` imports all its modules by ``pkgutil``: each of them)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {name: {m for m in imports(path, modules) if m in modules and m != name}
             for name, path in modules.items()}
    for name, path in modules.items():
        if path.name == "__init__.py" and "pkgutil.iter_modules" in path.read_text():
            edges[name] |= {m for m in modules if m.rpartition(".")[0] == name}
    return edges


def test_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_each_layer_imports_only_those_to_its_left():
    bad = [(name, m) for name, deps in graph().items() for layer, banned in FORBIDDEN.items()
           if name == layer or name.startswith(layer + ".")
           for m in deps if any(m == b or m.startswith(b + ".") for b in banned)]
    assert bad == []
