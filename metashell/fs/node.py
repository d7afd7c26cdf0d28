"""The node protocol of the virtual tree, and small generic nodes.

The tree is a *view*: nodes are made on demand from the image when someone
looks (``child`` / ``children``), so listing ``/topics`` never builds a node
per partition. Image-specific nodes live in ``tree.py``; the generic ones
here serve tests, ``/local`` and any fixed directory.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..gcpause import kept_old
from .bulk import Bulk

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

    def shown_value(self) -> Any:
        """The value as text output shows it (``cat``, ``tree``, ``diff``):
        :meth:`value`, but where a file reads better otherwise (codes Kafka
        prints by name, a partition's ``leaderRecoveryState``: ``RECOVERED``;
        a delegation token's times as ISO-8601); ``-o json`` keeps the value."""
        return self.value()

    def bulk(self) -> "Bulk | None":
        """What this node can make at once for whole-tree commands, faster
        than walking it (:class:`~metashell.fs.bulk.Bulk`: a topic's
        partitions from its runs' bytes), or None (the default): for speed
        only, every answer equals the general walk's."""
        return None

    def last_change(self) -> "tuple[int, int] | None":
        """(offset, timestamp ms) of the record that last changed this node."""
        return None

    def text(self) -> "str | None":
        """A file's text when text output is not its value's usual rendering
        (Kafka's own strings under ``/image``); None otherwise."""
        return None

    def attention(self) -> bool:
        """Whether the node is in a state a reader should notice at a glance
        (a fenced broker): ``ls`` colours its name."""
        return False

    def note(self) -> "str | None":
        """A remark ``ls -l`` shows beside the name: why a value is null, or
        what a directory stands for (a broker's start)."""
        return None

    def note_fields(self) -> "dict | None":
        """The remark as fields, for ``ls -l -o json`` (a broker's
        ``registeredAt``, ``registeredAtOffset`` and ``why`` a value is
        null); None when the remark is text only, or there is none."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class Leaf(Node, Bulk):
    """A file whose value is computed on demand (or given); given
    ``shown_text``, its text output is made cheaper (its :class:`Bulk`)."""

    def __init__(self, name: str, value: Any = None, *, compute: Callable[[], Any] | None = None,
                 change: "tuple[int, int] | None" = None, note: "Note" = None,
                 fields: "Callable[[], dict | None] | None" = None,
                 shown: "Callable[[Any], Any] | None" = None,
                 shown_text: "Callable[[], str | None] | None" = None):
        super().__init__(name)
        self._value = value
        self._compute = compute
        self._change = change
        self._note = note
        self._fields = fields
        self._shown = shown     # value -> what text output shows (shown_value)
        self._shown_text = shown_text   # () -> value_text of shown_value, or None

    def value(self) -> Any:
        return self._compute() if self._compute is not None else self._value

    def shown_value(self) -> Any:
        value = self.value()
        return value if self._shown is None else self._shown(value)

    def bulk(self):
        return None if self._shown_text is None else self

    def shown_text(self):
        return self._shown_text()

    def last_change(self):
        return self._change

    def note(self):
        return _note(self._note)

    def note_fields(self):
        return self._fields() if self._fields is not None else None


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
    """A directory over a mapping of name -> Node, or name -> factory() -> Node.
    ``aliases`` are more children of the same kind that a path reaches but no
    listing shows (Kafka 2.8-3.4's names of what the tree names otherwise)."""

    is_dir = True

    def __init__(self, name: str, entries: "dict[str, Any] | None" = None,
                 change: "tuple[int, int] | None" = None, note: "Note" = None,
                 fields: "Callable[[], dict | None] | None" = None, attention: bool = False,
                 aliases: "dict[str, Any] | None" = None):
        super().__init__(name)
        self._entries = entries if entries is not None else {}
        self._change = change
        self._note = note
        self._fields = fields
        self._attention = attention
        self._aliases = aliases

    def attention(self) -> bool:
        return self._attention

    def children(self) -> list[str]:
        return sort_names(self._entries)

    def child(self, name: str) -> "Node | None":
        entry = self._entries.get(name)
        if entry is None and self._aliases:
            entry = self._aliases.get(name)
        if entry is None:
            return None
        return entry() if callable(entry) and not isinstance(entry, Node) else entry

    def last_change(self):
        return self._change

    def note(self):
        return _note(self._note)

    def note_fields(self):
        return self._fields() if self._fields is not None else None


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
