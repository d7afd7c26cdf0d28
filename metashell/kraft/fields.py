"""The fields of a record's schema, declared in the spirit of Kafka's JSON
schemas (kraft-format.md section 9): a :class:`Field` (its type, the versions
that hold it, nullable, tagged, its default) and the version ranges they name.

Only declarations: what a decoder or encoder makes of them is in
``codegen`` (the generated decoder), ``shapes``, ``interpreter`` and
``encoder``; ``schema.Message`` ties them to a record type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import primitives as P

UNKNOWN_TAGS = "_unknownTaggedFields"
MISSING: Any = object()

# Fixed-width types: struct format character and size.
FIXED = {
    "int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4), "int64": ("q", 8),
    "uint16": ("H", 2), "uint32": ("I", 4), "float64": ("d", 8),
    "bool": ("?", 1), "uuid": ("16s", 16),
}
PRIMITIVES = set(FIXED) | {"string", "bytes"}


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
