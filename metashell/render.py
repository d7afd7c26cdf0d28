"""Text and JSON rendering shared by the commands.

Nothing here knows about commands or the shell: values in, text out.

* ``value_text``: how a file's value prints in text mode (scalars plainly,
  objects and arrays as indented JSON).
* ``json_line``: the compact, stable JSON of ``--output json``.
* ``column_schema`` / ``column_lines``: ``ls`` in columns, Kafka's
  column-major layout (``LsCommandHandler.calculateColumnSchema``).
* ``table_lines``: aligned columns for ``ls -l`` and ``changes``.
* ``iso_time``: ISO-8601 UTC with milliseconds.
* ``summary_lines``: ``summary`` in text.
* ``style`` / ``highlight_json``: colour via rich, only when asked.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Sequence

from . import timefmt

# orjson: 5-7x faster than the json module (log, tree, cat); the json module
# still writes what orjson refuses (an int past 64 bits)
from orjson import OPT_INDENT_2 as _INDENT_2
from orjson import OPT_NON_STR_KEYS as _NON_STR_KEYS
from orjson import dumps as _orjson_dumps

# --------------------------------------------------------------------------- values

def _json_default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray)):
        return obj.hex()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def scalar_text(value: Any) -> str:
    """A scalar as text: strings as they are, JSON spelling for the rest,
    integral floats without an exponent (``1e+20`` prints as
    ``100000000000000000000.0``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e300:
            return f"{value:.1f}"
        return repr(value)
    return str(value)


def value_text(value: Any) -> str:
    """A file's value as ``cat`` prints it in text mode (no trailing newline):
    objects and arrays indented by two spaces as ``json.dumps(indent=2)``
    writes them, but for a short array of numbers, which stays on one line
    (``"replicas": [1, 2, 3]``: a partition reads in 13 lines, not 25).
    Written here, a few C calls per line (the json module indents with its
    pure-Python encoder: 60 us for a partition's data)."""
    if isinstance(value, (dict, list, tuple)):
        try:
            text = _orjson_dumps(value, default=_json_default,
                                 option=_NON_STR_KEYS | _INDENT_2).decode()
        except TypeError:
            pass
        else:   # its arrays of numbers, one per line, joined on one line
            return _NUMBER_LINES.sub(_one_line, text)
        flat = _flat_object_text(value)
        return flat if flat is not None else _indented(value, "")
    return scalar_text(value)


# an array of 1 to SHORT_ARRAY numbers as an indenting encoder writes it, one per
# line (a newline is never raw inside a JSON string, so this matches nothing else)
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUMBER_LINES = re.compile(r"\[\n *(" + _NUMBER + r"(?:,\n *" + _NUMBER + r"){0,15})\n *\]")
_ITEM_BREAK = re.compile(r",\n *")


def _one_line(m: "re.Match") -> str:
    return "[" + _ITEM_BREAK.sub(", ", m.group(1)) + "]"


#: arrays of at most this many numbers print on one line in text mode
SHORT_ARRAY = 16
_encode_str = json.encoder.encode_basestring   # a JSON string, non-ASCII as is (C)
_LITERALS = {True: "true", False: "false", None: "null"}
_NUMBERS = ({int}, {float}, {int, float})


def _scalar_json(v: Any) -> "str | None":
    t = type(v)
    if t is int:
        return str(v)
    if t is str:
        return _encode_str(v)
    if t is bool or v is None:
        return _LITERALS[v]
    return None   # floats and the rest: the json module spells them


def _short_numbers(v: list) -> "str | None":
    """``[1, 2, 3]`` for a short array of numbers, else None."""
    if len(v) > SHORT_ARRAY or set(map(type, v)) not in _NUMBERS:
        return None
    return "[" + ", ".join(map(_COMPACT, v)) + "]"


def _flat_object_text(value: Any) -> "str | None":
    """:func:`value_text` of a dict whose values are ints, strings,
    booleans, null or arrays of ints or of strings, in a few C calls per
    line; None for any other value."""
    if type(value) is not dict:
        return None
    parts = []
    for key, v in value.items():
        if type(key) is not str:
            return None
        if type(v) is list:
            if not v:
                text = "[]"
            else:
                kinds = set(map(type, v))
                if kinds == {int}:
                    if len(v) <= SHORT_ARRAY:
                        text = "[" + ", ".join(map(str, v)) + "]"
                    else:
                        text = "[\n    " + ",\n    ".join(map(str, v)) + "\n  ]"
                elif kinds == {str}:
                    text = "[\n    " + ",\n    ".join(map(_encode_str, v)) + "\n  ]"
                else:
                    return None
        else:
            text = _scalar_json(v)
            if text is None:
                return None
        parts.append(_encode_str(key) + ": " + text)
    return "{\n  " + ",\n  ".join(parts) + "\n}" if parts else "{}"


def _indented(v: Any, pad: str) -> str:
    """:func:`value_text` of any value, at indentation ``pad``."""
    inner = pad + "  "
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "{\n" + ",\n".join(f"{inner}{_encode_str(str(k))}: {_indented(x, inner)}"
                                   for k, x in v.items()) + f"\n{pad}}}"
    if isinstance(v, (list, tuple, set, frozenset)):
        v = list(v)
        if not v:
            return "[]"
        short = _short_numbers(v)
        if short is not None:
            return short
        return "[\n" + ",\n".join(inner + _indented(x, inner) for x in v) + f"\n{pad}]"
    text = _scalar_json(v)
    return text if text is not None else _COMPACT(v)


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False,
                            default=_json_default).encode


