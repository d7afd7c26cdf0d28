"""The virtual tree walked by the node protocol alone (``children()``,
``child(name)``, ``value()``, ``shown_value()``, ``text()``), never a node's
bulk answers (``Node.bulk()``): what those answers must equal."""

from __future__ import annotations

from metashell.render import value_text


def walked_entries(node) -> list:
    """``(name, child)`` of each listed child that exists."""
    return [(name, child) for name in node.children()
            if (child := node.child(name)) is not None]


def walked_text(node, indent: int = 0) -> list:
    """``tree``'s text lines of ``node``."""
    pad = " " * indent
    if not node.is_dir:
        text = node.text()
        if text is not None:
            return [pad + text]
        return [pad + line for line in value_text(node.shown_value()).split("\n")]
    out = []
    for name, child in walked_entries(node):
        out.append(f"{pad}{name}:")
        out += walked_text(child, indent + 2)
    return out


def walked_names(node, prefix: str = "") -> list:
    """``(path below node, is_dir)`` of everything below it, in walk order."""
    out = []
    for name, child in walked_entries(node):
        out.append((prefix + name, child.is_dir))
        if child.is_dir:
            out += walked_names(child, prefix + name + "/")
    return out
