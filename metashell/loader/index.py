"""The fast indexing pass: where every record is, what it is, what it is about.

Why this exists
---------------
Decoding a million-partition snapshot costs seconds and a lot of memory,
yet most questions touch a few entities: "every record of partition 3 of
topic X", "the records that changed broker 2", "which batches hold
topic Y". The replay engine (lazy partitions, ``changes``) and the Spark
pipeline (splitting a file into work by entity, then decoding only the
records each task needs) ask exactly that. :func:`index_file` answers it
in one pass over the file that verifies every batch CRC and reads each
record's frame but does not decode record bodies: for the common record
types the entity key sits at a fixed place at the start of the body
(``int32 partitionId, uuid topicId`` for PartitionRecord), so it is read
straight from the bytes.

What it stores
--------------
Columns (:mod:`array`), one entry per record, in file order:

``offsets``     int64  record offset
``types``       int16  metadata apiKey, or control type for control records
                       (-1 when the frame header cannot be read)
``positions``   int32  where the record starts, relative to its batch's
                       record section (the decompressed one, for a compressed
                       batch); see :meth:`Index.record`
``entities``    int32  entity id (an index into ``entity_keys``), -1 = none;
                       for partition records: the id of the partition's topic
``partitions``  int32  partition id for PartitionRecord / PartitionChangeRecord,
                       else -1

and one entry per batch: ``batch_positions`` (byte position in the file),
``batch_first`` (index of its first record), ``batch_attributes``.
``entity_keys`` is the list of distinct entity keys in first-seen order;
``topic_names`` maps topic ids to the names TopicRecords gave them;
``unknown`` maps the index of each record whose frame names no known record
type (unknown frame version, apiKey or version, unknown control type, null
value) to a one-line reason. Record bodies are not validated: a body that
does not decode shows up only when the record is decoded
(:meth:`Index.record`).

Entity keys are the replay engine's history keys (``replay/engine.py``):

=============================================  ===============================================
records                                        key
=============================================  ===============================================
Partition, PartitionChange                     ``("partition", topic_id, partition_id)``
Topic, RemoveTopic                             ``("topic", topic_id)``
RegisterBroker, UnregisterBroker, Fence,       ``("broker", broker_id)``
Unfence, BrokerRegistrationChange
RegisterController                             ``("controller", controller_id)``
Config                                         ``("config", "topic", name)`` (resource type as
                                               in the tree: topic, broker, broker_logger ...)
FeatureLevel, RemoveFeatureLevel               ``("feature", name)``
ClientQuota                                    ``("quota", ((entity_type, entity_name), ...))``
AccessControlEntry, RemoveAccessControlEntry   ``("acl", acl_id)``
UserScramCredential, RemoveUserScramCredential ``("scram", mechanism_name, user)``
DelegationToken, RemoveDelegationToken         ``("token", token_id)``
ProducerIds                                    ``("producerIds",)``
ZkMigrationState                               ``("zkMigrationState",)``
ClearElr                                       ``("clearElr", topic_name)`` ("" = every topic)
LeaderChange, KRaftVersion, Voters (control)   ``("quorum",)``
NoOp, transactions, snapshot header/footer     none
=============================================  ===============================================

Types outside the fast paths (rare ones, and every Kafka 2.8 frame-0
record) have their body decoded to find the key.

Cost: 22 bytes per record in the columns, plus the distinct keys and topic
names: the bench snapshot (1.1 M records, 100,000 topics x 10 partitions)
indexes into 58 MiB, at about a million records per second (``bench/decode.py``).
"""

from __future__ import annotations

import base64
import mmap
import struct
from array import array
from bisect import bisect_right
from collections import Counter, defaultdict
from itertools import islice
from pathlib import Path

from ..errors import CorruptDataError, RecordDecodeError
from . import catalog, enums
from .batch import ATTR_CODEC, ATTR_CONTROL, HEADER, HEADER_SIZE, LOG_OVERHEAD, BatchHeader, BatchScanner
from .compression import decompress
from .framing import frame, headers
from .reader import FileReader, FileSummary, _map, _why
from .records import decode_value
from .runs import PartitionRun, run_after

__all__ = ["Index", "index_file"]

_PARTITION_KEY = struct.Struct(">i16s").unpack_from   # PartitionRecord/PartitionChangeRecord body start
_INT32 = struct.Struct(">i").unpack_from
_CONTROL_KEY = struct.Struct(">hh").unpack_from

