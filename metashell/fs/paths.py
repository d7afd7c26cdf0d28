"""Textual path handling for the virtual tree.

Paths are plain text; nothing here looks at nodes. ``.`` and ``..`` are
resolved purely textually (``..`` at the root stays at the root), repeated
slashes collapse, and a name such as ``.keep`` is an ordinary name.
"""

from __future__ import annotations

import re
from typing import Iterable

_PLAIN_ID = re.compile(r"0|[1-9][0-9]*")   # ASCII digits only, no sign, no leading zero


def plain_id(name: str) -> "int | None":
    """The broker, controller or partition id a path component names, or
    None: ids are plain decimals as ``ls`` lists them, so ``03``, ``+3``,
    `` 3`` and a full-width ``３`` (which ``int()`` would all take) name no
    id, and one entity has one path."""
    return int(name) if _PLAIN_ID.fullmatch(name) else None


def split(path: str) -> list[str]:
    """Components of *path*: split on ``/``, empty components dropped,
    so ``//a///b/`` gives ``["a", "b"]``."""
    return [c for c in path.split("/") if c]


def normalize(components: Iterable[str], base: "list[str] | None" = None) -> list[str]:
    """Apply *components* to *base* (default: the root), resolving ``.``
    and ``..`` textually."""
    out = list(base) if base is not None else []
    for comp in components:
        if comp == ".":
            continue
        if comp == "..":
            if out:
                out.pop()
            continue
        out.append(comp)
    return out


def resolve(cwd: str, path: str) -> list[str]:
    """The absolute components of *path*: absolute if it starts with ``/``,
    else relative to *cwd*. ``.`` and ``..`` are resolved textually."""
    base = [] if path.startswith("/") else normalize(split(cwd))
    return normalize(split(path), base)


def to_text(components: Iterable[str]) -> str:
    """``"/" + "/".join(components)``; the root is ``/``."""
    return "/" + "/".join(components)


def child_path(parent_text: str, name: str) -> str:
    """The path text of child *name* under *parent_text*: ``/name`` under
    the root, ``parent/name`` otherwise (a trailing ``/`` on the parent is
    not doubled)."""
    if parent_text.endswith("/"):
        return parent_text + name
    return parent_text + "/" + name
