"""Interpreted decoding, before a decoder is worth compiling.

Compiling a decoder costs what decoding a few hundred bodies does (a
broker's registration: 1.2 ms); a controller's log decodes most record
types only a handful of times (registrations, features, the few partition
changes its change batches are learned from). :func:`interpreted` walks the
schema instead, with the very readers the generated code calls for strings
and fixed-width arrays (``readers.py``). It answers only for a body it reads
whole, ending exactly at ``end``; anything else (an error, a body ending
elsewhere, an inline struct) raises, and the caller asks the compiled
decoder, whose answer (and error message) is then the one given.
"""

from __future__ import annotations

import struct
from typing import Callable

from ..errors import RecordDecodeError
from . import primitives as P
from .fields import FIXED, UNKNOWN_TAGS, Field
from .readers import UUIDS, fixed_array_reader, var_reader


class Unsure(Exception):
    """The interpreted decoder leaves this body to the compiled one."""


# bodies a version's decoder reads interpreted before it is compiled: a broker
# registration's compile (1.2 ms) costs what interpreting ~125 of them does
# (10 us each, 4 us compiled); a record type read more often pays ~0.1 ms more
INTERPRETED_USES = 16
INTERPRETER_GIVES_UP = (Unsure, RecordDecodeError, IndexError, struct.error, ValueError,
                        OverflowError)


def interpreted(message, version: int) -> Callable:
    """``fn(buf, pos, end) -> (dict, end)``, what ``message.decoder(version)``
    returns for a body it reads exactly to ``end``, or raises (:class:`Unsure`
    or a decoding error): then only the compiled decoder says what it makes
    of the body."""
    read = _interpreted_struct(tuple(message.fields), version, message.is_flexible(version),
                               message.name)

    def decode(buf, pos, end):
        data, p = read(buf, pos, end)
        if p != end:
            raise Unsure
        return data, p
    return decode


def _interpreted_struct(fields: tuple[Field, ...], version: int, flexible: bool,
                        label: str) -> Callable:
    """Reads one struct as :meth:`.codegen._Gen.struct_fn`'s code does: fields in wire
    order (absent and tagged ones get their default), then, if ``flexible``,
    the tagged-field section; the dict in schema order."""
    plan = []     # (json name, reader or None for a default)
    tagged = {}   # tag -> (json name, reader)
    for f in fields:
        present = version in f.versions_range
        if present and flexible and version in f.tagged_range:
            tagged[f.tag] = (f.json, _interpreted_value(f, version, True, label))
            present = False
        plan.append((f.json, _interpreted_value(f, version, flexible, label) if present else None, f))

    def read(buf, pos, end):
        d = {}
        for name, reader, f in plan:
            if reader is None:
                d[name] = f.default_value()
            else:
                d[name], pos = reader(buf, pos, end)
        if flexible:
            pos = _interpreted_tags(tagged, d, buf, pos, end)
        return d, pos
    return read


def _interpreted_tags(tagged: dict, d: dict, buf, pos: int, end: int) -> int:
    """The tagged-field section into ``d`` (the last value of a repeated tag
    counts, unknown tags kept raw); where it ends."""
    n, pos = P.read_uvarint(buf, pos)
    unk = None
    for _ in range(n):
        tag, pos = P.read_uvarint(buf, pos)
        size, pos = P.read_uvarint(buf, pos)
        tend = pos + size
        if tend > end:
            raise Unsure
        known = tagged.get(tag)
        if known is None:
            if unk is None:
                unk = []
            unk.append([tag, bytes(buf[pos:tend])])
        else:
            d[known[0]], p = known[1](buf, pos, tend)
            if p != tend:
                raise Unsure
        pos = tend
    if unk is not None:
        d[UNKNOWN_TAGS] = unk
    return pos


def _interpreted_value(f: Field, version: int, flexible: bool, label: str) -> Callable:
    """``read(buf, pos, end) -> (value, pos)`` for field ``f``, as the
    generated code reads it (:meth:`.codegen._Gen.read_value`)."""
    nullable = version in f.nullable_range
    where = f"{label}.{f.name}"
    t = f.element_type
    if not f.is_array:
        if t in FIXED:
            return _interpreted_fixed(t)
        if t in ("string", "bytes"):
            return var_reader(t, flexible, nullable, where)
        raise Unsure   # an inline struct: no record has one; compile
    if t in FIXED and flexible:
        fmt, size = FIXED[t]
        return fixed_array_reader(fmt, size, t == "uuid", nullable, where)
    if t in FIXED:
        element = _interpreted_fixed(t)
    elif t in ("string", "bytes"):
        element = var_reader(t, flexible, False, where)
    else:
        element = _interpreted_struct(f.fields, version, flexible, where)
    return _interpreted_array(element, flexible, nullable)


def _interpreted_fixed(t: str) -> Callable:
    """A fixed-width value's reader (its bytes are not checked against ``end``,
    as the generated code's ``struct`` groups do not check them)."""
    fmt, size = FIXED[t]
    unpack = struct.Struct(">" + fmt).unpack_from
    if t == "uuid":
        return lambda buf, pos, end: (UUIDS[unpack(buf, pos)[0]], pos + size)
    return lambda buf, pos, end: (unpack(buf, pos)[0], pos + size)


def _interpreted_array(element: Callable, flexible: bool, nullable: bool) -> Callable:
    """An array read element by element (:meth:`.codegen._Gen.read_array_general`)."""
    def read(buf, pos, end):
        if flexible:
            n, pos = P.read_uvarint(buf, pos)
            n -= 1
        else:
            n = P.INT32.unpack_from(buf, pos)[0]
            pos += 4
        if n < 0:
            if not nullable:
                raise Unsure
            return None, pos
        if n > end - pos:
            raise Unsure
        out = []
        for _ in range(n):
            x, pos = element(buf, pos, end)
            out.append(x)
        return out, pos
    return read
