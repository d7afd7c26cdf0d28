"""Encoding a record's body from its dict, by walking the schema (writing is
not on a hot path: the writer and tests use it)."""

from __future__ import annotations

import struct
from typing import Any

from . import primitives as P
from .fields import FIXED, MISSING, UNKNOWN_TAGS, Field


def encode_struct(fields: tuple[Field, ...], version: int, flexible: bool, data: dict,
                   out: bytearray) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if version not in f.versions_range:
            continue
        value = data.get(f.json, MISSING)
        if value is MISSING:
            value = f.default_value()
        if flexible and version in f.tagged_range:
            if value != f.default_value():
                buf = bytearray()
                _encode_value(f, version, True, value, buf)
                tagged.append((f.tag, bytes(buf)))
            continue
        _encode_value(f, version, flexible, value, out)
    if flexible:
        for tag, raw in data.get(UNKNOWN_TAGS, ()):
            tagged.append((int(tag), bytes(raw)))
        tagged.sort(key=lambda item: item[0])
        P.write_uvarint(out, len(tagged))
        for tag, raw in tagged:
            P.write_uvarint(out, tag)
            P.write_uvarint(out, len(raw))
            out += raw


def _encode_value(f: Field, version: int, flexible: bool, value: Any, out: bytearray) -> None:
    t = f.type
    if t in FIXED:
        _encode_fixed(t, value, out)
    elif t in ("string", "bytes"):
        _encode_var(t, flexible, value, out, f)
    elif f.is_array:
        if value is None:
            if version not in f.nullable_range:
                raise ValueError(f"{f.name} is not nullable")
            if flexible:
                out.append(0)
            else:
                out += P.INT32.pack(-1)
            return
        if flexible:
            P.write_uvarint(out, len(value) + 1)
        else:
            out += P.INT32.pack(len(value))
        et = f.element_type
        for item in value:
            if et in FIXED:
                _encode_fixed(et, item, out)
            elif et in ("string", "bytes"):
                _encode_var(et, flexible, item, out, f)
            else:
                encode_struct(f.fields, version, flexible, item, out)
    else:
        if version in f.nullable_range:
            if value is None:
                out += P.INT8.pack(-1)
                return
            out += P.INT8.pack(1)
        encode_struct(f.fields, version, flexible, value, out)


def _encode_fixed(t: str, value: Any, out: bytearray) -> None:
    if t == "uuid":
        out += P.uuid_from_str(value) if isinstance(value, str) else bytes(value)
    elif t == "bool":
        out.append(1 if value else 0)
    else:
        out += struct.pack(">" + FIXED[t][0], value)


def _encode_var(t: str, flexible: bool, value: Any, out: bytearray, f: Field) -> None:
    if value is None:
        if flexible:
            out.append(0)
        else:
            out += (P.INT16 if t == "string" else P.INT32).pack(-1)
        return
    raw = value.encode("utf-8") if t == "string" else bytes(value)
    if flexible:
        P.write_uvarint(out, len(raw) + 1)
    elif t == "string":
        out += P.INT16.pack(len(raw))
    else:
        out += P.INT32.pack(len(raw))
    out += raw
