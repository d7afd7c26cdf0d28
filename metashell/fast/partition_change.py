"""PartitionChangeRecord read straight from its bytes: the one module that
knows its layout for the fast path (the general path decodes it by its
schema, ``kraft/catalog.py``). It reads versions 0-2 (:data:`VERSIONS`);
any other version takes the general path. The value is (kraft-format.md,
PartitionChangeRecord v0-v2)::

    frame, apiKey, version          3 bytes (1, 5, 0-2)
    partitionId, topicId            4 + 16 (:data:`PARTITION_KEY`, as PartitionRecord's)
    tagged fields                   a uvarint count, then per field (in tag order)
                                    a uvarint tag, a uvarint size and the field:
      0 Isr                         compact array of int32 (null: unchanged)
      1 Leader                      int32 (-2: unchanged, -1: no leader)
      2 Replicas                    compact array of int32 (null: unchanged)
      3 RemovingReplicas, 4 AddingReplicas, 6 EligibleLeaderReplicas,
      7 LastKnownElr                compact arrays of int32
      5 LeaderRecoveryState         int8
      8 Directories (v1+)           compact array of uuid

Four readings of it, each for one use:

* :data:`PARTITION_KEY`: its partitionId and topicId, the key a deferred
  entry is filed by (:mod:`.reading`, :mod:`.change_batches`) and a lazy
  record's (:func:`record_key`, which the replay asks through
  :class:`~.replay_entries.EntryReplay`). Every version of both partition
  records opens its body with them, so this reading takes every version.
* :data:`EFFECT`, one regular expression over a whole record (its framing
  too) whose groups are an *effect*: the partition's key (partitionId and
  topicId as written), its topicId, the ISR's count + 1 (a byte), the
  leader's first byte (its sign), and the replicas' and directories'
  counts + 1. A group is empty (b"") where the record leaves the field as
  it was. ``findall`` over a batch's records gives every effect in one call
  (``summary`` over a log's pending changes, :mod:`.change_effects`; the
  entries of a batch of changes, :mod:`.change_batches`).
* :func:`skeleton`: the bytes the layout hangs on (the fields' tags and
  sizes, the arrays' counts), so that a batch is left unread only when each
  record is laid out as :data:`EFFECT` reads it (:func:`agrees` checks a
  record's effect against its plain decoding), :mod:`.change_batches`.
* :func:`change_counts`: a partition's ISR count and leader after a change
  that touches nothing else (``summary`` over a deferred change, the store).

What a change does is defined once, by ``replay/partition_generated.merge_change``;
each reading here is checked against it on every catalog version
(tests/unit/test_partition_change_definition.py).
"""

from __future__ import annotations

import re

import struct

from ..kraft.primitives import UUID_TEXT
from . import Decided
from .partition_runs import POSSESSIVE

# the layout above: PartitionChangeRecord v0-v2 (EFFECT matches no other version byte,
# change_counts checks it; skeleton reads the fields of records EFFECT matched)
VERSIONS = {"PartitionChangeRecord": Decided(reads=range(0, 3))}
_VERSION_BYTES = re.escape(bytes(VERSIONS["PartitionChangeRecord"].reads))
_LAST = VERSIONS["PartitionChangeRecord"].last

# A PartitionRecord's and a PartitionChangeRecord's body (after the frame header)
# opens with int32 partitionId and uuid topicId, in every version: their key.
PARTITION_KEY = struct.Struct(">i16s").unpack_from


def record_key(rec) -> "tuple[str, int] | None":
    """(topic id, partition id) of a PartitionRecord or PartitionChangeRecord:
    a lazy record's read from the first 20 bytes of its body, undecoded (a
    record filed under its partition is decoded only when folded), any
    other's from its fields; None when it cannot be decoded."""
    buf = rec._buf
    if buf is not None:
        b = rec._body
        if rec._end - b >= 20:
            pid, raw = PARTITION_KEY(buf, b)
            return UUID_TEXT[raw], pid
    d = rec.data
    return None if d is None else (d["topicId"], d["partitionId"])

# the fields of an effect
KEY, RAW, ISR, LEADER, REPLICAS, ADDING, DIRECTORIES = range(7)

_MAX_INTS = 31    # the largest array with a one-byte size: 1 + 4 * 31 = 125
_MAX_UUIDS = 7    # 1 + 16 * 7 = 113
# the pattern reads one way only: possessive repetitions (Python 3.11+) save the
# engine from keeping ways back; with the usual end of a change tried first (no
# fields after the leader): -40% time per match, -8% `summary` on the log dir
_ONCE = POSSESSIVE
_VARINT = rb"[\x80-\xff]{0,4}" + _ONCE + rb"[\x00-\x7f]"


def _array(width: int, most: int, group: bool) -> bytes:
    """A field's size and a compact array of ``width``-byte items; with
    ``group``, its count + 1 byte captured (null, 0, is not: it changes
    nothing). A one-byte group is one of the interpreter's shared bytes
    objects: nothing is made per record (-12% time per change)."""
    sized = b"|".join([rb"\x01\x01"] + [re.escape(bytes((1 + width * n, n + 1))) + rb".{%d}" % (width * n)
                                        for n in range(1, most + 1)])
    return rb"(?:\x01\x00|" + (rb"(?=.(.))" if group else b"") + rb"(?:" + sized + rb"))"


