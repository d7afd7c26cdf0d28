"""Path completion for the REPL.

The typed word is split at its last ``/``: the part before it (kept exactly
as typed) names a directory, walked component by component with
``node.child`` (no glob expansion; ``.`` and ``..`` resolved textually); the
part after it is a prefix of the names offered. Directory candidates end in
``/``. Names are returned raw; quoting is the REPL's business.
"""

from __future__ import annotations

from typing import NamedTuple

from metashell.fs import paths
from metashell.fs.node import Node, lookup


class Candidate(NamedTuple):
    text: str      # full replacement for the typed word
    is_dir: bool   # directories end in "/" and take no trailing space


def complete_path(root: Node, cwd: str, typed: str) -> list[Candidate]:
    """Completions of *typed* (a path being typed, relative to *cwd* unless
    absolute), in sorted child order. ``.`` and ``..`` being typed also
    offer ``./`` and ``../``."""
    cut = typed.rfind("/") + 1
    prefix, last = typed[:cut], typed[cut:]
    directory = lookup(root, paths.resolve(cwd, prefix))
    if directory is None or not directory.is_dir:
        return []
    out: list[Candidate] = []
    if last.startswith("."):
        for special in (".", ".."):
            if special.startswith(last):
                out.append(Candidate(prefix + special + "/", True))
    for name in directory.children():
        if not name.startswith(last):
            continue
        child = directory.child(name)
        if child is None:
            continue
        out.append(Candidate(prefix + name + ("/" if child.is_dir else ""), child.is_dir))
    return out
