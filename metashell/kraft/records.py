"""Records as the loader yields them, and the metadata record frame.

A data-batch record value is ``uvarint frameVersion, uvarint apiKey,
uvarint version, body`` (kraft-format.md section 8); a control-batch record
has a 4-byte key ``int16 version, int16 type`` and a value encoded at the
fixed control schema version 0 (section 7).

A :class:`Record` may be *lazy*: the reader reads only the frame header and
keeps where the body is, and the body is decoded when ``data`` is first
asked for. The replay engine uses this to index a million partitions
without decoding them. A body that matches no layout turns the record into
``kind == "undecodable"`` with its raw bytes and a reason; it never raises.
"""

from __future__ import annotations

import struct
from typing import Callable

from ..errors import RecordDecodeError
from . import catalog
from .primitives import read_uvarint, write_uvarint

METADATA, CONTROL, UNDECODABLE = "metadata", "control", "undecodable"


class Record:
    """One record of a batch. See docs/architecture.md for the attributes.

    A million of these can be made in a second, so only what every record
    has is a slot set by ``__init__``; what most records leave at its
    default (frame 1, no key, no headers, attributes 0, nothing lazy, no
    error) is a class attribute, and a record that differs gets its own
    value in its ``__dict__`` (made only then)."""

    __slots__ = ("offset", "timestamp", "epoch", "kind", "name", "api_key", "version",
                 "position", "_data", "_spec", "__dict__")

    frame = 1
    layout = None
    error = None
    key = None
    headers = ()
    attributes = 0
    _buf = None       # lazy: the buffer, where the value starts, where its body starts and ends
    _vstart = 0
    _body = 0
    _end = 0
    _raw = None

    def __init__(self, offset: int, timestamp: int, epoch: int, kind: str, name: str,
                 api_key: int | None, version: int | None, data: dict | None = None,
                 position: int = -1):
        self.offset = offset
        self.timestamp = timestamp
        self.epoch = epoch
        self.kind = kind
        self.name = name
        self.api_key = api_key
        self.version = version
        self.position = position
        self._data = data
        self._spec = None

    # -- the decoded value -------------------------------------------------------

    @property
    def data(self) -> dict | None:
        """The decoded fields (JSON names), decoding a lazy record on first use.
        ``None`` when the record is undecodable."""
        if self._data is None and self._spec is not None:
            self._decode()
        return self._data

    def peek(self) -> dict | None:
        """The decoded fields without keeping them: for lazy records that are
        folded on demand (a million partitions must not stay decoded).
        Marks the record undecodable, and returns None, if the body is bad."""
        if self._data is not None or self._spec is None:
            return self._data
        if self._buf is None:
            return self.data
        try:
            data, _ = self._spec.decode(self.version, self._buf, self._body, self._end)
            return data
        except RecordDecodeError:
            return self.data  # full path: tries superseded layouts, or marks undecodable

    @property
    def spec(self):
        """The catalog ``Message`` the body was (or will be) decoded with."""
        return self._spec

    @property
    def raw(self) -> bytes | None:
        """The record value as stored: kept for undecodable records, and
        available for lazy records until they are decoded."""
        if self._raw is not None:
            return self._raw
        if self._buf is None:
            return None
        return bytes(self._buf[self._vstart:self._end])

    def _decode(self) -> None:
        spec, buf, body, end = self._spec, self._buf, self._body, self._end
        try:
            self._data, _ = spec.decode(self.version, buf, body, end)
            self._buf = None
            return
        except RecordDecodeError as first:
            for alt in catalog.SUPERSEDED.get(self.api_key, ()) if self.frame == 1 else ():
                if self.version in alt.valid_range:
                    try:
                        self._data, _ = alt.decode(self.version, buf, body, end)
                    except RecordDecodeError:
                        continue
                    self._spec = alt
                    self.layout = alt.layout
                    self._release()
                    return
            self.make_undecodable(str(first))

    def _release(self) -> None:
        self._buf = None

    def make_undecodable(self, reason: str) -> None:
        if self._raw is None and self._buf is not None:
            self._raw = bytes(self._buf[self._vstart:self._end])
        self._buf = None
        self.kind = UNDECODABLE
        self.error = reason
        self._data = None
        self._spec = None

    def __repr__(self) -> str:
        return f"<Record {self.offset} {self.name} v{self.version} {self.kind}>"


def decode_frame(buf, pos: int, end: int) -> tuple[int, int, int, int]:
    """``(frameVersion, apiKey, version, body_pos)`` of a metadata value."""
    frame, pos = read_uvarint(buf, pos)
    api_key, pos = read_uvarint(buf, pos)
    version, pos = read_uvarint(buf, pos)
    if pos > end:
        raise RecordDecodeError("value ends inside the frame header")
    return frame, api_key, version, pos