# metadata apiKeys the hot loop reads the key of straight from the bytes (frame 1)
_PARTITION = (3, 5)
_BROKER_IDS = frozenset((0, 1, 7, 8, 17))       # body starts with int32 broker id
_NO_ENTITY = frozenset((20, 23, 24, 25))         # NoOp, Begin/End/AbortTransaction
_SINGLETONS = {15: ("producerIds",), 21: ("zkMigrationState",)}
_QUORUM_CONTROL = frozenset((2, 5, 6))           # LeaderChange, KRaftVersion, Voters

# newest known version of each frame-1 apiKey, indexed by the apiKey's first
# byte; -1 = unknown (and for bytes >= 0x80, which start a longer varint)
_MAX_VERSION = [-1] * 256
for _k, _m in catalog.METADATA.items():
    _MAX_VERSION[_k] = _m.valid_range.hi if _m.valid_range.hi is not None else 32767
del _k, _m


def _uuid_text(raw: bytes) -> str:
    """UUID text without :func:`uuid_to_str`'s memo: an index holds each key once."""
    return base64.urlsafe_b64encode(raw)[:22].decode("ascii")


def _config_type(code: int) -> str:
    return enums.CONFIG_RESOURCE_TREE_NAMES.get(code, f"type_{code}")


def _scram_mechanism(code: int) -> str:
    return enums.SCRAM_MECHANISMS.get(code, f"UNKNOWN({code})") if code else "UNKNOWN"


def key_from_data(api_key: int, data: dict) -> tuple | None:
    """The entity key of a decoded metadata record (any frame, any layout)."""
    if api_key in (3, 5):
        return ("partition", data["topicId"], data["partitionId"])
    if api_key in (2, 9):
        return ("topic", data["topicId"])
    if api_key in (0, 1, 17):
        return ("broker", data["brokerId"])
    if api_key in (7, 8):
        return ("broker", data["id"])
    if api_key in (27, 29):
        return ("controller", data["controllerId"])
    if api_key == 4:
        return ("config", _config_type(data["resourceType"]), data["resourceName"])
    if api_key in (12, 16):
        return ("feature", data["name"])
    if api_key == 14:
        return ("quota", tuple(sorted((e["entityType"], e["entityName"]) for e in data["entity"])))
    if api_key in (18, 19):
        return ("acl", data["id"])
    if api_key in (11, 22):
        if "mechanism" not in data:   # the nested 3.0-3.4 layout: one record per user
            return ("scram", None, data["name"])
        return ("scram", _scram_mechanism(data["mechanism"]), data["name"])
    if api_key in (10, 26):
        return ("token", data["tokenId"])
    if api_key == 28:
        return ("clearElr", data["topicName"])
    return _SINGLETONS.get(api_key)


