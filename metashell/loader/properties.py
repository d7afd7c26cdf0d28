"""Java ``.properties`` text, read as ``Properties.load`` reads it: for
``meta.properties`` and the live client's ``-c`` file."""

from __future__ import annotations

import re


_PROP_WS = " \t\f"
_PROP_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str):
    """Java ``Properties.load`` logical lines (comments and blanks dropped),
    each with the 1-based number of the line it starts on."""
    lines = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_PROP_WS)
        i += 1
        start = i
        if not line or line[0] in "#!":
            continue
        parts = []
        while True:
            trailing = len(line) - len(line.rstrip("\\"))
            if trailing % 2 == 1:  # odd number of backslashes: continuation
                parts.append(line[:-1])
                if i >= len(lines):
                    break
                line = lines[i].lstrip(_PROP_WS)
                i += 1
                continue
            parts.append(line)
            break
        yield start, "".join(parts)


def _unescape(s: str) -> str:
    out = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            break
        c = s[i]
        if c == "u":
            code = s[i + 1:i + 5]
            if len(code) < 4 or any(ch not in "0123456789abcdefABCDEF" for ch in code):
                raise ValueError("malformed \\uxxxx escape")
            out.append(chr(int(code, 16)))
            i += 5
            continue
        out.append(_PROP_ESCAPES.get(c, c))
        i += 1
    return "".join(out)


def _split_property(line: str) -> tuple[str, str]:
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _PROP_WS:
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in _PROP_WS:
        j += 1
    if j < n and line[j] in "=:" :
        j += 1
        while j < n and line[j] in _PROP_WS:
            j += 1
    return _unescape(key), _unescape(line[j:])


class PropertiesError(ValueError):
    """A malformed line of a ``.properties`` text; ``line`` is its number."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def numbered_properties(text: str):
    """Yield ``(line number, key, value)`` for each property of Java
    ``.properties`` text (``#``/``!`` comments, ``=``/``:``/space separators,
    line continuations, backslash and ``\\uXXXX`` escapes); a malformed
    escape raises :class:`PropertiesError`."""
    for number, line in _logical_lines(text):
        try:
            key, value = _split_property(line)
        except ValueError as e:
            raise PropertiesError(number, str(e)) from None
        yield number, key, value


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text into a dict (the last value of a key wins)."""
    return {key: value for _number, key, value in numbered_properties(text)}
