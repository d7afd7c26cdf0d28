"""Declarative message schemas and the codecs derived from them.

The record catalog (``catalog.py``) describes every metadata and control
record as a :class:`Message` made of :class:`Field` objects, in the spirit of
Kafka's JSON schemas (kraft-format.md section 9). From one description this
module derives:

* a decoder per version: Python source generated once and compiled, so the
  hot path is straight-line code with precompiled ``struct`` groups rather
  than an interpreter walking the schema for every record; where bodies
  vary only in array counts and tagged fields, the decoder also learns the
  common *shapes* at run time and reads a body of a known shape with a
  single ``struct`` call (see "Shape-specialised decoding" below);
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
    # version -> [interpreted decoder, bodies it may still read] (see interpret)
    _interpreters: dict = dc_field(default_factory=dict, repr=False, compare=False)

    @property
    def valid_range(self) -> Versions:
        return Versions(self.valid)

    def is_flexible(self, version: int) -> bool:
        return version in Versions(self.flexible)

    def defaults(self, version: int) -> dict:
        return struct_defaults(tuple(self.fields), version)

    # -- decoding -------------------------------------------------------------

    def decoder(self, version: int) -> Callable:
        """``fn(buf, pos, end) -> (dict, pos)`` for this version (compiled once;
        the same function for good, even as it learns shapes)."""
        fn = self._decoders.get(version)
        if fn is None:
            if version not in self.valid_range:
                raise RecordDecodeError(f"{self.name} has no version {version}")
            fn = _compile_decoder(self, version)
            self._decoders[version] = fn
        return fn

    def interpret(self, version: int, buf, pos: int, end: int) -> dict | None:
        """What the decoder of ``version`` makes of the body ``buf[pos:end]``
        when it reads it exactly to ``end``, found by interpreting the schema
        (:func:`interpreted`) while the decoder is not compiled and has been
        asked fewer than ``INTERPRETED_USES`` times; None otherwise (the
        caller then asks :meth:`decoder`, which compiles it: its answer, or
        error, is the one given)."""
        if version in self._decoders:
            return None
        held = self._interpreters.get(version)
        if held is None:
            try:
                fn = interpreted(self, version)
            except Unsure:
                fn = None
            held = self._interpreters[version] = [fn, INTERPRETED_USES]
        held[1] -= 1
        if held[0] is None or held[1] <= 0:
            return None
        try:
            return held[0](buf, pos, end)[0]
        except _INTERPRETER_GIVES_UP:
            return None

    def decode(self, version: int, buf, pos: int = 0, end: int | None = None,
               exact: bool = True) -> tuple[dict, int]:
        """Decode one body; with ``exact`` the body must end exactly at ``end``."""
        if end is None:
            end = len(buf)
        fn = self._decoders.get(version)
        if fn is None:
            data = self.interpret(version, buf, pos, end) if exact else None
            if data is not None:
                return data, end
            fn = self.decoder(version)
        try:
            data, p = fn(buf, pos, end)
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
    """Emits the source of one decoder function per struct.

    The generated code keeps every field in a local variable and builds the
    dict with one display at the end (in schema order); fixed-width runs are
    read with one precompiled ``struct`` call, strings and arrays inline with
    the one-byte varint case first, arrays of fixed-width elements with a
    precompiled ``struct`` per small element count, and UUID text from a
    memo (a dict whose ``__missing__`` converts, so a hit never runs Python).
    """

    def __init__(self, message: Message):
        self.message = message
        self.ns: dict[str, Any] = {
            "_uv": P.read_uvarint, "_UU": _UUIDS, "_UUget": _UUIDS.__getitem__, "_E": RecordDecodeError,
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
        L = [f"def {fname}(buf, pos, end):"]
        local = {f.name: f"f{i}" for i, f in enumerate(fields)}
        seq = []  # pending fixed-width fields, emitted as one struct group
        for f in fields:
            var = local[f.name]
            if version not in f.versions_range or (flexible and version in f.tagged_range):
                self._flush(seq, local, L)
                L.append(f"    {var} = {self.default_expr(f)}")
                continue
            if f.type in _FIXED:
                seq.append(f)
                continue
            self._flush(seq, local, L)
            L.extend("    " + line for line in self.read_value(f, version, flexible, var, label, "end"))
        self._flush(seq, local, L)
        if flexible:
            L.append("    unk = None")
            L.extend("    " + line for line in self.tagged_section(fields, version, label, local))
        items = ", ".join(f"{f.json!r}: {local[f.name]}" for f in fields)
        L.append(f"    d = {{{items}}}")
        if flexible:
            L.append("    if unk is not None:")
            L.append(f"        d[{UNKNOWN_TAGS!r}] = unk")
        L.append("    return d, pos")
        self.functions.append("\n".join(L))
        return fname

    def _flush(self, seq: list[Field], local: dict, L: list[str]) -> None:
        if not seq:
            return
        fmt = ">" + "".join(_FIXED[f.type][0] for f in seq)
        size = sum(_FIXED[f.type][1] for f in seq)
        st = self.const(struct.Struct(fmt).unpack_from)
        names = [local[f.name] for f in seq]
        L.append(f"    {', '.join(names)}, = {st}(buf, pos)")
        for f in seq:
            if f.type == "uuid":
                v = local[f.name]
                L.append(f"    {v} = _UU[{v}]")
        L.append(f"    pos += {size}")
        seq.clear()

    def default_expr(self, f: Field) -> str:
        v = f.default_value()
        if isinstance(v, (list, dict)):
            return f"{self.const(v)}.copy()" if not v or isinstance(v, list) else f"_copy({self.const(v)})"
        return repr(v)

    def read_value(self, f: Field, version: int, flexible: bool, target: str, label: str,
                   end: str) -> list[str]:
        """Lines (relative indent) that read field ``f`` at ``pos`` into
        ``target``; ``end`` names the variable holding where the value must end."""
        nullable = version in f.nullable_range
        where = f"{label}.{f.name}"
        t = f.type
        if t in _FIXED:
            fmt, size = _FIXED[t]
            st = self.const(struct.Struct(">" + fmt).unpack_from)
            if t == "uuid":
                return [f"{target} = _UU[{st}(buf, pos)[0]]",
                        f"pos += {size}"]
            return [f"{target} = {st}(buf, pos)[0]", f"pos += {size}"]
        if t in ("string", "bytes"):
            return self.read_var(t, flexible, nullable, where, target, end)
        if f.is_array:
            return self.read_array(f, version, flexible, nullable, target, where, end)
        # inline struct
        sfn = self.struct_fn(f.fields, version, flexible, where)
        if nullable:
            return ["if _i8(buf, pos)[0] < 0:", f"    {target} = None", "    pos += 1",
                    "else:", f"    {target}, pos = {sfn}(buf, pos + 1, {end})"]
        return [f"{target}, pos = {sfn}(buf, pos, {end})"]

    @staticmethod
    def read_length(flexible: bool, four_bytes: bool) -> list[str]:
        """Lines that read a length or count into ``n`` (-1 = null)."""
        if flexible:
            return ["n = buf[pos]", "if n < 0x80:", "    pos += 1", "else:",
                    "    n, pos = _uv(buf, pos)", "n -= 1"]
        if four_bytes:
            return ["n = _i32(buf, pos)[0]", "pos += 4"]
        return ["n = _i16(buf, pos)[0]", "pos += 2"]

    def read_var(self, t: str, flexible: bool, nullable: bool, where: str, target: str,
                 end: str) -> list[str]:
        """A string or bytes value, inline; flexible versions try the common
        one-byte length first, and read any other (null, a long value) by a
        shared reader (:func:`_reader`: the same steps, and a third less
        source to compile per decoder)."""
        if flexible:
            quick = "str(buf[pos + 1:stop], 'utf-8')" if t == "string" else "bytes(buf[pos + 1:stop])"
            other = self.const(_reader(t, True, nullable, where))
            return ["n = buf[pos]",
                    "if 0 < n < 0x80:",        # length n - 1, in one byte
                    "    stop = pos + n",
                    f"    if stop > {end}:",
                    f"        raise _E('{t} {where} of ' + str(n - 1) + ' bytes runs past the end')",
                    f"    {target} = {quick}",
                    "    pos = stop",
                    "else:",
                    f"    {target}, pos = {other}(buf, pos, {end})"]
        null = f"{target} = None" if nullable else f"raise _E('non-nullable {t} {where} is null')"
        value = "str(buf[pos:stop], 'utf-8')" if t == "string" else "bytes(buf[pos:stop])"
        return self.read_length(False, t == "bytes") + [
            "if n < 0:", f"    {null}", "else:",
            "    stop = pos + n",
            f"    if stop > {end}:",
            f"        raise _E('{t} {where} of ' + str(n) + ' bytes runs past the end')",
            f"    {target} = {value}",
            "    pos = stop"]

    def read_array(self, f: Field, version: int, flexible: bool, nullable: bool,
                   target: str, where: str, end: str) -> list[str]:
        et = f.element_type
        if not flexible or et not in _FIXED:
            return self.read_array_general(f, version, flexible, nullable, target, where, end)
        # the common case first: a one-byte count of 0 .. _SMALL_ARRAY - 2 elements;
        # any other (null, a longer count) by a shared reader (a third less source to compile)
        fmt, size = _FIXED[et]
        other = self.const(_fixed_array_reader(fmt, size, et == "uuid", nullable, where))
        table = self.const(_counted_unpackers(fmt))
        skip = self.const([1 + size * (n - 1) if n else 0 for n in range(_SMALL_ARRAY)])
        read = f"{table}[n](buf, pos + 1)"
        value = f"list(map(_UUget, {read}))" if et == "uuid" else f"list({read})"
        return ["n = buf[pos]",
                f"if 1 < n < {_SMALL_ARRAY}:",
                f"    stop = pos + {skip}[n]",
                f"    if stop > {end}:",
                f"        raise _E('array {where} claims ' + str(n - 1) + ' elements, more than the bytes left')",
                f"    {target} = {value}",
                "    pos = stop",
                "elif n == 1:",
                f"    {target} = []",
                "    pos += 1",
                "else:",
                f"    {target}, pos = {other}(buf, pos, {end})"]

    def read_array_general(self, f: Field, version: int, flexible: bool, nullable: bool,
                           target: str, where: str, end: str) -> list[str]:
        L = self.read_length(flexible, True)
        null = f"{target} = None" if nullable else f"raise _E('non-nullable array {where} is null')"
        L += ["if n < 0:", f"    {null}", f"elif n > {end} - pos:",
              f"    raise _E('array {where} claims ' + str(n) + ' elements, more than the bytes left')",
              "elif n == 0:", f"    {target} = []",
              "else:"]
        et = f.element_type
        if et in _FIXED:
            fmt, size = _FIXED[et]
            table = self.const(_array_unpackers(fmt))
            many = f"{fmt!r} * n" if et == "uuid" else f"str(n) + {fmt!r}"   # '16s' repeats
            read = (f"({table}[n](buf, pos) if n < {_SMALL_ARRAY} "
                    f"else _unpack('>' + {many}, buf, pos))")
            if et == "uuid":
                L += [f"    {target} = list(map(_UUget, {read}))"]
            else:
                L += [f"    {target} = list({read})"]
            L += [f"    pos += {size} * n"]
        elif et in ("string", "bytes"):
            fn = self.const(_reader(et, flexible, False, where))
            L += ["    a = []", "    for _ in range(n):", f"        x, pos = {fn}(buf, pos, {end})",
                  "        a.append(x)", f"    {target} = a"]
        else:
            sfn = self.struct_fn(f.fields, version, flexible, where)
            L += ["    a = []", "    for _ in range(n):", f"        x, pos = {sfn}(buf, pos, {end})",
                  "        a.append(x)", f"    {target} = a"]
        return L

    def tagged_section(self, fields: tuple[Field, ...], version: int, label: str,
                       local: dict) -> list[str]:
        """The tagged-field section; an empty one (a single 0 byte) first."""
        general = self.tagged_section_general(fields, version, label, local)
        return ["if buf[pos] == 0:", "    pos += 1", "else:"] + ["    " + line for line in general]

    def tagged_section_general(self, fields: tuple[Field, ...], version: int, label: str,
                               local: dict) -> list[str]:
        tagged = [f for f in fields if version in f.versions_range and version in f.tagged_range]
        L = ["n = buf[pos]", "if n < 0x80:", "    pos += 1", "else:", "    n, pos = _uv(buf, pos)",
             "for _ in range(n):",
             "    tag, pos = _uv(buf, pos)",
             "    size, pos = _uv(buf, pos)",
             "    tend = pos + size",
             "    if tend > end:",
             f"        raise _E('tagged field ' + str(tag) + ' of {label} runs past the end')"]
        first = True
        for f in tagged:
            kw = "if" if first else "elif"
            first = False
            L.append(f"    {kw} tag == {f.tag}:")
            L.append("        p0 = pos")
            # a tagged value is decoded from a slice of exactly ``size`` bytes
            body = self.read_value(f, version, True, local[f.name], label, "tend")
            L.extend("        " + line for line in body)
            L.append("        if pos != tend:")
            L.append(f"            raise _E('tagged field {f.name} of {label} has size ' + str(size) + "
                     "' but its value used ' + str(pos - p0))")
        unknown = ["if unk is None:", "    unk = []",
                   "unk.append([tag, bytes(buf[pos:tend])])", "pos = tend"]
        if tagged:
            L.append("    else:")
            L.extend("        " + line for line in unknown)
        else:
            L.extend("    " + line for line in unknown)
        return L


_UUIDS = P.UUID_TEXT

# arrays of fixed-width elements up to this count use a precompiled struct
_SMALL_ARRAY = 32
_ARRAY_UNPACKERS: dict[str, list] = {}


def _counted_unpackers(fmt: str) -> list:
    """``table[n](buf, pos)`` unpacks ``n - 1`` elements (``n`` is a compact
    array's count byte); ``table[0]`` is unused."""
    return [None] + _array_unpackers(fmt)[:_SMALL_ARRAY - 1]


def _array_unpackers(fmt: str) -> list:
    """``table[n](buf, pos)`` unpacks ``n`` elements of struct format ``fmt``."""
    table = _ARRAY_UNPACKERS.get(fmt)
    if table is None:
        table = _ARRAY_UNPACKERS[fmt] = [struct.Struct(">" + fmt * n).unpack_from
                                         for n in range(_SMALL_ARRAY)]
    return table


def _compact_length(buf, pos: int) -> "tuple[int, int]":
    """A flexible version's length (an unsigned varint of length + 1; -1:
    null) at ``pos``, and where what it counts starts."""
    n = buf[pos]
    if n < 0x80:
        return n - 1, pos + 1
    n, pos = P.read_uvarint(buf, pos)
    return n - 1, pos


def _fixed_array_reader(fmt: str, size: int, uuid: bool, nullable: bool, where: str) -> Callable:
    """A reader for a flexible version's array of fixed-width elements (struct
    format ``fmt``, ``size`` bytes each), of any count, as the general
    decoder's lines read it; returns ``(value, pos)``."""
    table = _array_unpackers(fmt)

    def read(buf, pos, end):
        n, pos = _compact_length(buf, pos)
        if n < 0:
            if nullable:
                return None, pos
            raise RecordDecodeError(f"non-nullable array {where} is null")
        if n > end - pos:
            raise RecordDecodeError(f"array {where} claims {n} elements, more than the bytes left")
        if n == 0:
            return [], pos
        values = (table[n](buf, pos) if n < _SMALL_ARRAY
                  else struct.unpack_from(">" + (fmt * n if uuid else str(n) + fmt), buf, pos))
        return (list(map(_UUIDS.__getitem__, values)) if uuid else list(values)), pos + size * n

    return read


def _reader(t: str, flexible: bool, nullable: bool, where: str) -> Callable:
    """A reader for a string or bytes value; returns ``(value, pos)``."""
    is_str = t == "string"

    def read(buf, pos, end):
        if flexible:
            n, pos = _compact_length(buf, pos)
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
    """The general decoder, behind a shape cache when the version's layout allows one."""
    gen = _Gen(message)
    gen.ns["_copy"] = _copy
    top = gen.struct_fn(tuple(message.fields), version, message.is_flexible(version), message.name)
    source = "\n\n".join(gen.functions)
    code = compile(source, f"<decoder {message.name} v{version}>", "exec")
    exec(code, gen.ns)
    fn = gen.ns[top]
    fn.__source__ = source
    plan = _plan(message, version)
    return fn if plan is None else _Shapes(gen, plan, fn).entry


# ---------------------------------------------------------------------------
# Interpreted decoding, before a decoder is worth compiling
# ---------------------------------------------------------------------------
#
# Compiling a decoder costs what decoding a few hundred bodies does (a
# broker's registration: 1.2 ms); a controller's log decodes most record
# types only a handful of times (registrations, features, the few partition
# changes its change batches are learned from). :func:`interpreted` walks the
# schema instead, with the very readers the generated code calls for strings
# and fixed-width arrays. It answers only for a body it reads whole, ending
# exactly at ``end``; anything else (an error, a body ending elsewhere, an
# inline struct) raises, and the caller asks the compiled decoder, whose
# answer (and error message) is then the one given.


class Unsure(Exception):
    """The interpreted decoder leaves this body to the compiled one."""


# bodies a version's decoder reads interpreted before it is compiled: a broker
# registration's compile (1.2 ms) costs what interpreting ~125 of them does
# (10 us each, 4 us compiled); a record type read more often pays ~0.1 ms more
INTERPRETED_USES = 16
_INTERPRETER_GIVES_UP = (Unsure, RecordDecodeError, IndexError, struct.error, ValueError,
                         OverflowError)


def interpreted(message: Message, version: int) -> Callable:
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
    """Reads one struct as :meth:`_Gen.struct_fn`'s code does: fields in wire
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
    generated code reads it (:meth:`_Gen.read_value`)."""
    nullable = version in f.nullable_range
    where = f"{label}.{f.name}"
    t = f.element_type
    if not f.is_array:
        if t in _FIXED:
            return _interpreted_fixed(t)
        if t in ("string", "bytes"):
            return _reader(t, flexible, nullable, where)
        raise Unsure   # an inline struct: no record has one; compile
    if t in _FIXED and flexible:
        fmt, size = _FIXED[t]
        return _fixed_array_reader(fmt, size, t == "uuid", nullable, where)
    if t in _FIXED:
        element = _interpreted_fixed(t)
    elif t in ("string", "bytes"):
        element = _reader(t, flexible, False, where)
    else:
        element = _interpreted_struct(f.fields, version, flexible, where)
    return _interpreted_array(element, flexible, nullable)


def _interpreted_fixed(t: str) -> Callable:
    """A fixed-width value's reader (its bytes are not checked against ``end``,
    as the generated code's ``struct`` groups do not check them)."""
    fmt, size = _FIXED[t]
    unpack = struct.Struct(">" + fmt).unpack_from
    if t == "uuid":
        return lambda buf, pos, end: (_UUIDS[unpack(buf, pos)[0]], pos + size)
    return lambda buf, pos, end: (unpack(buf, pos)[0], pos + size)


def _interpreted_array(element: Callable, flexible: bool, nullable: bool) -> Callable:
    """An array read element by element (:meth:`_Gen.read_array_general`)."""
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


# ---------------------------------------------------------------------------
# Shape-specialised decoding
# ---------------------------------------------------------------------------
#
# Most bodies of a record type look alike: a snapshot's PartitionRecords
# nearly all have 3 replicas, 3 in sync, none moving, 3 directories and no
# tagged fields. When a body holds only fixed-width values and arrays of them,
# its *shape* -- the sequence of its structural values: every array count and,
# in flexible versions, the tagged-field count and each tag and size -- fixes
# where every byte lies. A body of a known shape is then one ``struct`` call
# over the whole body and one dict display: for a PartitionRecord about 40%
# less time than the general decoder's walk. The general decoder stays the reference: a shape's
# code runs only when the body's size and every structural value match the
# shape exactly, and ``_layout`` admits only shapes whose bodies the general
# decoder reads in the very same way (one-byte counts, tags and sizes, known
# tags, sizes that fit, nulls where allowed), so it would take the very same
# path through the very same bytes; anything else goes to it unchanged.

_SHAPES = 8            # shapes one decoder tries, in the order learned
_LEARN_AFTER = 2       # sightings before a shape is compiled: one-offs never are
_LEARN_WALKS = 1024    # unmatched bodies examined (~10 us each) before learning stops for good
_SHAPE_ELEMENTS = 126  # longest array in a shape: the most a one-byte compact count holds


@dataclass
class _Plan:
    """What a shape can hold for one message version: ``body`` lists the
    untagged fields in wire order (each fixed-width or an array of
    fixed-width elements), ``tagged`` the tagged fields of that kind by tag
    (a body with any other tag is left to the general decoder)."""

    message: Message
    version: int
    flexible: bool
    body: list[Field]
    tagged: dict[int, Field]
    nullable: set[str]


def _plan(message: Message, version: int) -> _Plan | None:
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
        fixed = f.element_type in _FIXED   # a fixed-width value or an array of them
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
    return _Plan(message, version, flexible, body, tagged, nullable)


class _Layout:
    """Where everything lies in a body of one shape, as items of one
    ``struct`` format: ``fmt`` (one format code per tuple item), ``size``
    (bytes), ``key`` (the structural values in order: the shape itself),
    ``checks`` (tuple index and value of each structural item) and
    ``values`` (field name -> tuple index of its value and element count;
    count None for a scalar, negative for a null array)."""

    def __init__(self, plan: _Plan, structural: Callable):
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
            fmt, size = _FIXED[f.type]
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
        fmt, size = _FIXED[f.element_type]
        self.values[f.name] = (len(self.fmt), n)
        if n > 0:
            self.fmt += [fmt] * n
            self.size += size * n
        return True


def _layout(plan: _Plan, structural: Callable) -> _Layout | None:
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


class _Shapes:
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

    def __init__(self, gen: _Gen, plan: _Plan, general: Callable):
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