class Index:
    """The result of :func:`index_file`; see the module docstring."""

    def __init__(self, path):
        self.path = Path(path)
        self.offsets = array("q")
        self.types = array("h")
        self.positions = array("i")
        self.entities = array("i")
        self.partitions = array("i")
        self.batch_positions = array("q")
        self.batch_first = array("q")
        self.batch_attributes = array("h")
        self.entity_keys: list[tuple] = []
        self.topic_names: dict[str, str] = {}
        self.unknown: dict[int, str] = {}
        self.summary: FileSummary | None = None
        self.saw_frame0 = False
        self._key_ids: dict[tuple, int] = {}
        self._groups: dict | None = None
        self._reader: FileReader | None = None
        self._payload_cache: tuple[int, bytes] | None = None

    def __len__(self) -> int:
        return len(self.offsets)

    # -- per record --------------------------------------------------------------

    def batch_of(self, i: int) -> int:
        """Index of the batch holding record ``i``."""
        return bisect_right(self.batch_first, i) - 1

    def is_control(self, i: int) -> bool:
        return bool(self.batch_attributes[self.batch_of(i)] & ATTR_CONTROL)

    def kind(self, i: int) -> str:
        """``"metadata"``, ``"control"`` or ``"undecodable"`` (frame-level only)."""
        if i in self.unknown:
            return "undecodable"
        return "control" if self.is_control(i) else "metadata"

    def name(self, i: int) -> str:
        """The record type's name (current catalog names), as the reader names it."""
        t = self.types[i]
        if self.is_control(i):
            spec = catalog.CONTROL.get(t)
            if spec is not None and i not in self.unknown:
                return spec.name
            return f"ControlRecord({catalog.CONTROL_NAMES.get(t, t)})"
        if i in self.unknown:
            return "UnknownRecord"
        return catalog.METADATA[t].name

    def entity(self, i: int) -> tuple | None:
        """The entity key of record ``i``, or None."""
        e = self.entities[i]
        if e < 0:
            return None
        key = self.entity_keys[e]
        # partition records point at their topic's key (control types 3 and 5
        # never have a topic key)
        if key[0] == "topic" and self.types[i] in _PARTITION:
            return ("partition", key[1], self.partitions[i])
        return key

    # -- by entity -----------------------------------------------------------------

    def find(self, key: tuple) -> list[int]:
        """Indices of the records whose entity is ``key`` (in file order).
        The first call groups every record by entity (one pass)."""
        groups = self._grouped()
        if key and key[0] == "partition" and len(key) == 3:
            e = self._key_ids.get(("topic", key[1]))
            return [] if e is None else list(groups.get((e, key[2]), ()))
        e = self._key_ids.get(key)
        return [] if e is None else list(groups.get(e, ()))

    def offsets_of(self, key: tuple) -> list[int]:
        return [self.offsets[i] for i in self.find(key)]

    def partitions_of(self, topic_id: str) -> list[int]:
        """Partition ids seen for a topic, sorted."""
        e = self._key_ids.get(("topic", topic_id))
        if e is None:
            return []
        return sorted(g[1] for g in self._grouped() if type(g) is tuple and g[0] == e)

    def _grouped(self) -> dict:
        """Record indices by entity id, or by (topic entity id, partition id)
        for partition records."""
        if self._groups is None:
            groups: dict = defaultdict(list)
            ents, parts, types = self.entities, self.partitions, self.types
            is_topic = [k[0] == "topic" for k in self.entity_keys]
            for i in range(len(ents)):
                e = ents[i]
                if e >= 0:
                    t = types[i]
                    groups[(e, parts[i]) if (t == 3 or t == 5) and is_topic[e] else e].append(i)
            self._groups = dict(groups)
        return self._groups

    def counts(self) -> Counter:
        """Records by type name."""
        c: Counter = Counter()
        n = len(self.offsets)
        for b in range(len(self.batch_first)):
            lo = self.batch_first[b]
            hi = self.batch_first[b + 1] if b + 1 < len(self.batch_first) else n
            control = self.batch_attributes[b] & ATTR_CONTROL
            for i in range(lo, hi):
                if i in self.unknown:
                    c[self.name(i)] += 1
                elif control:
                    c[catalog.CONTROL[self.types[i]].name] += 1
                else:
                    c[catalog.METADATA[self.types[i]].name] += 1
        return c

    # -- decoding selected records ---------------------------------------------------

    def record(self, i: int, *, lazy: bool = False):
        """Decode record ``i`` (a :class:`~metashell.loader.records.Record`),
        reading only its batch header and its own bytes."""
        if self._reader is None:
            self._reader = FileReader(self.path)
            self._reader._saw_frame0 = self.saw_frame0
        reader = self._reader
        b = self.batch_of(i)
        bpos = self.batch_positions[b]
        h = BatchHeader(*HEADER.unpack_from(reader.buf, bpos), bpos)
        start = bpos + HEADER_SIZE
        end = bpos + LOG_OVERHEAD + h.length
        if h.codec:
            cached = self._payload_cache
            if cached is None or cached[0] != b:
                cached = self._payload_cache = (b, decompress(h.codec, bytes(reader.buf[start:end])))
            buf, start, end = cached[1], 0, len(cached[1])
        else:
            buf = reader.buf
        return reader.record_at(h, buf, start, start + self.positions[i], end, lazy=lazy)

    # -- building --------------------------------------------------------------------

    def _key_id(self, key: tuple | None) -> int:
        if key is None:
            return -1
        e = self._key_ids.get(key)
        if e is None:
            e = self._key_ids[key] = len(self.entity_keys)
            self.entity_keys.append(key)
        return e

    def _truncate(self, n: int) -> None:
        """Forget records from index ``n`` on (a damaged batch that was skipped)."""
        for col in (self.offsets, self.types, self.positions, self.entities, self.partitions):
            del col[n:]
        for i in [i for i in self.unknown if i >= n]:
            del self.unknown[i]


