"""A record type's schema, and the codecs derived from it.

The record catalog (``catalog.py``) describes every metadata and control
record as a :class:`Message` made of :class:`~.fields.Field` objects, in the
spirit of Kafka's JSON schemas (kraft-format.md section 9). From one
description a message derives:

* a decoder per version (``codegen.compile_decoder``): Python source generated
  once and compiled, so the hot path is straight-line code with precompiled
  ``struct`` groups rather than an interpreter walking the schema for every
  record; where bodies vary only in array counts and tagged fields, the
  decoder also learns the common *shapes* at run time and reads a body of a
  known shape with a single ``struct`` call (``shapes.py``);
* before a version's decoder is worth compiling, the schema interpreted
  (``interpreter.py``);
* an encoder per version (``encoder.py``, interpreted: writing is not on a hot
  path);
* default values and JSON field names (``fields.py``).

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
from typing import Callable

from ..errors import RecordDecodeError
from .codegen import compile_decoder
from .encoder import encode_struct
from .fields import Field, Versions, struct_defaults
from .interpreter import INTERPRETED_USES, INTERPRETER_GIVES_UP, Unsure, interpreted


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
            fn = compile_decoder(self, version)
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
        except INTERPRETER_GIVES_UP:
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
        encode_struct(tuple(self.fields), version, self.is_flexible(version), data, out)
        return out
