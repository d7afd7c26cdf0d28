"""Decoder generation: the Python source of one function per struct of a
message version, compiled once (``compile_decoder``, the entry point; the
source is kept on the function as ``__source__``), behind the shapes it
learns (``shapes.py``) where the version's layout allows any.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from ..errors import RecordDecodeError
from . import primitives as P
from .fields import FIXED, UNKNOWN_TAGS, Field
from .readers import (SMALL_ARRAY, UUIDS, array_unpackers, counted_unpackers, deep_copy,
                      fixed_array_reader, var_reader)
from .shapes import Shapes, shape_plan


class _Gen:
    """Emits the source of one decoder function per struct.

    The generated code keeps every field in a local variable and builds the
    dict with one display at the end (in schema order); fixed-width runs are
    read with one precompiled ``struct`` call, strings and arrays inline with
    the one-byte varint case first, arrays of fixed-width elements with a
    precompiled ``struct`` per small element count, and UUID text from a
    memo (a dict whose ``__missing__`` converts, so a hit never runs Python).
    """

    def __init__(self, message):
        self.message = message
        self.ns: dict[str, Any] = {
            "_uv": P.read_uvarint, "_UU": UUIDS, "_UUget": UUIDS.__getitem__, "_E": RecordDecodeError,
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
            if f.type in FIXED:
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
        fmt = ">" + "".join(FIXED[f.type][0] for f in seq)
        size = sum(FIXED[f.type][1] for f in seq)
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
        if t in FIXED:
            fmt, size = FIXED[t]
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
        shared reader (:func:`var_reader`: the same steps, and a third less
        source to compile per decoder)."""
        if flexible:
            quick = "str(buf[pos + 1:stop], 'utf-8')" if t == "string" else "bytes(buf[pos + 1:stop])"
            other = self.const(var_reader(t, True, nullable, where))
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
        if not flexible or et not in FIXED:
            return self.read_array_general(f, version, flexible, nullable, target, where, end)
        # the common case first: a one-byte count of 0 .. SMALL_ARRAY - 2 elements;
        # any other (null, a longer count) by a shared reader (a third less source to compile)
        fmt, size = FIXED[et]
        other = self.const(fixed_array_reader(fmt, size, et == "uuid", nullable, where))
        table = self.const(counted_unpackers(fmt))
        skip = self.const([1 + size * (n - 1) if n else 0 for n in range(SMALL_ARRAY)])
        read = f"{table}[n](buf, pos + 1)"
        value = f"list(map(_UUget, {read}))" if et == "uuid" else f"list({read})"
        return ["n = buf[pos]",
                f"if 1 < n < {SMALL_ARRAY}:",
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
        if et in FIXED:
            fmt, size = FIXED[et]
            table = self.const(array_unpackers(fmt))
            many = f"{fmt!r} * n" if et == "uuid" else f"str(n) + {fmt!r}"   # '16s' repeats
            read = (f"({table}[n](buf, pos) if n < {SMALL_ARRAY} "
                    f"else _unpack('>' + {many}, buf, pos))")
            if et == "uuid":
                L += [f"    {target} = list(map(_UUget, {read}))"]
            else:
                L += [f"    {target} = list({read})"]
            L += [f"    pos += {size} * n"]
        elif et in ("string", "bytes"):
            fn = self.const(var_reader(et, flexible, False, where))
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


def compile_decoder(message, version: int) -> Callable:
    """The decoder of ``message`` (a :class:`~.schema.Message`) at ``version``:
    the generated general decoder, behind a shape cache when the version's
    layout allows one."""
    gen = _Gen(message)
    gen.ns["_copy"] = deep_copy
    top = gen.struct_fn(tuple(message.fields), version, message.is_flexible(version), message.name)
    source = "\n\n".join(gen.functions)
    code = compile(source, f"<decoder {message.name} v{version}>", "exec")
    exec(code, gen.ns)
    fn = gen.ns[top]
    fn.__source__ = source
    plan = shape_plan(message, version)
    return fn if plan is None else Shapes(gen, plan, fn).entry
