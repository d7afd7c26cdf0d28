"""Depth-first walks of the virtual tree, for ``find`` and ``tree``."""

from __future__ import annotations

from typing import Iterator

from metashell.fs.node import Node
from metashell.fs.paths import child_path


def walk(node: Node, path_text: str) -> Iterator[tuple[str, Node]]:
    """Yield ``(path_text, node)`` for *node* and everything below it,
    depth-first pre-order, children in sorted order. Child paths are built
    with :func:`child_path` from *path_text* as given (which may be a glob
    as typed). A child that is listed but whose ``child()`` is None is
    skipped. Lazy: nodes are made only as the walk reaches them."""
    yield path_text, node
    if not node.is_dir:
        return
    # per directory the prefix of its children's paths (child_path's, made once)
    stack = [(child_path(path_text, ""), iter(node.entries()))]
    while stack:
        prefix, entries = stack[-1]
        for name, child in entries:
            text = prefix + name
            yield text, child
            if child.is_dir:
                stack.append((text + "/", iter(child.entries())))
            break
        else:
            stack.pop()


def walk_names(node: Node, path_text: str) -> Iterator[tuple[str, bool]]:
    """``(path_text, is_dir)`` of what :func:`walk` yields, in its order,
    where a node that lists its whole subtree at once
    (:meth:`Node.subtree_names`) is not walked node by node: what ``find``
    needs, paths and kinds only. One memo serves the whole walk (a topic's
    existing partitions found once for all its views)."""
    memo: dict = {}
    yield path_text, node.is_dir
    if not node.is_dir:
        return
    below = node.subtree_names(memo)
    if below is not None:
        prefix = child_path(path_text, "")
        for sub, is_dir in below:
            yield prefix + sub, is_dir
        return
    stack = [(child_path(path_text, ""), iter(node.entries()))]
    while stack:
        prefix, entries = stack[-1]
        for name, child in entries:
            text = prefix + name
            if not child.is_dir:
                yield text, False
                break
            yield text, True
            below = child.subtree_names(memo)
            if below is None:
                stack.append((text + "/", iter(child.entries())))
            else:
                text += "/"
                for sub, is_dir in below:
                    yield text + sub, is_dir
            break
        else:
            stack.pop()
