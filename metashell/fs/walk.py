"""Depth-first walks of the virtual tree: ``find`` (and the tests' and
bench's reading of every node) and ``tree`` in text and JSON. A node's
:class:`~metashell.fs.bulk.Bulk` answers stand in for walking it where it
offers them."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, TypeVar

from metashell.fs import bulk
from metashell.fs.node import Node
from metashell.fs.paths import child_path
from metashell.render import json_text, value_text

Item = TypeVar("Item")


def walk(node: Node, path_text: str) -> Iterator[tuple[str, Node]]:
    """Yield ``(path_text, node)`` for *node* and everything below it,
    depth-first pre-order, children in sorted order. Child paths are built
    with :func:`child_path` from *path_text* as given (which may be a glob
    as typed). A child that is listed but whose ``child()`` is None is
    skipped. Lazy: nodes are made only as the walk reaches them."""
    return _depth_first(node, path_text, _itself, _never_whole)


def walk_names(node: Node, path_text: str) -> Iterator[tuple[str, bool]]:
    """``(path_text, is_dir)`` of what :func:`walk` yields, in its order,
    where a node that lists its whole subtree at once
    (:meth:`~metashell.fs.bulk.Bulk.subtree_names`) is not walked node by node: what ``find``
    needs, paths and kinds only. One memo serves the whole walk (a topic's
    existing partitions found once for all its views)."""
    memo: dict = {}
    return _depth_first(node, path_text, _is_dir,
                        lambda directory: bulk.subtree_names(directory, memo))


def _itself(node: Node) -> Node:
    return node


def _is_dir(node: Node) -> bool:
    return node.is_dir


def _never_whole(directory: Node) -> None:
    return None


def _depth_first(node: Node, path_text: str, item: Callable[[Node], Item],
                 whole: Callable[[Node], "Iterable[tuple[str, Item]] | None"]
                 ) -> Iterator[tuple[str, Item]]:
    """The one walk loop: ``(path, item(n))`` for *node* and every node below
    it, pre-order; a directory for which ``whole(directory)`` is not None
    is not walked: those ``(path below it, item)`` pairs are yielded instead."""
    yield path_text, item(node)
    if not node.is_dir:
        return
    prefix = child_path(path_text, "")
    listed = whole(node)
    if listed is not None:
        for sub, it in listed:
            yield prefix + sub, it
        return
    # per directory the prefix of its children's paths (child_path's, made once)
    entries_of = bulk.entries
    stack = [(prefix, iter(entries_of(node)))]
    while stack:
        prefix, entries = stack[-1]
        for name, child in entries:
            text = prefix + name
            yield text, item(child)
            if child.is_dir:
                listed = whole(child)
                if listed is None:
                    stack.append((text + "/", iter(entries_of(child))))
                else:
                    text += "/"
                    for sub, it in listed:
                        yield text + sub, it
            break
        else:
            stack.pop()


def tree_text_lines(node, indent: int = 0) -> Iterator[str]:
    """The text ``tree``: the start node's own name is not printed; each
    child prints as ``name:`` and its content follows two spaces deeper.
    A file's value prints as in ``cat``, every line indented. A file as the
    start node prints its value at ``indent``. Each piece is one line, or
    several joined by newlines where a node makes its subtree at once
    (:meth:`~metashell.fs.bulk.Bulk.tree_lines`)."""
    pad = " " * indent
    if not node.is_dir:
        text = node.text()
        if text is not None:
            yield pad + text       # Kafka's printer indents the first line only
            return
        text = value_text(node.shown_value())
        for line in text.split("\n"):
            yield pad + line
        return
    whole = bulk.tree_lines(node, indent)
    if whole is not None:
        yield from whole
        return
    for name, child in bulk.entries(node):
        yield f"{pad}{name}:"
        yield from tree_text_lines(child, indent + 2)


def write_tree_json(node, write: Callable[[str], Any]) -> None:
    """Stream the JSON ``tree`` of ``node`` (a directory is an object of its
    children, a file is its value) to ``write``, without building the whole
    document in memory."""
    buf: list[str] = []
    size = 0

    def emit(text: str) -> None:
        nonlocal size
        buf.append(text)
        size += len(text)
        if size >= 65536:
            flush()

    def flush() -> None:
        nonlocal size
        if buf:
            write("".join(buf))
            buf.clear()
            size = 0

    def visit(n) -> None:
        if not n.is_dir:
            emit(json_text(n.value()))
            return
        whole = bulk.tree_json(n)
        if whole is not None:
            emit(whole)
            return
        emit("{")
        first = True
        for name, child in bulk.entries(n):
            if not first:
                emit(",")
            first = False
            emit(json_text(name))
            emit(":")
            visit(child)
        emit("}")

    visit(node)
    flush()