def resolve_metadata(frame: int, api_key: int, version: int):
    """The catalog message for a frame header, or a one-line reason it has none."""
    if frame == 1:
        spec = catalog.METADATA.get(api_key)
    elif frame == 0:
        spec = catalog.METADATA_2_8.get(api_key)
    else:
        return None, f"unknown metadata frame version {frame}"
    if spec is None:
        return None, f"unknown metadata record type (apiKey {api_key}, frame {frame})"
    if version not in spec.valid_range:
        return None, f"{spec.name} has no version {version} (known: {spec.valid})"
    return spec, None


def encode_value(spec, version: int, data: dict) -> bytes:
    """A metadata record value: frame header + body."""
    out = bytearray()
    write_uvarint(out, spec.frame)
    write_uvarint(out, spec.api_key)
    write_uvarint(out, version)
    spec.encode(version, data, out)
    return bytes(out)


def decode_value(value: bytes) -> Record:
    """Decode one metadata record value on its own (offset/time unknown)."""
    rec = Record(-1, -1, -1, METADATA, "", None, None)
    fill_metadata(rec, value, 0, len(value), lazy=False)
    return rec


class _Resolved(dict):
    """(frame, apiKey, version) -> (catalog message, its compiled decoder),
    for the one-byte frame headers every real record has; a header seen
    for the first time is resolved on the spot (``None`` if it names no
    known record: ``get`` then says so as fast as a hit)."""

    def __missing__(self, key: tuple):
        frame, api_key, version = key
        if frame >= 0x80 or api_key >= 0x80 or version >= 0x80:   # longer varints
            return None
        spec, _ = resolve_metadata(frame, api_key, version)
        if spec is None:
            if len(self) < 4096:   # garbage must not grow the table without bound
                self[key] = None
            return None
        hit = self[key] = (spec, self._compiled_when_called(key, spec, version))
        return hit

    def _compiled_when_called(self, key: tuple, spec, version: int) -> Callable:
        """A stand-in for ``spec``'s decoder of ``version`` that compiles it
        only once :meth:`.schema.Message.interpret` no longer answers, and
        puts it in its place here: a compile costs what decoding a few
        hundred records does, a deferring load never decodes the records it
        defers (TopicRecord, PartitionRecord: -7% of `ls` on a controller's
        log of 20,000 partitions), and a controller's log decodes its
        registrations and the few partition changes it learns change batches
        from only a handful of times. A caller that kept the stand-in calls
        the decoder through it."""
        decoder = None

        def decode(buf, pos, end):
            nonlocal decoder
            if decoder is None:
                data = spec.interpret(version, buf, pos, end)
                if data is not None:
                    return data, end
                decoder = spec.decoder(version)
                self[key] = (spec, decoder)
            return decoder(buf, pos, end)
        return decode

    get = dict.__getitem__


RESOLVED = _Resolved()
# what a compiled decoder raises on a body it does not take whole (the full
# decoding path then says why, or tries a superseded layout)
DECODE_ERRORS = (RecordDecodeError, IndexError, struct.error, UnicodeDecodeError, ValueError,
                 OverflowError)


def fill_metadata(rec: Record, buf, vstart: int, vend: int, lazy: bool) -> None:
    """Read the frame header of the value at ``buf[vstart:vend]`` into ``rec``
    and decode the body now (or later, if ``lazy``)."""
    rec._vstart = vstart
    # hot path: a one-byte frame version, apiKey and version already resolved
    if vend - vstart >= 3:
        frame = buf[vstart]
        api_key = buf[vstart + 1]
        version = buf[vstart + 2]
        if frame < 0x80 and api_key < 0x80 and version < 0x80:
            hit = RESOLVED.get((frame, api_key, version))
            if hit is not None:
                spec, decoder = hit
                rec.frame, rec.api_key, rec.version = frame, api_key, version
                rec.name = spec.name
                rec._spec = spec
                if not lazy:
                    # the compiled decoder straight away; anything unusual (a body
                    # that does not fit, a superseded layout) takes the full path
                    try:
                        data, end = decoder(buf, vstart + 3, vend)
                        if end == vend:
                            rec._data = data
                            return
                    except DECODE_ERRORS:
                        pass
                rec._buf = buf
                rec._body = vstart + 3
                rec._end = vend
                if not lazy:
                    rec._decode()
                return
    try:
        frame, api_key, version, body = decode_frame(buf, vstart, vend)
    except (RecordDecodeError, IndexError) as e:
        rec.name = "UnknownRecord"
        rec._raw = bytes(buf[vstart:vend])
        rec.make_undecodable(f"bad metadata frame header: {e}")
        return
    rec.frame, rec.api_key, rec.version = frame, api_key, version
    spec, reason = resolve_metadata(frame, api_key, version)
    if spec is None:
        rec.name = "UnknownRecord"
        rec._raw = bytes(buf[vstart:vend])
        rec.make_undecodable(reason)
        return
    rec.name = spec.name
    rec._spec = spec
    rec._buf = buf
    rec._body = body
    rec._end = vend
    if not lazy:
        rec._decode()
