"""Declarative message schemas and the codecs derived from them.

The record catalog (``catalog.py``) describes every metadata and control
record as a :class:`Message` made of :class:`Field` objects, in the spirit of
Kafka's JSON schemas (kraft-format.md section 9). From one description this
module derives:

* a decoder per version: Python source generated once and compiled, so the
  hot path is straight-line code with precompiled ``struct`` groups rather
  than an interpreter walking the schema for every record;
* an encoder per version (interpreted: writing is not on a hot path);
* default values and JSON field names.

Decoded values are plain dicts keyed by Kafka's JSON names (``brokerId``),
in schema order, with every field of the schema present (absent fields get
their default, as Kafka's generated classes do). UUIDs are Kafka's
22-character text, ``bytes`` fields are ``bytes``. Unknown tagged fields are
kept under ``_unknownTaggedFields`` as ``[tag, raw bytes]`` pairs so that
re-encoding is lossless.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field as dc_field
from typing import Any, Callable

from ..errors import RecordDecodeError
from . import primitives as P

UNKNOWN_TAGS = "_unknownTaggedFields"
MISSING: Any = object()

# Fixed-width types: struct format character and size.
_FIXED = {
    "int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4), "int64": ("q", 8),
    "uint16": ("H", 2), "uint32": ("I", 4), "float64": ("d", 8),
    "bool": ("?", 1), "uuid": ("16s", 16),
}
PRIMITIVES = set(_FIXED) | {"string", "bytes"}


class Versions:
    """A version range as Kafka writes it: ``"0+"``, ``"1-3"``, ``"2"``, ``"none"``."""

    __slots__ = ("text", "lo", "hi")

    def __init__(self, text: str):
        self.text = text
        if text in ("none", ""):
            self.lo, self.hi = None, None
        elif text.endswith("+"):
            self.lo, self.hi = int(text[:-1]), None
        elif "-" in text:
            lo, hi = text.split("-")
            self.lo, self.hi = int(lo), int(hi)
        else:
            self.lo = self.hi = int(text)

    def __contains__(self, v: int) -> bool:
        if self.lo is None:
            return False
        return v >= self.lo and (self.hi is None or v <= self.hi)

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return isinstance(other, Versions) and (self.lo, self.hi) == (other.lo, other.hi)

    def __hash__(self):
        return hash((self.lo, self.hi))


def json_name(name: str) -> str:
    """Kafka's JSON converter name: first letter lower-cased (``KRaftVersion`` -> ``kRaftVersion``)."""
    return name[:1].lower() + name[1:]


@dataclass(frozen=True)
class Field:
    """One field of a message or nested struct.

    ``type`` is a primitive (``int32``, ``string``, ``uuid`` ...), ``[]T`` for
    an array, or a struct name, in which case ``fields`` lists the struct's
    fields. ``tag`` with ``tagged`` (taggedVersions; defaults to ``versions``)
    makes it a tagged field. ``default`` is a Python value; when omitted the
    type's default applies (0, false, "", empty, zero UUID).
    """

    name: str
    type: str
    versions: str = "0+"
    nullable: str = "none"
    tag: int | None = None
    tagged: str | None = None
    default: Any = MISSING
    fields: tuple["Field", ...] = ()
    about: str = ""

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))

    @property
    def json(self) -> str:
        return json_name(self.name)

    @property
    def versions_range(self) -> Versions:
        return Versions(self.versions)

    @property
    def nullable_range(self) -> Versions:
        return Versions(self.nullable)

    @property
    def tagged_range(self) -> Versions:
        if self.tag is None:
            return Versions("none")
        return Versions(self.tagged if self.tagged is not None else self.versions)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """A struct-typed field (inline struct, or array of structs)."""
        return self.element_type not in PRIMITIVES

    def default_value(self) -> Any:
        if self.default is not MISSING:
            return list(self.default) if isinstance(self.default, list) else self.default
        if self.is_array:
            return []
        t = self.type
        if t in PRIMITIVES:
            return {"bool": False, "string": "", "bytes": b"", "uuid": P.ZERO_UUID,
                    "float64": 0.0}.get(t, 0)
        return struct_defaults(self.fields, None)