#: a PartitionChangeRecord, framing and value; groups: see the module's docstring
EFFECT = re.compile(
    _VARINT + rb"." + _VARINT + _VARINT         # length, attributes, timestamp and offset deltas
    + rb"\x01" + _VARINT                        # null key, value length
    + rb"\x01\x05[" + _VERSION_BYTES + rb"]"     # frame version, apiKey, version (VERSIONS)
    + rb"(.{4}(.{16}))"                         # partitionId, topicId
    + rb"(?:\x00\x00|[\x01-\x09]"               # no tagged fields, no headers; or their count
    + rb"(?:\x00" + _array(4, _MAX_INTS, True) + rb")?" + _ONCE        # 0 Isr
    + rb"(?:\x01\x04(?:\xff\xff\xff\xfe|(.).{3}))?" + _ONCE    # 1 Leader (-2: unchanged): its sign byte
    + rb"(?:\x00|"                              # no headers, and no more fields, or:
    + rb"(?:\x02" + _array(4, _MAX_INTS, True) + rb")?" + _ONCE        # 2 Replicas
    + rb"(?:\x03" + _array(4, _MAX_INTS, False) + rb")?" + _ONCE       # 3 RemovingReplicas
    + rb"(?:\x04" + _array(4, _MAX_INTS, True) + rb")?" + _ONCE        # 4 AddingReplicas
    + rb"(?:\x05\x01.)?" + _ONCE                              # 5 LeaderRecoveryState
    + rb"(?:\x06" + _array(4, _MAX_INTS, False) + rb")?" + _ONCE       # 6 EligibleLeaderReplicas
    + rb"(?:\x07" + _array(4, _MAX_INTS, False) + rb")?" + _ONCE       # 7 LastKnownElr
    + rb"(?:\x08" + _array(16, _MAX_UUIDS, True) + rb")?" + _ONCE      # 8 Directories
    + rb"\x00))",                               # no headers
    re.DOTALL)

_ARRAYS = frozenset((0, 2, 3, 4, 6, 7, 8))   # tags whose field is a compact array


def skeleton(buf, p: int, end: int) -> "bytes | None":
    """A pattern for the tagged fields at ``buf[p:end]`` (a change's value
    after its topicId) that pins every byte the layout hangs on (the count,
    each field's tag and size, an array's count) and nothing else; None if
    they are not laid out as :data:`EFFECT` reads them."""
    n = buf[p]
    if n > 9:
        return None
    out = [re.escape(bytes((n,)))]
    p += 1
    last = -1
    for _ in range(n):
        if p + 2 > end:
            return None
        tag, size = buf[p], buf[p + 1]
        if not last < tag <= 8 or size >= 0x80 or p + 2 + size > end:
            return None
        last = tag
        pinned = 3 if tag in _ARRAYS else 2   # an array's count byte too
        if size + 2 < pinned:
            return None
        out.append(re.escape(bytes(buf[p:p + pinned])) + rb".{%d}" % (size + 2 - pinned))
        p += 2 + size
    return b"".join(out) if p == end else None


def of_fields(pid: int, raw: bytes, d: dict) -> "tuple | None":
    """The effect of a change decoded to ``d`` (partitionId ``pid`` of the
    topic whose raw id is ``raw``), as :data:`EFFECT` reads it from bytes;
    None if an array is too long for its one count byte."""
    arrays = [d["isr"], d["replicas"], d["addingReplicas"], d.get("directories")]
    if any(a is not None and len(a) >= 0xFF for a in arrays):
        return None
    isr, replicas, adding, directories = (b"" if a is None else bytes((len(a) + 1,))
                                          for a in arrays)
    leader = d["leader"]
    return (pid.to_bytes(4, "big", signed=True) + raw, raw, isr,
            b"" if leader == -2 else leader.to_bytes(4, "big", signed=True)[:1], replicas, adding,
            directories)


def agrees(groups: tuple, d: dict) -> bool:
    """Whether an effect read by :data:`EFFECT` says what the plain
    decoder's fields ``d`` say."""
    return of_fields(int.from_bytes(groups[KEY][:4], "big", signed=True), groups[RAW], d) == groups


def change_counts(buf, p: int, end: int, isr: int, leader: int) -> "tuple[int, int] | None":
    """``(isr, leader)`` of a partition with ``isr`` in-sync replicas and
    ``leader`` after the PartitionChangeRecord whose value is ``buf[p:end]``
    (kraft-format.md: frame, apiKey, version, partitionId, topicId, then
    only tagged fields), or None unless it changes nothing but these, the
    recovery state and the replicas being added or removed, each field
    well formed (then it merges exactly so: a change of replicas or
    directories, or an ELR, is folded). Checked against
    ``replay/partition_generated.merge_change`` on every catalog version
    (tests/unit/test_partition_change_definition.py)."""
    if buf[p] != 1 or buf[p + 1] != 5 or buf[p + 2] > _LAST:
        return None
    p += 23                                  # frame header, partitionId, topicId
    n = buf[p]                               # tagged fields: a uvarint count
    if n >= 0x80:
        return None
    p += 1
    last = -1
    for _ in range(n):
        tag, size = buf[p], buf[p + 1]
        p += 2
        q = p + size
        if tag <= last or size >= 0x80 or q > end:
            return None
        last = tag
        if tag == 1:                         # Leader, int32: -2 leaves it
            if size != 4:
                return None
            value = int.from_bytes(buf[p:q], "big", signed=True)
            if value != -2:
                leader = value
        elif tag == 5:                       # LeaderRecoveryState, int8
            if size != 1:
                return None
        elif tag in (0, 3, 4):               # Isr, RemovingReplicas, AddingReplicas: []int32
            c = buf[p]
            # AddingReplicas set: the replication factor changes (folded)
            if c >= 0x80 or size != (1 + 4 * (c - 1) if c else 1) or (tag == 4 and c):
                return None
            if tag == 0 and c:               # null: unchanged
                isr = c - 1
        else:
            return None
        p = q
    return (isr, leader) if p == end else None
