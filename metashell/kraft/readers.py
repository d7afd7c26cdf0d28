"""The readers a generated decoder calls for what it does not read inline
(a null or long string, an array of fixed-width elements of any count), and
that the interpreter reads with: one definition of how such a value is read,
for both.
"""

from __future__ import annotations

import copy
import struct
from typing import Callable

from ..errors import RecordDecodeError
from . import primitives as P

UUIDS = P.UUID_TEXT

# arrays of fixed-width elements up to this count use a precompiled struct
SMALL_ARRAY = 32
_ARRAY_UNPACKERS: dict[str, list] = {}


def counted_unpackers(fmt: str) -> list:
    """``table[n](buf, pos)`` unpacks ``n - 1`` elements (``n`` is a compact
    array's count byte); ``table[0]`` is unused."""
    return [None] + array_unpackers(fmt)[:SMALL_ARRAY - 1]


def array_unpackers(fmt: str) -> list:
    """``table[n](buf, pos)`` unpacks ``n`` elements of struct format ``fmt``."""
    table = _ARRAY_UNPACKERS.get(fmt)
    if table is None:
        table = _ARRAY_UNPACKERS[fmt] = [struct.Struct(">" + fmt * n).unpack_from
                                         for n in range(SMALL_ARRAY)]
    return table


def compact_length(buf, pos: int) -> "tuple[int, int]":
    """A flexible version's length (an unsigned varint of length + 1; -1:
    null) at ``pos``, and where what it counts starts."""
    n = buf[pos]
    if n < 0x80:
        return n - 1, pos + 1
    n, pos = P.read_uvarint(buf, pos)
    return n - 1, pos


def fixed_array_reader(fmt: str, size: int, uuid: bool, nullable: bool, where: str) -> Callable:
    """A reader for a flexible version's array of fixed-width elements (struct
    format ``fmt``, ``size`` bytes each), of any count, as the general
    decoder's lines read it; returns ``(value, pos)``."""
    table = array_unpackers(fmt)

    def read(buf, pos, end):
        n, pos = compact_length(buf, pos)
        if n < 0:
            if nullable:
                return None, pos
            raise RecordDecodeError(f"non-nullable array {where} is null")
        if n > end - pos:
            raise RecordDecodeError(f"array {where} claims {n} elements, more than the bytes left")
        if n == 0:
            return [], pos
        values = (table[n](buf, pos) if n < SMALL_ARRAY
                  else struct.unpack_from(">" + (fmt * n if uuid else str(n) + fmt), buf, pos))
        return (list(map(UUIDS.__getitem__, values)) if uuid else list(values)), pos + size * n

    return read


def var_reader(t: str, flexible: bool, nullable: bool, where: str) -> Callable:
    """A reader for a string or bytes value; returns ``(value, pos)``."""
    is_str = t == "string"

    def read(buf, pos, end):
        if flexible:
            n, pos = compact_length(buf, pos)
        elif is_str:
            n = P.INT16.unpack_from(buf, pos)[0]
            pos += 2
        else:
            n = P.INT32.unpack_from(buf, pos)[0]
            pos += 4
        if n < 0:
            if nullable:
                return None, pos
            raise RecordDecodeError(f"non-nullable {t} {where} is null")
        stop = pos + n
        if stop > end:
            raise RecordDecodeError(f"{t} {where} of {n} bytes runs past the end")
        raw = buf[pos:stop]
        if is_str:
            return str(raw, "utf-8"), stop
        return bytes(raw), stop

    return read


def deep_copy(d):
    """A struct field's default, copied for each record that takes it (the
    generated code calls it as ``_copy``)."""
    return copy.deepcopy(d)
