"""Per-component globs over the virtual tree.

Each path component is either a *literal* or a *glob*:

- ``*`` matches any run of characters (including none), ``?`` one character;
- ``[abc]``, ``[a-z]``, ``[!x]`` / ``[^x]`` are character classes (a ``]``
  right after the opening ``[`` or ``[!`` is a member; ``\\`` escapes inside);
- ``{a,b}`` is an alternation whose branches may hold globs and further
  braces (``{a*,b}``, ``{a,{b,c}}``); a ``,`` outside braces and a stray
  ``}`` are literal characters;
- ``\\x`` stands for the character ``x`` (a trailing lone ``\\`` is itself).

A component with no glob syntax is a literal: it is looked up directly with
``node.child(name)`` (escapes removed), so children that resolve but are not
listed are still found. A malformed glob (unterminated ``[`` or ``{``, a
reversed range) is treated as a literal, taken exactly as written.

Globs are matched against ``node.children()`` (sorted, per the node
protocol), so matches come out in sorted depth-first order.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator, NamedTuple

from metashell.fs import bulk, paths
from metashell.fs.node import Node

Pattern = re.Pattern


class Match(NamedTuple):
    """One node matched by a pattern."""

    path: str               # resolved absolute path text, e.g. "/alpha/beta"
    components: list[str]   # its components, e.g. ["alpha", "beta"]
    node: Node


class _Malformed(Exception):
    pass


class _Translator:
    """Glob text -> regular expression text; records whether any glob syntax
    was seen and the unescaped literal text."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.is_glob = False
        self.literal: list[str] = []   # unescaped text (meaningful only if not a glob)

    def translate(self) -> str:
        return self._sequence(0)   # at depth 0 this consumes the whole text

    def _sequence(self, depth: int) -> str:
        text, n = self.text, len(self.text)
        parts: list[str] = []
        while self.pos < n:
            c = text[self.pos]
            if c == "\\":
                if self.pos + 1 < n:
                    ch = text[self.pos + 1]
                    self.pos += 2
                else:
                    ch = "\\"
                    self.pos += 1
                parts.append(re.escape(ch))
                self.literal.append(ch)
            elif c == "*":
                self.is_glob = True
                parts.append(".*")
                self.pos += 1
            elif c == "?":
                self.is_glob = True
                parts.append(".")
                self.pos += 1
            elif c == "[":
                self.is_glob = True
                parts.append(self._char_class())
            elif c == "{":
                self.is_glob = True
                self.pos += 1
                branches = [self._sequence(depth + 1)]
                while self.pos < n and text[self.pos] == ",":
                    self.pos += 1
                    branches.append(self._sequence(depth + 1))
                if self.pos >= n or text[self.pos] != "}":
                    raise _Malformed(self.text)
                self.pos += 1
                parts.append("(?:" + "|".join(f"(?:{b})" for b in branches) + ")")
            elif depth > 0 and c in ",}":
                break
            else:
                parts.append(re.escape(c))
                self.literal.append(c)
                self.pos += 1
        return "".join(parts)

    def _class_char(self, j: int) -> "tuple[str, int]":
        text = self.text
        if text[j] == "\\" and j + 1 < len(text):
            return text[j + 1], j + 2
        return text[j], j + 1

    def _char_class(self) -> str:
        text, n = self.text, len(self.text)
        j = self.pos + 1
        negate = False
        if j < n and text[j] in "!^":
            negate = True
            j += 1
        items: list[str] = []
        first = True
        while True:
            if j >= n:
                raise _Malformed(self.text)
            if text[j] == "]" and not first:
                j += 1
                break
            first = False
            lo, j = self._class_char(j)
            if j + 1 < n and text[j] == "-" and text[j + 1] != "]":
                hi, j = self._class_char(j + 1)
                if hi < lo:
                    raise _Malformed(self.text)
                items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            else:
                items.append(re.escape(lo))
        self.pos = j
        return "[" + ("^" if negate else "") + "".join(items) + "]"


@lru_cache(maxsize=1024)
def _analyse(text: str) -> "tuple[Pattern | None, str]":
    """(compiled pattern or None, literal name to look up when None);
    remembered, as a command asks again for each of a glob's matches."""
    t = _Translator(text)
    try:
        regex = t.translate()
    except _Malformed:
        return None, text
    if not t.is_glob:
        return None, "".join(t.literal)
    try:
        return re.compile(regex, re.DOTALL), text
    except re.error:  # pragma: no cover - the translator only emits valid regexes
        return None, text


