"""The fake controller's replicated log: whole record batches with their
offsets and epochs, Kafka's leader-epoch cache, snapshots, and the
leader's answers to "what does this fetch position get"
(kraft-live-protocol.md section 1.3)."""

from __future__ import annotations

import bisect
import struct

from metashell.kraft.batch import HEADER as BATCH_HEADER
from metashell.kraft.batch import HEADER_SIZE, LOG_OVERHEAD

MAX_FETCH_BYTES = 8 * 1024 * 1024             # KafkaMetadataLog: maxFetchSizeInBytes (section 1.2)


class Batch:
    """A whole record batch of the leader's log and what the leader knows of it."""

    __slots__ = ("base", "last", "epoch", "data")

    def __init__(self, data: bytes):
        base, _length, epoch, _magic, _crc, _attrs, last_delta = BATCH_HEADER.unpack_from(data, 0)[:7]
        self.base, self.last, self.epoch, self.data = base, base + last_delta, epoch, data


def split_batches(data: bytes) -> list[bytes]:
    """Whole batches of a segment or snapshot file, by their length fields."""
    out, pos = [], 0
    while pos + HEADER_SIZE <= len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + LOG_OVERHEAD + length
        if length <= 0 or end > len(data):
            break
        out.append(data[pos:end])
        pos = end
    return out


def rebase(data: bytes, base_offset: int, epoch: int) -> bytes:
    """The same batch at another base offset and leader epoch; neither is
    covered by the CRC (kraft-format.md), so nothing else changes."""
    out = bytearray(data)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, epoch)
    return bytes(out)


class RaftLog:
    """The leader's replicated log: batches, an epoch cache, snapshots.

    ``validate(offset, epoch)`` is ``ReplicatedLog.validateOffsetAndEpoch``
    and ``end_offset_for_epoch`` is ``KafkaMetadataLog.endOffsetForEpoch``
    (section 1.3)."""

    def __init__(self):
        self.batches: list[Batch] = []
        self.bases: list[int] = []
        self.start_offset = 0
        self.snapshots: dict[tuple[int, int], bytes] = {}    # (end offset, epoch) -> file bytes

    @property
    def end_offset(self) -> int:
        return self.batches[-1].last + 1 if self.batches else self.start_offset

    def last_epoch(self) -> int:
        if self.batches:
            return self.batches[-1].epoch
        latest = self.latest_snapshot()
        return latest[1] if latest else 0

    def append(self, data: bytes) -> Batch:
        b = Batch(data)
        if b.base != self.end_offset:
            raise ValueError(f"batch at {b.base} does not follow the log end {self.end_offset}")
        self.batches.append(b)
        self.bases.append(b.base)
        return b

    def truncate(self, end_offset: int) -> None:
        """Drop every batch at or after ``end_offset`` (a batch boundary)."""
        i = bisect.bisect_left(self.bases, end_offset)
        if i < len(self.batches) and self.batches[i].base != end_offset or (
                i and self.batches[i - 1].last >= end_offset):
            raise ValueError(f"{end_offset} is not a batch boundary")
        del self.batches[i:], self.bases[i:]

    def earliest_snapshot(self):
        return min(self.snapshots) if self.snapshots else None

    def latest_snapshot(self, exclude_bootstrap: bool = False):
        ids = [s for s in self.snapshots if not (exclude_bootstrap and s == (0, 0))]
        return max(ids) if ids else None

    def epoch_entries(self) -> list[tuple[int, int]]:
        """(epoch, start offset) pairs: Kafka's leader-epoch checkpoint."""
        entries: list[tuple[int, int]] = []
        for b in self.batches:
            if not entries or b.epoch > entries[-1][0]:
                entries.append((b.epoch, b.base))
        return entries

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(end offset, epoch): ``LeaderEpochFileCache.endOffsetFor`` (the
        latest epoch ends at the log end; an older one where the next higher
        epoch starts, reported as the floor epoch, or as itself when it is
        older than every known epoch), then ``KafkaMetadataLog``'s fallback
        (log end, last fetched epoch) and its snapshot-epoch correction."""
        entries = self.epoch_entries()
        found = None
        if entries and entries[-1][0] == epoch:
            found = (self.end_offset, epoch)
        elif entries:
            higher = next((e for e in entries if e[0] > epoch), None)
            floor = [e for e in entries if e[0] <= epoch]
            if higher is not None:
                found = (higher[1], floor[-1][0] if floor else epoch)
        if found is None:
            return self.end_offset, self.last_epoch()
        earliest = self.earliest_snapshot()
        if earliest and found[0] == earliest[0] and found[1] < earliest[1]:
            return found[0], earliest[1]
        return found

    def validate(self, offset: int, epoch: int):
        """("valid", None) | ("snapshot", (end, epoch)) | ("diverging", (end, epoch))."""
        if self.start_offset == 0 and offset == 0:
            return "valid", None
        earliest = self.earliest_snapshot()
        if earliest and (offset < self.start_offset
                         or (offset == self.start_offset and epoch != earliest[1])
                         or epoch < earliest[1]):
            return "snapshot", self.latest_snapshot()
        end, end_epoch = self.end_offset_for_epoch(epoch)
        if end_epoch != epoch or end < offset:
            return "diverging", (end, end_epoch)
        return "valid", None

    def read(self, offset: int, max_bytes: int = MAX_FETCH_BYTES) -> bytes:
        """Bytes from the batch holding ``offset``, at most ``max_bytes``
        (the first batch always whole, ``minOneMessage``); the last batch
        may be cut off, as a Kafka log read cuts it (section 1.3)."""
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0 or offset >= self.end_offset:
            return b""
        parts, size = [], 0
        for b in self.batches[i:]:
            if parts and size + len(b.data) > max_bytes:
                parts.append(b.data[:max_bytes - size])
                break
            parts.append(b.data)
            size += len(b.data)
            if size >= max_bytes:
                break
        return b"".join(parts)


def corrupt_first_batch(records: bytes) -> bytes:
    """Flip one byte in the middle of the first record batch: a CRC
    mismatch on the wire, the framing left intact."""
    if len(records) < HEADER_SIZE:
        return records
    length = struct.unpack_from(">i", records, 8)[0]
    out = bytearray(records)
    out[min(len(out), LOG_OVERHEAD + length) - 1 - max(0, (length - HEADER_SIZE) // 2)] ^= 0xFF
    return bytes(out)
