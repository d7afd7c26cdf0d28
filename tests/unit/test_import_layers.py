"""The layout docs/architecture.md describes: no import cycle between the
project's modules (imports inside functions included), and each layer
imports only the layers below it:

    kraft (wire format) -> loader (sources) -> fast (shortcuts) -> replay -> queries
      -> render (text) -> fs (tree) -> commands -> shell (cli, repl)
    live (the Raft observer) beside fast; session (opening a source) below the shell;
    spark beside the shell

Every module belongs to a layer, so a new top-level module has to say where it sits.
Outside ``metashell/fast/`` a module imports of the fast path its one door alone
(``metashell/fast/door.py``), which hands out no shortcut.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from metashell.fast import door
from tests.support.paths import REPO

PACKAGE = REPO / "metashell"
# modules every layer may import: they import no layer
SHARED = {"metashell", "metashell.errors", "metashell.timefmt", "metashell.gcpause", "metashell.buildinfo"}
# a layer (a package, or a top-level module), and the layers it may import
MAY_IMPORT = {
    "metashell.kraft": set(),
    "metashell.loader": {"metashell.kraft"},
    "metashell.fast": {"metashell.kraft", "metashell.loader"},
    "metashell.live": {"metashell.kraft", "metashell.loader"},
    "metashell.replay": {"metashell.kraft", "metashell.loader", "metashell.fast"},
    "metashell.queries": {"metashell.kraft", "metashell.loader", "metashell.fast", "metashell.replay"},
    "metashell.render": set(),
    "metashell.fs": {"metashell.kraft", "metashell.fast", "metashell.replay", "metashell.queries",
                     "metashell.render"},
    "metashell.commands": {"metashell.kraft", "metashell.loader", "metashell.fast", "metashell.replay",
                           "metashell.queries", "metashell.render", "metashell.fs"},
    "metashell.session": {"metashell.kraft", "metashell.loader", "metashell.fast", "metashell.live",
                          "metashell.replay", "metashell.queries", "metashell.render", "metashell.fs"},
}
SHELL = {"metashell.commands", "metashell.session", "metashell.live", "metashell.render", "metashell.fs"}
MAY_IMPORT["metashell.repl"] = {"metashell.commands", "metashell.render"}
MAY_IMPORT["metashell.cli"] = SHELL | {"metashell.repl"}
MAY_IMPORT["metashell.spark"] = MAY_IMPORT["metashell.session"] | {"metashell.session"}
# imports against the flow still there: (module, the layer it may still import); none
# since the reader offers the fast path a plug-in point (its ``shortcuts``)
AGAINST_THE_FLOW: set = set()
# the fast path's one door: the only module of the package a module outside it imports. Its
# names come from modules that declare no record versions they read from bytes (``VERSIONS``)
FAST = "metashell.fast"
DOOR = "metashell.fast.door"


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
    """Module -> the project modules it imports."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports(path, modules) if m in modules and m != name}
            for name, path in modules.items()}


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


def layer(module: str) -> str | None:
    """The layer (or shared module) ``module`` belongs to."""
    for name in MAY_IMPORT.keys() | SHARED:
        if module == name or module.startswith(name + ".") and name != "metashell":
            return name
    return None


def test_every_module_belongs_to_a_layer():
    assert [m for m in graph() if layer(m) is None] == []


def test_each_layer_imports_only_those_below_it():
    bad = [(name, m) for name, deps in graph().items() for m in deps
           if layer(m) != layer(name) and layer(m) not in SHARED
           and layer(m) not in MAY_IMPORT.get(layer(name), ())
           and (name, layer(m)) not in AGAINST_THE_FLOW]
    assert bad == []


def test_shared_modules_import_no_layer():
    bad = [(name, m) for name, deps in graph().items() if layer(name) in SHARED
           for m in deps if layer(m) not in SHARED]
    assert bad == []


def test_the_layers_are_one_way():
    """No two layers may import each other, even through a third: the
    allowed imports themselves form no cycle."""
    def below(name, seen=()):
        return set().union(*({d} | below(d, seen + (name,)) for d in MAY_IMPORT.get(name, ())
                             if d not in seen))
    assert [name for name in MAY_IMPORT if name in below(name)] == []


def test_outside_the_fast_path_only_its_door_is_imported():
    bad = [(name, m) for name, deps in graph().items() if layer(name) != FAST
           for m in deps if layer(m) == FAST and m != DOOR]
    assert bad == []


def test_the_door_reads_no_bytes():
    """The door declares no record versions, and none of the modules it
    takes its names from does: it hands out no shortcut that reads records
    from their bytes (``VERSIONS``). Every name it offers is there."""
    modules = {module_name(p): p for p in (PACKAGE / "fast").glob("*.py")}
    shortcuts = {name for name, path in modules.items()
                 if re.search(r"^VERSIONS\b", path.read_text(), re.MULTILINE)}
    homes = {f"{FAST}.{module}" for module, _ in door.OFFERS.values()}
    assert shortcuts and homes <= modules.keys()
    assert DOOR not in shortcuts and homes.isdisjoint(shortcuts)
    assert all(getattr(door, name) is not None for name in door.OFFERS)


def test_the_door_imports_what_is_asked_of_it_alone():
    """Importing the door loads no module behind it, and a name asked of it
    its own module alone (and what that imports): a layer through the door
    pays the import cost it paid before."""
    probe = ("import sys, metashell.fast.door as door; before = set(sys.modules); "
             "from metashell.fast.door import RunTexts; "
             "print(sorted(m for m in before if m.startswith('metashell.fast'))); "
             "print(sorted(m for m in set(sys.modules) - before if m.startswith('metashell.fast')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=REPO).stdout.splitlines()
    assert out == [repr([FAST, DOOR]), repr(["metashell.fast.run_texts"])]