def index_file(path, *, skip_damage: bool = False, verify_crc: bool = True) -> Index:
    """Index one file (segment, snapshot or bootstrap.checkpoint).

    Framing and damage follow :class:`~metashell.loader.reader.FileReader`:
    a torn last batch or zero padding ends the data (``index.summary``);
    damage raises :class:`~metashell.errors.CorruptDataError`, or with
    ``skip_damage`` the damaged batch is left out and listed in
    ``index.summary.problems``.
    """
    idx = Index(path)
    buf = _map(idx.path)
    idx.summary = summary = FileSummary(str(idx.path), len(buf))
    scanner = BatchScanner(buf, idx.path, verify_crc=verify_crc, skip=skip_damage)
    maps: dict[str, dict] = {"topic": {}, "broker": {}, "controller": {}, "config": {}, "acl": {},
                             "runs": {}}
    dropper = _PageDropper(buf)
    try:
        for h in scanner:
            first = len(idx.offsets)
            start = h.position + HEADER_SIZE
            end = h.position + LOG_OVERHEAD + h.length
            data = buf
            try:
                if h.attributes & ATTR_CODEC:
                    try:
                        data = decompress(h.codec, bytes(buf[start:end]))
                    except ValueError as e:
                        raise CorruptDataError(idx.path, h.position, f"a valid compressed payload ({e})",
                                               h.base_offset) from None
                    start, end = 0, len(data)
                try:
                    if h.attributes & ATTR_CONTROL:
                        _scan_control_batch(idx, h, data, start, end)
                    else:
                        _scan_data_batch(idx, h, data, start, end, maps)
                except (IndexError, RecordDecodeError, UnicodeDecodeError, struct.error, OverflowError) as e:
                    raise CorruptDataError(idx.path, h.position,
                                           f"well-formed records in the batch ({_why(e)})",
                                           h.base_offset) from None
            except CorruptDataError as err:
                idx._truncate(first)
                if not skip_damage:
                    raise
                scanner.problems.append(err)
                continue
            idx.batch_positions.append(h.position)
            idx.batch_first.append(first)
            idx.batch_attributes.append(h.attributes)
            dropper.done_up_to(h.position + LOG_OVERHEAD + h.length)
    finally:
        summary.end_reason = scanner.end_reason or "end"
        summary.end_position = scanner.end_position
        summary.problems = scanner.problems
    return idx


class _PageDropper:
    """Drops the pages of a memory-mapped file that were already indexed.

    The pass reads the file once, front to back; without this every page it
    touched would stay resident (and count in the process's RSS) until the
    index is dropped. ``MADV_DONTNEED`` on a read-only file mapping only
    forgets the pages: touching them again reads them back from the page cache.
    """

    STEP = 16 * 1024 * 1024

    def __init__(self, buf):
        self.buf = buf if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED") else None
        self.dropped = 0

    def done_up_to(self, pos: int) -> None:
        if self.buf is None or pos - self.dropped < self.STEP:
            return
        stop = pos - pos % mmap.PAGESIZE
        try:
            self.buf.madvise(mmap.MADV_DONTNEED, self.dropped, stop - self.dropped)
        except (OSError, ValueError):
            self.buf = None
            return
        self.dropped = stop