def struct_defaults(fields: tuple[Field, ...], version: int | None) -> dict:
    return {f.json: f.default_value() for f in fields}


@dataclass
class Message:
    """A record type: metadata record (``kind="metadata"``, keyed by apiKey)
    or control record (``kind="control"``, keyed by control type).

    ``frame`` is the metadata frame version whose schemas this belongs to
    (0 for Kafka 2.8, 1 for 3.0+). ``layout`` names a superseded layout that
    shares apiKey and version with the current one (kraft-format.md section 12),
    e.g. ``"3.0-3.2"``; the current layout has ``layout=None``.
    """

    name: str
    api_key: int
    valid: str
    fields: list[Field]
    flexible: str = "0+"
    frame: int = 1
    layout: str | None = None
    kind: str = "metadata"
    about: str = ""
    _decoders: dict = dc_field(default_factory=dict, repr=False, compare=False)

    @property
    def valid_range(self) -> Versions:
        return Versions(self.valid)

    def is_flexible(self, version: int) -> bool:
        return version in Versions(self.flexible)

    def defaults(self, version: int) -> dict:
        return struct_defaults(tuple(self.fields), version)

    # -- decoding -------------------------------------------------------------

    def decoder(self, version: int) -> Callable:
        """``fn(buf, pos, end) -> (dict, pos)`` for this version (compiled once)."""
        fn = self._decoders.get(version)
        if fn is None:
            if version not in self.valid_range:
                raise RecordDecodeError(f"{self.name} has no version {version}")
            fn = _compile_decoder(self, version)
            self._decoders[version] = fn
        return fn

    def decode(self, version: int, buf, pos: int = 0, end: int | None = None,
               exact: bool = True) -> tuple[dict, int]:
        """Decode one body; with ``exact`` the body must end exactly at ``end``."""
        if end is None:
            end = len(buf)
        try:
            data, p = self.decoder(version)(buf, pos, end)
        except RecordDecodeError:
            raise
        except (IndexError, struct.error, UnicodeDecodeError, ValueError, OverflowError) as e:
            raise RecordDecodeError(f"{self.name} v{version}: truncated or malformed ({e})") from None
        if p > end:
            raise RecordDecodeError(f"{self.name} v{version}: body runs {p - end} byte(s) past its end")
        if exact and p != end:
            raise RecordDecodeError(f"{self.name} v{version}: {end - p} byte(s) of garbage after the body")
        return data, p

    # -- encoding -------------------------------------------------------------

    def encode(self, version: int, data: dict, out: bytearray | None = None) -> bytearray:
        if out is None:
            out = bytearray()
        _encode_struct(tuple(self.fields), version, self.is_flexible(version), data, out)
        return out


# ---------------------------------------------------------------------------
# Decoder generation
# ---------------------------------------------------------------------------


