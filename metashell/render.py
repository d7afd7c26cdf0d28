"""Text and JSON rendering shared by the commands.

Nothing here knows about commands or the shell: values in, text out.

* ``value_text``: how a file's value prints in text mode (scalars plainly,
  objects and arrays as indented JSON).
* ``json_line``: the compact, stable JSON of ``--output json``.
* ``column_schema`` / ``column_lines``: ``ls`` in columns, Kafka's
  column-major layout (``LsCommandHandler.calculateColumnSchema``).
* ``table_lines``: aligned columns for ``ls -l`` and ``changes``.
* ``iso_time``: ISO-8601 UTC with milliseconds.
* ``tree_text_lines`` / ``write_tree_json``: ``tree`` in text and JSON.
* ``summary_lines``: ``summary`` in text.
* ``style`` / ``highlight_json``: colour via rich, only when asked.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Sequence

from . import timefmt

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
    """A file's value as ``cat`` prints it in text mode (no trailing newline)."""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, indent=2, ensure_ascii=False, default=_json_default)
    return scalar_text(value)


def node_text(node) -> str:
    """A file node as text output shows it: its own text where it has one
    (Kafka's strings under ``/image``), else its value as ``value_text``."""
    text = node.text()
    return text if text is not None else value_text(node.value())


def json_text(value: Any) -> str:
    """Compact JSON, one line: what every ``--output json`` document uses."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_json_default)


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


# --------------------------------------------------------------------------- tree

def _children(node) -> Iterator[tuple[str, Any]]:
    """(name, child) for every listed child that exists (a listed name whose
    ``child()`` is ``None`` is skipped, not an error)."""
    for name in node.children():
        child = node.child(name)
        if child is not None:
            yield name, child


def tree_text_lines(node, indent: int = 0) -> Iterator[str]:
    """The text ``tree``: the start node's own name is not printed; each
    child prints as ``name:`` and its content follows two spaces deeper.
    A file's value prints as in ``cat``, every line indented. A file as the
    start node prints its value at ``indent``."""
    pad = " " * indent
    if not node.is_dir:
        text = node.text()
        if text is not None:
            yield pad + text       # Kafka's printer indents the first line only
            return
        text = value_text(node.value())
        for line in text.split("\n"):
            yield pad + line
        return
    for name, child in _children(node):
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
        emit("{")
        first = True
        for name, child in _children(n):
            if not first:
                emit(",")
            first = False
            emit(json_text(name))
            emit(":")
            visit(child)
        emit("}")

    visit(node)
    flush()


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
