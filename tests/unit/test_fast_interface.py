"""The fast path's interface (metashell/fast/interface.py) is what its
offered classes keep and all that the layers above use of them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from metashell.fast import door, interface
from metashell.fast.pending import PendingChanges
from metashell.replay.engine import ReplayEngine
from metashell.replay.partition_model import RUN_TEXTS

PACKAGE = Path(door.__file__).resolve().parents[1]

# protocol -> the class of the fast path that keeps it
KEPT_BY = {
    interface.Store: door.RecordStore,
    interface.StoreRefs: door.Refs,
    interface.Entries: door.EntryReplay,
    interface.Filer: door.ChangeFiler,
    interface.Counts: door.TopicCounts,
    interface.RunTextMaker: door.RunTexts,
    interface.PendingChangesSide: PendingChanges,
}
# names of a kept class's own members that are also everyday Python methods
# (``list.count``): their use outside the package cannot be told apart by name
EVERYDAY = {"count"}


def _methods(protocol) -> dict:
    return {name: value for name, value in vars(protocol).items()
            if not name.startswith("_") or name == "__call__"
            if callable(value) or isinstance(value, staticmethod)}


def _parameters(function) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("protocol", list(KEPT_BY), ids=lambda p: p.__name__)
def test_each_offered_class_keeps_its_protocols_methods_as_declared(protocol):
    kept_by = KEPT_BY[protocol]
    methods = _methods(protocol)
    assert methods, f"{protocol.__name__} declares nothing"
    for name, declared in methods.items():
        assert hasattr(kept_by, name), f"{kept_by.__name__} has no {name}"
        declared = inspect.getattr_static(protocol, name)
        real = inspect.getattr_static(kept_by, name)
        assert isinstance(declared, staticmethod) == isinstance(real, staticmethod), name
        assert _parameters(getattr(protocol, name)) == _parameters(getattr(kept_by, name)), \
            f"{kept_by.__name__}.{name} differs from {protocol.__name__}.{name}"


def test_each_offered_object_has_its_protocols_attributes():
    engine = ReplayEngine()
    try:
        objects = {interface.Store: engine.store, interface.StoreRefs: engine.refs,
                   interface.Entries: engine.entries, interface.Filer: engine.filer,
                   interface.Counts: engine.counts, interface.RunTextMaker: RUN_TEXTS,
                   interface.PendingChangesSide: engine.filer.changes}
        for protocol, obj in objects.items():
            assert isinstance(obj, KEPT_BY[protocol])
            for name, kind in protocol.__annotations__.items():
                assert hasattr(obj, name), f"{type(obj).__name__} has no {name} ({kind})"
    finally:
        engine.close()


def test_outside_the_fast_path_no_other_member_of_an_offered_class_is_used():
    declared = set()
    for protocol in KEPT_BY:
        declared |= set(_methods(protocol)) | set(protocol.__annotations__)
    own = set()
    for kept_by in KEPT_BY.values():
        own |= {name for name in dir(kept_by) if not name.startswith("_")}
    undeclared = own - declared - EVERYDAY
    assert undeclared, "every member is declared: this check would check nothing"
    used = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "fast" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in undeclared:
                used.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} .{node.attr}")
    assert used == [], ("members of the fast path's classes not in fast/interface.py: "
                        "declare them there or keep them inside the package")
