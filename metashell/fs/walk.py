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
