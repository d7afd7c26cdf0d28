"""Writing records, batches and files the way Kafka does.

The same catalog that decodes records encodes them here. Tests and
benchmarks use this to make every fixture (the project ships no copies of
real Kafka files); ``encode_batch(batch)`` re-encodes a batch that was read,
which proves the decoder lossless where it produces the same bytes.

Kafka's KRaft writers (kraft-format.md section 2.3): magic 2, no compression,
CreateTime, producer id/epoch/sequence -1, record timestampDelta 0, null key
for data records, no headers; a snapshot starts with a control batch holding
SnapshotHeaderRecord (plus KRaftVersionRecord and VotersRecord when
kraft.version >= 1) and ends with one holding SnapshotFooterRecord; its
offsets start at 0 and every batch carries the snapshot epoch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable

from . import catalog
from .batch import ATTR_CONTROL, CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD, crc32c
from .compression import compress
from .primitives import INT16, write_varint, write_varlong
from .records import encode_value

MAX_BATCH_BYTES = 8 * 1024 * 1024  # KafkaRaftClient.MAX_BATCH_SIZE_BYTES


def _by_name() -> dict:
    names = {}
    for table in (catalog.METADATA, catalog.CONTROL):
        for spec in table.values():
            names[spec.name] = spec
    return names


_SPECS: dict | None = None


def spec_named(name: str):
    """The current catalog message called ``name`` (e.g. ``"TopicRecord"``)."""
    global _SPECS
    if _SPECS is None:
        _SPECS = _by_name()
    try:
        return _SPECS[name]
    except KeyError:
        raise KeyError(f"no record type named {name!r} in the catalog") from None


@dataclass
class Out:
    """A record to write: a metadata record (``spec``/``version``/``data``) or
    a control record (``control_type``), or raw ``value`` bytes as they are;
    neither ``spec`` nor ``value``: a null value."""

    spec: object = None
    version: int = 0
    data: dict = field(default_factory=dict)
    control_type: int | None = None
    value: bytes | None = None
    key: bytes | None = None
    headers: tuple = ()
    attributes: int = 0
    timestamp_delta: int = 0
    offset_delta: int | None = None

    def encoded_value(self) -> bytes | None:
        if self.value is not None:
            return self.value
        if self.spec is None:   # no value and nothing to encode: a null value
            return None
        if self.control_type is not None:
            return bytes(self.spec.encode(0, self.data))
        return encode_value(self.spec, self.version, self.data)

    def encoded_key(self) -> bytes | None:
        if self.key is not None or self.control_type is None:
            return self.key
        return INT16.pack(0) + INT16.pack(self.control_type)


def record(name: str, version: int | None = None, /, **data) -> Out:
    """A metadata record by name, at ``version`` (default: the newest).
    ``name`` and ``version`` are positional-only, so records with fields
    called ``name`` or ``version`` (TopicRecord, FeatureLevelRecord ...) can
    pass them as keywords."""
    spec = spec_named(name)
    if version is None:
        version = spec.valid_range.hi if spec.valid_range.hi is not None else spec.valid_range.lo
    return Out(spec=spec, version=version, data=data)


def control(name: str, /, **data) -> Out:
    spec = spec_named(name)
    return Out(spec=spec, control_type=spec.api_key, data={"version": 0, **data})


def encode_records(records: Iterable[Out]) -> tuple[bytes, int]:
    """The record section of a batch, and the number of records."""
    out = bytearray()
    n = 0
    for i, r in enumerate(records):
        body = bytearray()
        body.append(r.attributes)
        write_varlong(body, r.timestamp_delta)
        write_varint(body, i if r.offset_delta is None else r.offset_delta)
        key = r.encoded_key()
        if key is None:
            body.append(1)
        else:
            write_varint(body, len(key))
            body += key
        value = r.encoded_value()
        if value is None:
            body.append(1)
        else:
            write_varint(body, len(value))
            body += value
        write_varint(body, len(r.headers))
        for hk, hv in r.headers:
            hkb = hk.encode("utf-8")
            write_varint(body, len(hkb))
            body += hkb
            if hv is None:
                body.append(1)
            else:
                write_varint(body, len(hv))
                body += hv
        write_varint(out, len(body))
        out += body
        n = i + 1
    return bytes(out), n


def build_batch(base_offset: int, payload: bytes, count: int, *, epoch: int = 0,
                base_timestamp: int = 0, max_timestamp: int | None = None,
                attributes: int = 0, last_offset_delta: int | None = None,
                producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1) -> bytes:
    """A whole batch around an (already compressed, if so flagged) record section."""
    codec = attributes & 0x07
    if codec:
        payload = compress(codec, payload)
    length = HEADER_SIZE - LOG_OVERHEAD + len(payload)
    header = bytearray(HEADER.pack(
        base_offset, length, epoch, 2, 0, attributes,
        count - 1 if last_offset_delta is None else last_offset_delta,
        base_timestamp, base_timestamp if max_timestamp is None else max_timestamp,
        producer_id, producer_epoch, base_sequence, count))
    batch = header + payload
    crc = crc32c(memoryview(batch)[CRC_START:])
    batch[17:21] = crc.to_bytes(4, "big")
    return bytes(batch)


def encode_batch(batch) -> bytes:
    """Re-encode a :class:`~metashell.loader.reader.Batch` that was read."""
    h = batch.header
    outs = []
    for rec in batch.records:
        value = rec.raw if rec.kind == "undecodable" else None
        o = Out(spec=rec.spec, version=rec.version or 0, data=rec.data or {},
                control_type=rec.api_key if rec.kind == "control" else None, value=value,
                key=rec.key, headers=rec.headers, attributes=rec.attributes,
                timestamp_delta=rec.timestamp - h.base_timestamp,
                offset_delta=rec.offset - h.base_offset)
        outs.append(o)
    payload, count = encode_records(outs)
    return build_batch(h.base_offset, payload, count, epoch=h.epoch, base_timestamp=h.base_timestamp,
                       max_timestamp=h.max_timestamp, attributes=h.attributes,
                       last_offset_delta=h.last_offset_delta, producer_id=h.producer_id,
                       producer_epoch=h.producer_epoch, base_sequence=h.base_sequence)


class LogWriter:
    """Appends batches with consecutive offsets into one buffer: a segment
    (``base_offset`` = the segment's first offset) or a snapshot (0)."""

    def __init__(self, base_offset: int = 0, epoch: int = 0, timestamp: int = 1_700_000_000_000,
                 codec: int = 0):
        self.next_offset = base_offset
        self.epoch = epoch
        self.timestamp = timestamp
        self.codec = codec
        self.parts: list[bytes] = []

    def batch(self, records: list[Out], *, timestamp: int | None = None, epoch: int | None = None,
              codec: int | None = None, control: bool = False) -> int:
        """Append one batch; returns its base offset."""
        base = self.next_offset
        payload, count = encode_records(records)
        attributes = (self.codec if codec is None else codec) | (ATTR_CONTROL if control else 0)
        ts = self.timestamp if timestamp is None else timestamp
        self.parts.append(build_batch(base, payload, count, epoch=self.epoch if epoch is None else epoch,
                                      base_timestamp=ts, attributes=attributes))
        self.next_offset = base + count
        return base

    def records(self, records: Iterable[Out], *, per_batch: int = 1000, **kw) -> None:
        """Append many metadata records, ``per_batch`` to a batch."""
        chunk: list[Out] = []
        for r in records:
            chunk.append(r)
            if len(chunk) >= per_batch:
                self.batch(chunk, **kw)
                chunk = []
        if chunk:
            self.batch(chunk, **kw)

    def leader_change(self, leader_id: int, voters: list[int], *, epoch: int | None = None,
                      timestamp: int | None = None) -> int:
        if epoch is not None:
            self.epoch = epoch
        vs = [{"voterId": v} for v in voters]
        return self.batch([control("LeaderChangeMessage", leaderId=leader_id, voters=vs,
                                   grantingVoters=vs)], control=True, timestamp=timestamp)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)

    def write(self, path) -> None:
        write_file(path, self.getvalue())


def snapshot_bytes(records: Iterable[Out], *, epoch: int = 1, timestamp: int = 1_700_000_000_000,
                   last_contained_timestamp: int | None = None, kraft_version: int | None = None,
                   voters: list[dict] | None = None, per_batch: int = 1000, codec: int = 0) -> bytes:
    """A complete snapshot (or ``bootstrap.checkpoint`` with epoch 0 and
    ``last_contained_timestamp=0``): header batch, data batches, footer batch."""
    w = LogWriter(0, epoch, timestamp, codec)
    head = [control("SnapshotHeaderRecord",
                    lastContainedLogTimestamp=timestamp if last_contained_timestamp is None
                    else last_contained_timestamp)]
    if kraft_version is not None:
        head.append(control("KRaftVersionRecord", kRaftVersion=kraft_version))
        if voters is not None:
            head.append(control("VotersRecord", voters=voters))
    w.batch(head, control=True, codec=0)
    w.records(records, per_batch=per_batch)
    w.batch([control("SnapshotFooterRecord")], control=True, codec=0)
    return w.getvalue()


def snapshot_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}.log"


def write_file(path, data: bytes) -> None:
    """Write a whole file atomically (temp file + rename), as Kafka does."""
    path = os.fspath(path)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
