"""Shape-specialised decoding.

Most bodies of a record type look alike: a snapshot's PartitionRecords
nearly all have 3 replicas, 3 in sync, none moving, 3 directories and no
tagged fields. When a body holds only fixed-width values and arrays of them,
its *shape* -- the sequence of its structural values: every array count and,
in flexible versions, the tagged-field count and each tag and size -- fixes
where every byte lies. A body of a known shape is then one ``struct`` call
over the whole body and one dict display: for a PartitionRecord about 40%
less time than the general decoder's walk. The general decoder stays the reference: a shape's
code runs only when the body's size and every structural value match the
shape exactly, and ``_layout`` admits only shapes whose bodies the general
decoder reads in the very same way (one-byte counts, tags and sizes, known
tags, sizes that fit, nulls where allowed), so it would take the very same
path through the very same bytes; anything else goes to it unchanged.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

from . import primitives as P
from .fields import FIXED, Field


_SHAPES = 8            # shapes one decoder tries, in the order learned
_LEARN_AFTER = 2       # sightings before a shape is compiled: one-offs never are
_LEARN_WALKS = 1024    # unmatched bodies examined (~10 us each) before learning stops for good
_SHAPE_ELEMENTS = 126  # longest array in a shape: the most a one-byte compact count holds


@dataclass
class ShapePlan:
    """What a shape can hold for one message version: ``body`` lists the
    untagged fields in wire order (each fixed-width or an array of
    fixed-width elements), ``tagged`` the tagged fields of that kind by tag
    (a body with any other tag is left to the general decoder)."""

    message: object   # a schema.Message
    version: int
    flexible: bool
    body: list[Field]
    tagged: dict[int, Field]
    nullable: set[str]


def shape_plan(message, version: int) -> ShapePlan | None:
    """The plan for this version, or None when no body of it can have a shape
    (a string, bytes or struct outside the tagged fields) or when every body
    has the same layout anyway (nothing to gain over the general decoder's
    single ``struct`` call)."""
    flexible = message.is_flexible(version)
    body: list[Field] = []
    tagged: dict[int, Field] = {}
    for f in message.fields:
        if version not in f.versions_range:
            continue
        fixed = f.element_type in FIXED   # a fixed-width value or an array of them
        if flexible and version in f.tagged_range:
            if fixed and f.tag < 0x80:   # a one-byte tag
                tagged[f.tag] = f
        elif fixed:
            body.append(f)
        else:
            return None
    if not tagged and not any(f.is_array for f in body):
        return None
    nullable = {f.name for f in message.fields if version in f.nullable_range}
    return ShapePlan(message, version, flexible, body, tagged, nullable)


class _Layout:
    """Where everything lies in a body of one shape, as items of one
    ``struct`` format: ``fmt`` (one format code per tuple item), ``size``
    (bytes), ``key`` (the structural values in order: the shape itself),
    ``checks`` (tuple index and value of each structural item) and
    ``values`` (field name -> tuple index of its value and element count;
    count None for a scalar, negative for a null array)."""

    def __init__(self, plan: ShapePlan, structural: Callable):
        # structural(fmt, offset) -> the structural value at that offset of
        # the body, None if there is none to read
        self.plan = plan
        self.structural = structural
        self.fmt: list[str] = []
        self.size = 0
        self.key: list[int] = []
        self.checks: list[tuple[int, int]] = []
        self.values: dict[str, tuple[int, int | None]] = {}

    def item(self, fmt: str) -> int | None:
        """Read a structural value (count, tag or size) into the shape."""
        value = self.structural(fmt, self.size)
        if value is not None:
            self.checks.append((len(self.fmt), value))
            self.key.append(value)
            self.fmt.append(fmt)
            self.size += struct.calcsize(">" + fmt)
        return value

    def field(self, f: Field) -> bool:
        """Lay out the value of ``f``; False if it is not one a shape holds."""
        if not f.is_array:
            fmt, size = FIXED[f.type]
            self.values[f.name] = (len(self.fmt), None)
            self.fmt.append(fmt)
            self.size += size
            return True
        flexible = self.plan.flexible
        count = self.item("B" if flexible else "i")
        if count is None:
            return False
        n = count - 1 if flexible else count   # negative: null, as in the general decoder
        if n > _SHAPE_ELEMENTS or (n < 0 and f.name not in self.plan.nullable):
            return False
        fmt, size = FIXED[f.element_type]
        self.values[f.name] = (len(self.fmt), n)
        if n > 0:
            self.fmt += [fmt] * n
            self.size += size * n
        return True


def _layout(plan: ShapePlan, structural: Callable) -> _Layout | None:
    """Walk ``plan`` through a body whose structural values ``structural``
    supplies (see :class:`_Layout`); None if they are not a shape's: a count,
    tag or size that is not a one-byte varint, a tag the plan does not hold,
    a tagged size that does not match its value, a null the field does not
    allow."""
    lay = _Layout(plan, structural)
    for f in plan.body:
        if not lay.field(f):
            return None
    if plan.flexible:
        count = lay.item("B")
        if count is None or count >= 0x80:
            return None
        for _ in range(count):
            tag = lay.item("B")
            size = lay.item("B")
            if size is None or size >= 0x80:
                return None
            f = plan.tagged.get(tag)
            start = lay.size
            if f is None or not lay.field(f) or lay.size - start != size:
                return None
    return lay


def _body_values(buf, pos: int, end: int) -> Callable:
    """``structural`` for :func:`_layout` reading the body ``buf[pos:end]``."""
    def structural(fmt: str, offset: int) -> int | None:
        if fmt == "B":
            return buf[pos + offset] if offset < end - pos else None
        return P.INT32.unpack_from(buf, pos + offset)[0] if offset + 4 <= end - pos else None
    return structural


class Shapes:
    """The shapes one decoder has learned, and ``entry``, the decoder that
    tries them before the general one.

    A body no shape matches goes to the general decoder; while learning,
    a shape it has accepted twice is compiled into ``entry``. Learning stops
    for good once ``_SHAPES`` shapes are known or ``_LEARN_WALKS`` unmatched
    bodies have been examined; from then on a miss costs the general decoder
    alone. The first shapes to recur are the common ones, so they come first.

    Callers keep the function :meth:`Message.decoder` returned (the reader
    caches it per frame, apiKey and version), so a new shape recompiles that
    function's code in place (``__code__``) instead of making a new function:
    a hit costs no call beyond the caller's own.
    """

    def __init__(self, gen, plan: ShapePlan, general: Callable):
        self.gen = gen
        self.plan = plan
        self.general = general
        self.shapes: list[tuple[int, ...]] = []
        self.seen: dict[tuple[int, ...], int] = {}
        self.walks = 0
        self.lines: dict[tuple[int, ...], list[str]] = {}   # generated code per shape
        fields = plan.message.fields
        self.defaults = {f.name: gen.default_expr(f) for f in fields if f not in plan.body}
        gen.ns["_miss"] = self.miss
        gen.ns["_StructError"] = struct.error
        self.entry: Callable | None = None
        self._install()
        self.entry.shapes = self

    def miss(self, buf, pos: int, end: int) -> tuple[dict, int]:
        """The general decoder; what it accepts, learning examines."""
        result = self.general(buf, pos, end)
        if result[1] == end:
            self.learn(buf, pos, end)
        return result

    def learn(self, buf, pos: int, end: int) -> None:
        """Count the body's shape; compile it on its ``_LEARN_AFTER``-th sighting."""
        self.walks += 1
        lay = _layout(self.plan, _body_values(buf, pos, end))
        if lay is not None:
            key = tuple(lay.key)
            seen = self.seen[key] = self.seen.get(key, 0) + 1
            if seen == _LEARN_AFTER:
                self.shapes.append(key)
                self._install()
        if len(self.shapes) >= _SHAPES or self.walks >= _LEARN_WALKS:
            self.gen.ns["_miss"] = self.general
            self.seen.clear()

    def _install(self) -> None:
        """Compile ``entry`` for the shapes learned so far."""
        plan = self.plan
        L = ["def _shaped(buf, pos, end):"]
        if self.shapes:
            # per shape: its size, then one struct over the whole body, then
            # its structural items compared with the shape's
            L += ["    n = end - pos", "    try:"]
            for key in self.shapes:
                if key not in self.lines:
                    self.lines[key] = self._shape_lines(key)
                L += self.lines[key]
            L += ["    except _StructError:   # end lies beyond the buffer: the general decoder says so",
                  "        pass"]
        L.append("    return _miss(buf, pos, end)")
        source = "\n".join(L)
        ns = self.gen.ns
        exec(compile(source, f"<shapes {plan.message.name} v{plan.version}>", "exec"), ns)
        fn = ns.pop("_shaped")
        if self.entry is None:
            self.entry = fn
        else:
            self.entry.__code__ = fn.__code__
        self.entry.__source__ = source + "\n\n" + self.general.__source__

    def _shape_lines(self, key: tuple[int, ...]) -> list[str]:
        values = iter(key)
        lay = _layout(self.plan, lambda fmt, offset: next(values))
        unpack = self.gen.const(struct.Struct(">" + "".join(lay.fmt)).unpack_from)
        checks = " and ".join(f"t[{i}] == {v}" for i, v in lay.checks)
        items = ", ".join(f"{f.json!r}: {self._value(f, lay)}" for f in self.plan.message.fields)
        return [f"        # shape {key}",
                f"        if n == {lay.size}:",
                f"            t = {unpack}(buf, pos)",
                f"            if {checks}:",
                f"                return {{{items}}}, end"]

    def _value(self, f: Field, lay: _Layout) -> str:
        """The expression for field ``f``'s value in a body laid out as ``lay``;
        where a tag repeats, its last value counts, as in the general decoder."""
        at = lay.values.get(f.name)
        if at is None:
            return self.defaults[f.name]
        i, n = at
        one = "_UU[t[{}]]" if f.element_type == "uuid" else "t[{}]"
        if n is None:
            return one.format(i)
        if n < 0:
            return "None"
        return "[" + ", ".join(one.format(j) for j in range(i, i + n)) + "]"