def json_text(value: Any) -> str:
    """Compact JSON, one line: what every ``--output json`` document uses.
    orjson writes it (the json module's text but for the spelling of huge
    or tiny floats, ``1e+20`` there ``1e20``, and NaN as null); an int past
    64 bits goes to the json module."""
    try:
        return _orjson_dumps(value, default=_json_default, option=_NON_STR_KEYS).decode()
    except TypeError:
        return _COMPACT(value)


def json_lines(values: list) -> str:
    """:func:`json_text` of each of ``values``, each ending in a newline, made
    at once (``log`` writes a million: one decode per batch, not per line)."""
    try:
        return b"\n".join([_orjson_dumps(v, default=_json_default, option=_NON_STR_KEYS)
                            for v in values]).decode() + "\n"
    except TypeError:
        return "".join([json_text(v) + "\n" for v in values])


def iso_time(ms: "int | None") -> str:
    """``2024-05-10T20:06:51.486Z`` for a timestamp in ms since the epoch;
    ``-`` for ``None``."""
    return timefmt.iso_time(ms) or "-"


def parse_time(text: str) -> int:
    """Epoch ms from ISO-8601 (``2024-05-10T20:06:51Z``, a date, an offset;
    naive times are UTC) or from an integer number of ms. Raises
    ``ValueError`` with a one-line reason."""
    s = text.strip()
    if s.lstrip("-").isdigit():
        return int(s)
    if not s:
        raise ValueError("empty time")
    iso = s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s
    try:
        t = datetime.fromisoformat(iso)
    except ValueError:
        raise ValueError(f"{text!r} is neither ISO-8601 (2024-05-10T20:06:51Z) "
                         f"nor epoch milliseconds") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    delta = t - timefmt.EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


# --------------------------------------------------------------------------- ls columns

@dataclass
class ColumnSchema:
    """A candidate layout: ``num_columns`` columns of ``entries_per_column``
    entries, filled column-major; ``widths`` are the longest entry + 2."""

    num_columns: int
    entries_per_column: int
    widths: list[int] = field(default_factory=list)

    def __post_init__(self):
        if not self.widths:
            self.widths = [0] * self.num_columns

    def process(self, index: int, entry: str) -> None:
        column = index // self.entries_per_column if self.entries_per_column else 0
        if column < self.num_columns:
            self.widths[column] = max(self.widths[column], len(entry) + 2)

    def total_width(self) -> int:
        return sum(self.widths)


def column_schema(width: "int | None", entries: Sequence[str]) -> ColumnSchema:
    """Kafka's layout choice: with no terminal width, one column; otherwise
    try up to ``width // 4`` columns and keep the largest count whose last
    column is non-empty and whose total width fits; else one column.
    (Same answers as Kafka's per-entry loop, computed per column slice so a
    directory of a million names stays quick.)"""
    n = len(entries)
    if width is None:
        return ColumnSchema(1, n)
    max_columns = width // 4
    if max_columns <= 1:
        return ColumnSchema(1, n)
    lengths = [len(e) for e in entries]
    longest = max(lengths, default=0)
    for columns in range(max_columns, 1, -1):
        per_column = (n + columns - 1) // columns
        if per_column == 0 or (columns - 1) * per_column >= n:
            continue                       # the last column would be empty
        if columns * 2 + longest > width:
            continue                       # cannot fit: one column holds the longest
        widths = [max(lengths[k * per_column:(k + 1) * per_column]) + 2
                  for k in range(columns)]
        if sum(widths) <= width:
            return ColumnSchema(columns, per_column, widths)
    return ColumnSchema(1, n, [longest + 2 if n else 0])