def _scan_data_batch(idx: Index, h: BatchHeader, buf, pos: int, end: int, maps: dict) -> None:
    """Append the records of one data batch to the index columns: the hot loop.

    Each record's framing is read by :func:`~metashell.loader.framing.frame`,
    as the reader reads it. For the common types the
    entity key is then looked up by its raw bytes (``maps``: raw bytes ->
    entity id), so a key is decoded only the first time it is seen. After a
    partition record, the records that repeat its size and framing are taken
    as one run (:mod:`~metashell.loader.runs`).
    """
    payload = pos
    base = h.base_offset
    first = len(idx.offsets)
    records = iter(range(h.count))
    runs = maps["runs"]
    last_run = None   # the shape of the last run of partition records
    # list.append is far cheaper than array.append; the lists go into the
    # array columns in one step at the end of the batch
    offsets, types, positions, entities, partitions = [], [], [], [], []
    topics, brokers, configs = maps["topic"], maps["broker"], maps["config"]
    max_version = _MAX_VERSION
    partition_key = _PARTITION_KEY
    last_raw = last_topic = None
    for _ in records:
        rstart = pos
        pos, _, _, delta, _, klen, v, vlen, hpos = frame(buf, pos, end, payload)
        # the records Kafka writes have no key and no headers: a run may follow them
        plain = klen < 0 and hpos + 1 == pos and buf[hpos] == 0
        if not plain:
            headers(buf, hpos, pos, rstart, payload)
        frame_version = api = version = -1
        if vlen >= 3:
            frame_version, api, version = buf[v], buf[v + 1], buf[v + 2]
        offsets.append(base + delta)
        positions.append(rstart - payload)

        # the value: frame 1 with one-byte apiKey and a known version -> fast paths
        if vlen >= 4 and frame_version == 1 and version <= max_version[api]:
            body = v + 3
            if api == 3 or api == 5:       # PartitionRecord / PartitionChangeRecord
                if vlen >= 23:
                    pid, raw = partition_key(buf, body)
                    if raw == last_raw:    # a topic's partitions come one after another
                        e = last_topic
                    else:
                        e = topics.get(raw)
                        if e is None:
                            e = topics[raw] = idx._key_id(("topic", _uuid_text(raw)))
                        last_raw, last_topic = raw, e
                    types.append(api)
                    entities.append(e)
                    partitions.append(pid)
                    left = h.count - len(offsets)
                    if plain and left > 1:
                        # a topic's partitions: the same size and framing, again and again
                        run = last_run = run_after(runs, buf, rstart, v - rstart, pos - rstart)
                        n = _take_run(run, buf, pos, end, left, pos - payload, base, topics, idx,
                                      offsets, types, positions, entities, partitions)
                        if n:
                            pos += n * run.size
                            next(islice(records, n - 1, None), None)   # n records done
                    continue
            elif api == 20:                # NoOpRecord
                types.append(20)
                entities.append(-1)
                partitions.append(-1)
                continue
            elif api == 2:                 # TopicRecord: compact string name, then uuid
                n = buf[body]
                if 0 < n < 0x80 and vlen >= n + 20:
                    raw = buf[body + n:body + n + 16]
                    e = topics.get(raw)
                    if e is None:
                        e = topics[raw] = idx._key_id(("topic", _uuid_text(raw)))
                    idx.topic_names[idx.entity_keys[e][1]] = str(buf[body + 1:body + n], "utf-8",
                                                                 "replace")
                    types.append(2)
                    entities.append(e)
                    partitions.append(-1)
                    left = h.count - len(offsets)
                    if last_run is not None and left > 1:
                        # its partitions follow, most likely shaped as the last topic's
                        n = _take_run(last_run, buf, pos, end, left, pos - payload, base, topics, idx,
                                      offsets, types, positions, entities, partitions)
                        if n:
                            pos += n * last_run.size
                            next(islice(records, n - 1, None), None)
                    continue
            elif api == 4:                 # ConfigRecord: int8 type, compact string name
                n = buf[body + 1]
                if 0 < n < 0x80 and vlen >= n + 5:
                    raw = buf[body:body + 1 + n]
                    e = configs.get(raw)
                    if e is None:
                        rtype = raw[0] - 256 if raw[0] > 127 else raw[0]
                        e = configs[raw] = idx._key_id(
                            ("config", _config_type(rtype), str(raw[2:], "utf-8", "replace")))
                    types.append(4)
                    entities.append(e)
                    partitions.append(-1)
                    continue
            elif api in _BROKER_IDS or api == 27:   # int32 broker / controller id first
                if vlen >= 8:
                    raw = buf[body:body + 4]
                    m = brokers if api != 27 else maps["controller"]
                    e = m.get(raw)
                    if e is None:
                        e = m[raw] = idx._key_id(("broker" if api != 27 else "controller",
                                                  _INT32(raw)[0]))
                    types.append(api)
                    entities.append(e)
                    partitions.append(-1)
                    continue
            elif api == 9 or api == 18 or api == 19:   # RemoveTopic, ACLs: uuid first
                if vlen >= 20:
                    raw = buf[body:body + 16]
                    m = topics if api == 9 else maps["acl"]
                    e = m.get(raw)
                    if e is None:
                        e = m[raw] = idx._key_id(("topic" if api == 9 else "acl", _uuid_text(raw)))
                    types.append(api)
                    entities.append(e)
                    partitions.append(-1)
                    continue
            elif api in _NO_ENTITY:
                types.append(api)
                entities.append(-1)
                partitions.append(-1)
                continue
        # anything else: read the frame properly and decode the body for the key
        t, e, q = _slow(idx, buf, v, vlen, first + len(offsets) - 1)
        types.append(t)
        entities.append(e)
        partitions.append(q)
    if pos != end:
        raise RecordDecodeError(f"{end - pos} byte(s) left after the {h.count} records the batch declares")
    _extend(idx.offsets, offsets)
    _extend(idx.types, types)
    _extend(idx.positions, positions)
    _extend(idx.entities, entities)
    _extend(idx.partitions, partitions)


