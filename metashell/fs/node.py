"""The node protocol of the virtual tree, and small generic nodes.

The tree is a *view*: nodes are made on demand from the image when someone
looks (``child`` / ``children``), so listing ``/topics`` never builds a node
per partition. Image-specific nodes live in ``tree.py``; the generic ones
here serve tests, ``/local`` and any fixed directory.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..gcpause import kept_old

#: a node's ``ls -l`` remark: text, or a function giving it when asked (so that
#: a remark that costs a lookup is made only when ``ls -l`` shows it)
Note = "str | Callable[[], str | None] | None"


def _note(note) -> "str | None":
    return note() if callable(note) else note


def sort_names(names: Iterable[str]) -> list[str]:
    """Numeric order when every name is an integer (partitions, broker ids),
    lexical order otherwise."""
    names = list(names)
    try:
        return kept_old(sorted(names, key=int))
    except ValueError:
        return kept_old(sorted(names))


class Node:
    """Base of every tree node. Subclasses override what applies."""

    is_dir = False

    def __init__(self, name: str):
        self.name = name

    def children(self) -> list[str]:
        return []

    def child(self, name: str) -> "Node | None":
        return None

    def value(self) -> Any:
        return None

    def last_change(self) -> "tuple[int, int] | None":
        """(offset, timestamp ms) of the record that last changed this node."""
        return None

    def text(self) -> "str | None":
        """A file's text when text output is not its value's usual rendering
        (Kafka's own strings under ``/image``); None otherwise."""
        return None

    def note(self) -> "str | None":
        """A remark ``ls -l`` shows beside the name: why a value is null, or
        what a directory stands for (a broker's start)."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class Leaf(Node):
    """A file whose value is computed on demand (or given)."""

    def __init__(self, name: str, value: Any = None, *, compute: Callable[[], Any] | None = None,
                 change: "tuple[int, int] | None" = None, note: "Note" = None):
        super().__init__(name)
        self._value = value
        self._compute = compute
        self._change = change
        self._note = note

    def value(self) -> Any:
        return self._compute() if self._compute is not None else self._value

    def last_change(self):
        return self._change

    def note(self):
        return _note(self._note)


class TextLeaf(Leaf):
    """A file whose text output is its own text (Kafka's string for it),
    beside a structured value for ``-o json``."""

    def __init__(self, name: str, value: Any = None, *, text: "Callable[[], str] | str",
                 compute: Callable[[], Any] | None = None,
                 change: "tuple[int, int] | None" = None):
        super().__init__(name, value, compute=compute, change=change)
        self._text = text

    def text(self) -> str:
        return self._text() if callable(self._text) else self._text


class DictDir(Node):
    """A directory over a mapping of name -> Node, or name -> factory() -> Node."""

    is_dir = True

    def __init__(self, name: str, entries: "dict[str, Any] | None" = None,
                 change: "tuple[int, int] | None" = None, note: "Note" = None):
        super().__init__(name)
        self._entries = entries if entries is not None else {}
        self._change = change
        self._note = note

    def children(self) -> list[str]:
        return sort_names(self._entries)

    def child(self, name: str) -> "Node | None":
        entry = self._entries.get(name)
        if entry is None:
            return None
        return entry() if callable(entry) and not isinstance(entry, Node) else entry

    def last_change(self):
        return self._change

    def note(self):
        return _note(self._note)


def lookup(root: Node, components: Iterable[str]) -> "Node | None":
    """The node at ``components`` (a path from ``root``), or None."""
    node: "Node | None" = root
    for name in components:
        node = node.child(name)
        if node is None:
            return None
    return node


def from_json(name: str, value: Any) -> Node:
    """A tree of DictDir/Leaf from nested dicts (dicts become directories).
    Handy for tests and fixed parts of the tree."""
    if isinstance(value, dict):
        return DictDir(name, {k: from_json(k, v) for k, v in value.items()})
    return Leaf(name, value)
