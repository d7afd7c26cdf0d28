"""Record batch v2 (kraft-format.md sections 2-4): header, CRC-32C, iteration.

A segment, a snapshot and ``bootstrap.checkpoint`` are all a plain
concatenation of batches. :class:`BatchScanner` walks them the way Kafka's
``FileLogInputStream`` does: a batch that runs past the end of the file is a
torn tail (normal after an unclean shutdown) and ends the data, as does a
run of zero bytes (pre-allocated space); anything else that does not parse
is damage, reported as :class:`~metashell.errors.CorruptDataError` with the
file, byte position and offset. The caller chooses to stop at damage or to
skip the damaged batch and go on.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import crc32c as _crc32c

from ..errors import CorruptDataError

# Batch header, 61 bytes, big-endian (section 2.1):
HEADER = struct.Struct(
    ">q"   # 0  baseOffset: offset of the first record
    "i"    # 8  batchLength: bytes after this field (batch size = batchLength + 12)
    "i"    # 12 partitionLeaderEpoch: KRaft epoch of the writing leader (snapshot epoch in .checkpoint)
    "b"    # 16 magic: must be 2
    "I"    # 17 crc: CRC-32C of bytes [21, end of batch)
    "h"    # 21 attributes: codec bits 0-2, timestamp type bit 3, transactional 4, control 5, delete horizon 6
    "i"    # 23 lastOffsetDelta: last offset - baseOffset
    "q"    # 27 baseTimestamp: timestamp of the first record (ms)
    "q"    # 35 maxTimestamp: max record timestamp (ms); the append time for KRaft
    "q"    # 43 producerId: -1 in KRaft
    "h"    # 51 producerEpoch: -1 in KRaft
    "i"    # 53 baseSequence: -1 in KRaft
    "i"    # 57 recordsCount: records in the batch (before compression)
)
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12          # baseOffset + batchLength
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD  # 49: a batch holds at least its header
CRC_START = 21
PEEK = struct.Struct(">qiib")  # baseOffset, batchLength, epoch, magic: the first 17 bytes

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
ATTR_CODEC = 0x07
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20


def crc32c(data) -> int:
    return _crc32c.crc32c(data)


@dataclass(slots=True)
class BatchHeader:
    base_offset: int
    length: int
    epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int
    position: int  # byte position of the batch in its file

    @property
    def codec(self) -> int:
        return self.attributes & ATTR_CODEC

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & ATTR_LOG_APPEND_TIME)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def end(self) -> int:
        return self.position + self.length + LOG_OVERHEAD


class BatchScanner:
    """Iterates the batch headers of one buffer, validating framing and CRC.

    After iteration, ``end_reason`` says why it stopped: ``"end"`` (clean end
    of data), ``"torn"`` (a partial batch at the end), ``"zeros"`` (zero
    padding), ``"tail"`` (17 or fewer trailing bytes), or ``"corrupt"``
    (stopped at damage); ``end_position`` is where valid data ends and
    ``problems`` lists the damage that was skipped (``skip=True``).
    A consumer that read past the batch just yielded sets ``resume`` to
    where it stopped; the scan goes on from there.
    """

    def __init__(self, buf, path, *, verify_crc: bool = True, skip: bool = False,
                 start: int = 0, end: int | None = None):
        self.buf = buf
        self.path = path
        self.verify_crc = verify_crc
        self.skip = skip
        self.start = start
        self.stop = len(buf) if end is None else end
        self.end_reason: str | None = None
        self.end_position = start
        self.problems: list[CorruptDataError] = []
        self.resume = 0

    def _damage(self, pos: int, expected: str, offset: int | None) -> CorruptDataError:
        return CorruptDataError(self.path, pos, expected, offset)

    def __iter__(self):
        buf, stop = self.buf, self.stop
        pos = self.start
        view = memoryview(buf) if self.verify_crc else None
        while True:
            self.end_position = pos
            remaining = stop - pos
            if remaining <= 0:
                self.end_reason = "end"
                return
            if remaining <= 17:
                self.end_reason = "zeros" if not any(buf[pos:stop]) else "tail"
                return
            base_offset, length, _epoch, magic = PEEK.unpack_from(buf, pos)
            if length == 0 and base_offset == 0 and not any(buf[pos:min(stop, pos + 64)]):
                self.end_reason = "zeros"
                return
            if length < MIN_BATCH_LENGTH:
                err = self._damage(pos, f"a batch length of at least {MIN_BATCH_LENGTH} bytes, "
                                        f"found {length}", base_offset)
                # the length is unusable, so nothing after it can be found
                self.end_reason = "corrupt"
                if self.skip:
                    self.problems.append(err)
                    return
                raise err
            batch_end = pos + LOG_OVERHEAD + length
            if batch_end > stop and magic == 2:
                # a partly written batch: normal after an unclean shutdown
                self.end_reason = "torn"
                return
            if magic != 2:
                err = self._damage(pos, f"record batch magic 2, found {magic}"
                                   + (" (a legacy message set, never written to __cluster_metadata)"
                                      if magic in (0, 1) else ""),
                                   # with a wrong magic the offset field is not to be trusted
                                   base_offset if magic in (0, 1) else None)
                if self.skip and batch_end <= stop:
                    self.problems.append(err)
                    pos = batch_end
                    continue
                self.end_reason = "corrupt"
                if self.skip:
                    self.problems.append(err)
                    return
                raise err
            header = BatchHeader(*HEADER.unpack_from(buf, pos), pos)
            if self.verify_crc:
                actual = _crc32c.crc32c(view[pos + CRC_START:batch_end])
                if actual != header.crc:
                    err = self._damage(pos, f"batch CRC-32C {header.crc:#010x}, computed {actual:#010x}",
                                       base_offset)
                    if self.skip:
                        self.problems.append(err)
                        pos = batch_end
                        continue
                    self.end_reason = "corrupt"
                    raise err
            yield header
            pos = batch_end if batch_end >= self.resume else self.resume