def _take_run(run: PartitionRun, buf, pos: int, end: int, limit: int, rel: int, base: int,
              topics: dict, idx: Index, offsets, types, positions, entities, partitions) -> int:
    """Index the run of partition records at ``pos`` (at most ``limit``;
    ``rel``: ``pos`` in the record section); returns how many records it took."""
    n = run.match(buf, pos, end, limit)
    if not n:
        return 0
    _, _, deltas, pids, raw = run.read(buf, pos, n)
    e = topics.get(raw)
    if e is None:   # a topic seen here first gets its id
        e = topics[raw] = idx._key_id(("topic", _uuid_text(raw)))
    size = run.size
    offsets.extend(map(base.__add__, deltas))
    positions.extend(range(rel, rel + size * n, size))
    types.extend([run.api] * n)
    entities.extend([e] * n)
    partitions.extend(pids)
    return n


def _extend(column: array, values: list) -> None:
    """Append ``values`` to an array column: packed in one ``struct`` call
    for a batch of any size (``array.extend`` converts item by item)."""
    n = len(values)
    if n > 8:
        column.frombytes(struct.pack(f"@{n}{column.typecode}", *values))
    else:
        column.extend(values)


def _scan_control_batch(idx: Index, h: BatchHeader, buf, pos: int, end: int) -> None:
    """The records of a control batch (a handful per file): type from the key."""
    payload = pos
    first = len(idx.offsets)
    offsets, types, positions, entities = [], [], [], []
    for _ in range(h.count):
        i = first + len(offsets)
        rend, _, _, delta, kstart, klen, _, vlen, hpos = frame(buf, pos, end, payload)
        headers(buf, hpos, rend, pos, payload)
        offsets.append(h.base_offset + delta)
        positions.append(pos - payload)
        pos = rend
        if klen < 4:
            types.append(-1)
            entities.append(-1)
            idx.unknown[i] = "control record key shorter than 4 bytes"
            continue
        version, ctype = _CONTROL_KEY(buf, kstart)
        types.append(ctype)
        if version < 0:
            idx.unknown[i] = "negative control key version"
        elif vlen < 0:
            idx.unknown[i] = "null control value"
        elif ctype not in catalog.CONTROL:
            idx.unknown[i] = f"unknown control record type {ctype}"
        quorum = ctype in _QUORUM_CONTROL and i not in idx.unknown
        entities.append(idx._key_id(("quorum",)) if quorum else -1)
    if pos != end:
        raise RecordDecodeError(f"{end - pos} byte(s) left after the {h.count} records the batch declares")
    _extend(idx.offsets, offsets)
    _extend(idx.types, types)
    _extend(idx.positions, positions)
    _extend(idx.entities, entities)
    _extend(idx.partitions, [-1] * len(offsets))


def _slow(idx: Index, buf, v: int, vlen: int, i: int) -> tuple[int, int, int]:
    """Record ``i``, a metadata record outside the fast paths: decode its
    value. Returns its (type, entity id, partition id) columns."""
    if vlen < 0:
        idx.unknown[i] = "data record has a null value"
        return -1, -1, -1
    rec = decode_value(bytes(buf[v:v + vlen]))
    api = rec.api_key
    api = api if api is not None and api <= 0x7FFF else -1
    if rec.frame == 0:
        idx.saw_frame0 = True
    key = None
    if rec.kind == "undecodable":
        if rec.name == "UnknownRecord":   # the frame header names no known type
            idx.unknown[i] = rec.error
    else:
        try:
            key = key_from_data(api, rec.data)
        except (KeyError, TypeError):
            key = None
    if key is not None and key[0] == "partition":
        return api, idx._key_id(("topic", key[1])), key[2]
    if api == 2 and key is not None:
        idx.topic_names[key[1]] = rec.data["name"]
    return api, idx._key_id(key), -1
