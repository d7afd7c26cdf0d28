"""Shared helpers for the loader tests (no tests here)."""

from __future__ import annotations

import struct

from metashell.kraft.batch import CRC_START, HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH, crc32c


def fix_crcs(data: bytes) -> bytes:
    """Recompute the CRC of every batch whose framing still parses, so that
    damage made on purpose reaches the record parser instead of the CRC check."""
    out = bytearray(data)
    pos = 0
    while pos + HEADER_SIZE <= len(out):
        length = struct.unpack_from(">i", out, pos + 8)[0]
        end = pos + LOG_OVERHEAD + length
        if length < MIN_BATCH_LENGTH or end > len(out):
            break
        struct.pack_into(">I", out, pos + 17, crc32c(bytes(out[pos + CRC_START:end])))
        pos = end
    return bytes(out)
