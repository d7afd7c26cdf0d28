"""Bulk answers: what a node may make at once for whole-tree commands.

The node protocol (:class:`~metashell.fs.node.Node`: ``children``,
``child``, ``value``, ``shown_value``, ``text``) is all any command needs.
But ``find /``, ``tree /topics``, ``cat '/topics/*/*/data'`` and ``ls``
of a big directory walk a million partitions, and made node by node each
partition costs a lookup, three nodes, a folded state and its JSON encoded
and re-indented. A node that can answer for its whole subtree (or all its
children) at once, cheaper, offers a :class:`Bulk` through
:meth:`Node.bulk`: a topic makes its partitions, their text or their names
from its runs' bytes without a node each. It is for speed only: every
answer equals, byte for byte, what the general walk of the node gives, and
None means "walk it" (the default of every call).

The functions below are the one place the commands, globs and walks ask for
it: each takes the node's bulk answer when it has one, else the general walk.
"""

from __future__ import annotations

from typing import Iterable


class Bulk:
    """What a node may offer whole-tree commands besides the node protocol
    (:meth:`Node.bulk` gives it, or None). Each call's answer equals what
    the general walk of the node gives; None (the default) asks for that
    walk."""

    def entries(self) -> "Iterable[tuple[str, object]] | None":
        """``(name, child)`` of every listed child that exists, in listing
        order (the general walk: ``children()`` then ``child(name)`` each,
        those that are None left out), made at once (a topic folds its
        partitions together; ``/image``'s directories make their mapping
        once, not once per child)."""
        return None

    def shown_text(self) -> "str | None":
        """A file's ``render.value_text(shown_value())`` made cheaper (a
        partition's ``data``: one format, no encoding and re-indenting):
        what ``cat`` prints of it in text mode."""
        return None

    def tree_json(self) -> "str | None":
        """The JSON text of the whole subtree, compact as ``render.json_text``
        writes it (a directory: an object of its children; a file: its
        value): what ``tree -o json`` writes of it (a topic: one document of
        its partitions, read from its runs' bytes)."""
        return None

    def tree_lines(self, indent: int) -> "Iterable[str] | None":
        """The text ``tree`` of the whole subtree (its children, ``indent``
        spaces in), as pieces of one or more whole lines (no final newline):
        what walking it prints (a topic: its partitions' lines without three
        nodes per partition)."""
        return None

    def file_texts(self, name: str) -> "Iterable[tuple[str, str]] | None":
        """``(child, text)`` for each listed child that has a file ``name``
        (what ``*/name`` matches here), in listing order, its text as
        ``cat`` shows it before any colour (:func:`shown_text`, else the
        value text of its shown value): ``cat``'s text output of
        ``.../*/name`` (a topic: its partitions' ``data``, read from their
        bytes)."""
        return None

    def subtree_names(self, memo: dict) -> "list[tuple[str, bool]] | None":
        """``(path below this node, is_dir)`` of everything below it, in the
        order a walk reaches it: what ``find`` lists (a topic: its
        partitions' names without a node each, none folded into a state).
        ``memo`` is shared by one walk: what one view of a thing found
        another view of it may reuse (a topic's existing partitions, as
        ``find /`` lists each topic under four paths)."""
        return None


def entries(node) -> "Iterable[tuple[str, object]]":
    """``(name, child)`` of every listed child of ``node`` that exists, in
    listing order: what walks and ``*`` globs read."""
    bulk = node.bulk()
    if bulk is not None:
        made = bulk.entries()
        if made is not None:
            return made
    return _walked_entries(node)


def _walked_entries(node):
    for name in node.children():
        child = node.child(name)
        if child is not None:
            yield name, child


def shown_text(node) -> "str | None":
    """:meth:`Bulk.shown_text` of ``node``, None when it has none (the
    caller writes its shown value)."""
    bulk = node.bulk()
    return None if bulk is None else bulk.shown_text()


def tree_json(node) -> "str | None":
    """:meth:`Bulk.tree_json` of ``node``, None when it is to be walked."""
    bulk = node.bulk()
    return None if bulk is None else bulk.tree_json()


def tree_lines(node, indent: int) -> "Iterable[str] | None":
    """:meth:`Bulk.tree_lines` of ``node``, None when it is to be walked."""
    bulk = node.bulk()
    return None if bulk is None else bulk.tree_lines(indent)


def file_texts(node, name: str) -> "Iterable[tuple[str, str]] | None":
    """:meth:`Bulk.file_texts` of ``node``, None when its children are to
    be looked up one by one."""
    bulk = node.bulk()
    return None if bulk is None else bulk.file_texts(name)


def subtree_names(node, memo: dict) -> "list[tuple[str, bool]] | None":
    """:meth:`Bulk.subtree_names` of ``node``, None when it is to be walked."""
    bulk = node.bulk()
    return None if bulk is None else bulk.subtree_names(memo)