class _Gen:
    """Emits the source of one decoder function per struct."""

    def __init__(self, message: Message):
        self.message = message
        self.ns: dict[str, Any] = {
            "_uv": P.read_uvarint, "_uuid": P.uuid_to_str, "_E": RecordDecodeError,
            "_unpack": struct.unpack_from, "_i16": P.INT16.unpack_from,
            "_i32": P.INT32.unpack_from, "_i8": P.INT8.unpack_from,
        }
        self.functions: list[str] = []
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"_{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        n = self.name("c")
        self.ns[n] = value
        return n

    def struct_fn(self, fields: tuple[Field, ...], version: int, flexible: bool, label: str) -> str:
        fname = self.name("s")
        L = [f"def {fname}(buf, pos, end):", "    d = {}"]
        seq = []  # pending fixed-width fields, emitted as one struct group
        for f in fields:
            if version not in f.versions_range:
                self._flush(seq, L)
                L.append(f"    d[{f.json!r}] = {self.default_expr(f)}")
                continue
            if flexible and version in f.tagged_range:
                self._flush(seq, L)
                L.append(f"    d[{f.json!r}] = {self.default_expr(f)}")
                continue
            if f.type in _FIXED:
                seq.append(f)
                continue
            self._flush(seq, L)
            L.extend("    " + line for line in self.read_value(f, version, flexible, f"d[{f.json!r}]", label))
        self._flush(seq, L)
        if flexible:
            L.extend("    " + line for line in self.tagged_section(fields, version, label))
        L.append("    return d, pos")
        self.functions.append("\n".join(L))
        return fname

    def _flush(self, seq: list[Field], L: list[str]) -> None:
        if not seq:
            return
        fmt = ">" + "".join(_FIXED[f.type][0] for f in seq)
        size = sum(_FIXED[f.type][1] for f in seq)
        st = self.const(struct.Struct(fmt).unpack_from)
        names = [f"_v{i}" for i in range(len(seq))]
        L.append(f"    {', '.join(names)}, = {st}(buf, pos)")
        for f, n in zip(seq, names):
            val = f"_uuid({n})" if f.type == "uuid" else n
            L.append(f"    d[{f.json!r}] = {val}")
        L.append(f"    pos += {size}")
        seq.clear()

    def default_expr(self, f: Field) -> str:
        v = f.default_value()
        if isinstance(v, (list, dict)):
            return f"{self.const(v)}.copy()" if not v or isinstance(v, list) else f"_copy({self.const(v)})"
        return repr(v)

    def read_value(self, f: Field, version: int, flexible: bool, target: str, label: str) -> list[str]:
        """Lines (relative indent) that read field ``f`` at ``pos`` into ``target``."""
        nullable = version in f.nullable_range
        where = f"{label}.{f.name}"
        t = f.type
        if t in _FIXED:
            fmt, size = _FIXED[t]
            st = self.const(struct.Struct(">" + fmt).unpack_from)
            val = f"_uuid({st}(buf, pos)[0])" if t == "uuid" else f"{st}(buf, pos)[0]"
            return [f"{target} = {val}", f"pos += {size}"]
        if t in ("string", "bytes"):
            fn = self.const(_reader(t, flexible, nullable, where))
            return [f"{target}, pos = {fn}(buf, pos, end)"]
        if f.is_array:
            return self.read_array(f, version, flexible, nullable, target, where)
        # inline struct
        sfn = self.struct_fn(f.fields, version, flexible, where)
        if nullable:
            return [f"if _i8(buf, pos)[0] < 0:", f"    {target} = None", "    pos += 1",
                    "else:", f"    {target}, pos = {sfn}(buf, pos + 1, end)"]
        return [f"{target}, pos = {sfn}(buf, pos, end)"]

    def read_array(self, f: Field, version: int, flexible: bool, nullable: bool,
                   target: str, where: str) -> list[str]:
        L = []
        if flexible:
            L += ["n = buf[pos]", "if n < 0x80:", "    pos += 1", "else:",
                  "    n, pos = _uv(buf, pos)", "n -= 1"]
        else:
            L += ["n = _i32(buf, pos)[0]", "pos += 4"]
        null = f"{target} = None" if nullable else f"raise _E('non-nullable array {where} is null')"
        L += ["if n < 0:", f"    {null}", "elif n > end - pos:",
              f"    raise _E('array {where} claims ' + str(n) + ' elements, more than the bytes left')",
              "else:"]
        et = f.element_type
        if et in _FIXED and et != "uuid":
            fmt, size = _FIXED[et]
            L += [f"    {target} = list(_unpack('>' + str(n) + {fmt!r}, buf, pos))",
                  f"    pos += {size} * n"]
        elif et == "uuid":
            L += [f"    {target} = [_uuid(bytes(buf[p:p + 16])) for p in range(pos, pos + 16 * n, 16)]",
                  "    pos += 16 * n"]
        elif et in ("string", "bytes"):
            fn = self.const(_reader(et, flexible, False, where))
            L += ["    a = []", "    for _ in range(n):", f"        x, pos = {fn}(buf, pos, end)",
                  "        a.append(x)", f"    {target} = a"]
        else:
            sfn = self.struct_fn(f.fields, version, flexible, where)
            L += ["    a = []", "    for _ in range(n):", f"        x, pos = {sfn}(buf, pos, end)",
                  "        a.append(x)", f"    {target} = a"]
        return L

    def tagged_section(self, fields: tuple[Field, ...], version: int, label: str) -> list[str]:
        tagged = [f for f in fields if version in f.versions_range and version in f.tagged_range]
        L = ["n = buf[pos]", "if n < 0x80:", "    pos += 1", "else:", "    n, pos = _uv(buf, pos)",
             "for _ in range(n):",
             "    tag, pos = _uv(buf, pos)",
             "    size, pos = _uv(buf, pos)",
             "    stop = pos + size",
             "    if stop > end:",
             f"        raise _E('tagged field ' + str(tag) + ' of {label} runs past the end')"]
        first = True
        for f in tagged:
            kw = "if" if first else "elif"
            first = False
            L.append(f"    {kw} tag == {f.tag}:")
            L.append("        p0 = pos")
            body = self.read_value(f, version, True, f"d[{f.json!r}]", label)
            # a tagged value is decoded from a slice of exactly ``size`` bytes
            body = [line.replace("(buf, pos, end)", "(buf, pos, stop)") for line in body]
            L.extend("        " + line for line in body)
            L.append("        if pos != stop:")
            L.append(f"            raise _E('tagged field {f.name} of {label} has size ' + str(size) + "
                     "' but its value used ' + str(pos - p0))")
        unknown = ["d.setdefault(" + repr(UNKNOWN_TAGS) + ", []).append([tag, bytes(buf[pos:stop])])",
                   "pos = stop"]
        if tagged:
            L.append("    else:")
            L.extend("        " + line for line in unknown)
        else:
            L.extend("    " + line for line in unknown)
        return L


