"""Depth-first walks of the virtual tree, for ``find`` (and the tests' and
bench's reading of every node)."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, TypeVar

from metashell.fs.node import Node
from metashell.fs.paths import child_path

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
    (:meth:`Node.subtree_names`) is not walked node by node: what ``find``
    needs, paths and kinds only. One memo serves the whole walk (a topic's
    existing partitions found once for all its views)."""
    memo: dict = {}
    return _depth_first(node, path_text, _is_dir, lambda directory: directory.subtree_names(memo))


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
    stack = [(prefix, iter(node.entries()))]
    while stack:
        prefix, entries = stack[-1]
        for name, child in entries:
            text = prefix + name
            yield text, item(child)
            if child.is_dir:
                listed = whole(child)
                if listed is None:
                    stack.append((text + "/", iter(child.entries())))
                else:
                    text += "/"
                    for sub, it in listed:
                        yield text + sub, it
            break
        else:
            stack.pop()