def compile_component(text: str) -> "Pattern | None":
    """The compiled pattern of one path component, or None if it is a
    literal (no glob syntax, or a malformed glob). Match with ``fullmatch``."""
    return _analyse(text)[0]


def is_glob(text: str) -> bool:
    """True if the component is a well-formed glob."""
    return compile_component(text) is not None


def literal_name(text: str) -> str:
    """The child name a literal component looks up: escapes removed; a
    malformed glob is taken exactly as written."""
    return _analyse(text)[1]


_ANY = ".*"   # the pattern of '*' (DOTALL): every name


def _steps(cwd: str, pattern: str) -> "list[tuple[Pattern | None, str]]":
    """Resolve *pattern* against *cwd* textually. Components that come from
    *cwd* are real names and always literal, even if they look like globs."""
    steps: list[tuple[Pattern | None, str]] = []
    if not pattern.startswith("/"):
        steps = [(None, name) for name in paths.normalize(paths.split(cwd))]
    for comp in paths.split(pattern):
        if comp == ".":
            continue
        if comp == "..":
            if steps:
                steps.pop()
            continue
        steps.append(_analyse(comp))
    return steps


def iter_expand(root: Node, cwd: str, pattern: str) -> Iterator[Match]:
    """Lazily yield the matches of *pattern* (see :func:`expand`), depth
    first, one iterator per level on a stack (no generator per node: cat
    of every partition's data passes a million matches through it)."""
    return _iter_steps(root, _steps(cwd, pattern))


def _iter_steps(root: Node, steps: list) -> Iterator[Match]:
    if not steps:
        yield Match(paths.to_text([]), [], root)
        return
    last = len(steps) - 1
    # a literal last name ('/topics/*/*/data') is looked up in place, no iterator per parent
    final = steps[last][1] if last and steps[last][0] is None else None
    stack = [(0, [], _candidates(root, steps[0]))]
    while stack:
        i, comps, candidates = stack[-1]
        for name, child in candidates:
            here = comps + [name]
            if i == last:
                yield Match(paths.to_text(here), here, child)
            elif final is not None and i + 1 == last:
                found = child.child(final)
                if found is not None:
                    here.append(final)
                    yield Match(paths.to_text(here), here, found)
            else:
                stack.append((i + 1, here, _candidates(child, steps[i + 1])))
                break
        else:
            stack.pop()


def iter_file_groups(root: Node, cwd: str, pattern: str) -> "Iterator[tuple[Match, str]] | None":
    """When *pattern* ends in ``*/NAME`` (a literal name: ``/topics/*/*/data``),
    ``(parent, NAME)`` for each match of the pattern without these two
    components: the pattern's matches are then, parent after parent, each
    listed child's ``NAME`` (:meth:`~metashell.fs.bulk.Bulk.file_texts` may make them all at
    once; :func:`matches_below` finds them as :func:`iter_expand` does).
    None for any other pattern."""
    steps = _steps(cwd, pattern)
    if len(steps) < 2 or steps[-1][0] is not None or steps[-2][0] is None \
            or steps[-2][0].pattern != _ANY:
        return None
    return ((parent, steps[-1][1]) for parent in _iter_steps(root, steps[:-2]))


def matches_below(parent: Match, name: str) -> Iterator[Match]:
    """The matches of ``*/name`` under ``parent`` (see :func:`iter_file_groups`)."""
    node = parent.node
    if not node.is_dir:
        return
    for child_name, child in bulk.entries(node):
        found = child.child(name)
        if found is not None:
            here = parent.components + [child_name, name]
            yield Match(paths.to_text(here), here, found)


def _candidates(node: Node, step: "tuple[Pattern | None, str]") -> Iterator[tuple[str, Node]]:
    """``(name, child)`` of the children of ``node`` that one step matches:
    a literal name looked up, ``*`` every child made at once (entries), any
    other glob its matching names."""
    regex, name = step
    if regex is None:
        child = node.child(name)
        if child is not None:
            yield name, child
        return
    if not node.is_dir:
        return
    if regex.pattern == _ANY:
        yield from bulk.entries(node)
        return
    for child_name in node.children():
        if regex.fullmatch(child_name):
            child = node.child(child_name)
            if child is not None:
                yield child_name, child


def expand(root: Node, cwd: str, pattern: str) -> list[Match]:
    """Every node matched by *pattern*, resolved against *cwd* (so
    ``../*/{beta,theta}`` works), in sorted depth-first order. Empty when
    nothing matches."""
    return list(iter_expand(root, cwd, pattern))