def _reader(t: str, flexible: bool, nullable: bool, where: str) -> Callable:
    """A reader for a string or bytes value; returns ``(value, pos)``."""
    is_str = t == "string"

    def read(buf, pos, end):
        if flexible:
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = P.read_uvarint(buf, pos)
            n -= 1
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


def _copy(d):
    import copy
    return copy.deepcopy(d)


def _compile_decoder(message: Message, version: int) -> Callable:
    gen = _Gen(message)
    gen.ns["_copy"] = _copy
    top = gen.struct_fn(tuple(message.fields), version, message.is_flexible(version), message.name)
    source = "\n\n".join(gen.functions)
    code = compile(source, f"<decoder {message.name} v{version}>", "exec")
    exec(code, gen.ns)
    fn = gen.ns[top]
    fn.__source__ = source
    return fn


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def _encode_struct(fields: tuple[Field, ...], version: int, flexible: bool, data: dict,
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
    if t in _FIXED:
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
            if et in _FIXED:
                _encode_fixed(et, item, out)
            elif et in ("string", "bytes"):
                _encode_var(et, flexible, item, out, f)
            else:
                _encode_struct(f.fields, version, flexible, item, out)
    else:
        if version in f.nullable_range:
            if value is None:
                out += P.INT8.pack(-1)
                return
            out += P.INT8.pack(1)
        _encode_struct(f.fields, version, flexible, value, out)


def _encode_fixed(t: str, value: Any, out: bytearray) -> None:
    if t == "uuid":
        out += P.uuid_from_str(value) if isinstance(value, str) else bytes(value)
    elif t == "bool":
        out.append(1 if value else 0)
    else:
        out += struct.pack(">" + _FIXED[t][0], value)


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