def column_lines(entries: Sequence[str], width: "int | None",
                 decorate: "Callable[[int, str], str] | None" = None) -> list[str]:
    """``entries`` laid out in columns (column-major), one string per line.
    Every column but the last is padded with spaces to its width (so a
    line may end in spaces, as Kafka's does). ``decorate(index, text)``
    may wrap an entry in colour codes; padding is computed on the plain text."""
    if not entries:
        return []
    schema = column_schema(width, entries)
    per_column = max(schema.entries_per_column, 1)
    num_lines = (len(entries) + schema.num_columns - 1) // schema.num_columns
    lines = []
    for line in range(num_lines):
        parts = []
        for column in range(schema.num_columns):
            index = line + column * per_column
            if index >= len(entries):
                continue
            entry = entries[index]
            parts.append(decorate(index, entry) if decorate else entry)
            if column < schema.num_columns - 1:
                parts.append(" " * (schema.widths[column] - len(entry)))
        lines.append("".join(parts))
    return lines


def table_lines(rows: Sequence[Sequence[str]], right: Iterable[int] = (),
                last_free: bool = True) -> list[str]:
    """Rows of cells as aligned lines, two spaces between columns. Columns
    whose index is in ``right`` are right-aligned; the last column is not
    padded when ``last_free``."""
    if not rows:
        return []
    right = set(right)
    ncols = max(len(r) for r in rows)
    widths = [0] * ncols
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            if last_free and i == len(row) - 1:
                cells.append(cell.rjust(widths[i]) if i in right else cell)
            elif i in right:
                cells.append(cell.rjust(widths[i]))
            else:
                cells.append(cell.ljust(widths[i]))
        lines.append("  ".join(cells))
    return lines


# --------------------------------------------------------------------------- summary

def _summary_scalar(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        if not value:
            return "-"
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            return ", ".join(scalar_text(v) for v in value)
        return json_text(value)
    if value is None:
        return "-"
    return scalar_text(value)


def summary_lines(data: dict, indent: int = 0) -> list[str]:
    """A summary dict as aligned ``key: value`` lines; a nested dict becomes
    a small section (``key:`` then its own aligned lines two spaces deeper);
    an empty one prints ``key: -``."""
    pad = " " * indent
    keys = [k for k, v in data.items() if not (isinstance(v, dict) and v)]
    width = max((len(str(k)) for k in keys), default=0) + 1
    lines = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            lines.append(f"{pad}{key}:")
            lines.extend(summary_lines(value, indent + 2))
        elif isinstance(value, dict):
            lines.append(f"{pad}{(str(key) + ':').ljust(width)} -")
        else:
            lines.append(f"{pad}{(str(key) + ':').ljust(width)} {_summary_scalar(value)}")
    return lines


# --------------------------------------------------------------------------- warnings

#: warnings of one kind (alike but for their numbers) shown before the rest are counted
WARNINGS_OF_A_KIND = 3
_NUMBERS_IN_TEXT = re.compile(r"\d+")


def collapse_repeats(lines: Sequence[str], keep: int = WARNINGS_OF_A_KIND) -> list[str]:
    """``lines`` in order, but of lines alike except for their numbers (a
    damaged batch, an undecodable record, at another offset each) only the
    first ``keep``, the last of them followed by ``... and N more like it``."""
    kinds = [_NUMBERS_IN_TEXT.sub("#", line) for line in lines]
    totals: dict[str, int] = {}
    for kind in kinds:
        totals[kind] = totals.get(kind, 0) + 1
    shown: dict[str, int] = {}
    out = []
    for line, kind in zip(lines, kinds):
        n = shown[kind] = shown.get(kind, 0) + 1
        if n <= keep:
            out.append(line)
        if n == keep and totals[kind] > keep:
            out.append(f"... and {totals[kind] - keep} more like it")
    return out


# --------------------------------------------------------------------------- colour

def style(text: str, spec: str, enabled: bool) -> str:
    """``text`` wrapped in the ANSI codes of the rich style ``spec`` (for
    example ``"bold blue"``) when ``enabled``, else unchanged."""
    if not enabled or not text:
        return text
    from rich.color import ColorSystem
    from rich.style import Style
    return Style.parse(spec).render(text, color_system=ColorSystem.STANDARD)


def highlight_json(text: str, enabled: bool) -> str:
    """JSON text with rich's JSON highlighting when ``enabled``."""
    if not enabled:
        return text
    import io

    from rich.console import Console
    from rich.highlighter import JSONHighlighter

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard",
                      width=1 << 20, highlight=False, soft_wrap=True)
    console.print(JSONHighlighter()(text), end="", soft_wrap=True)
    return buf.getvalue()
