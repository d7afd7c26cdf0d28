"""Primitive encodings of the Kafka protocol (kraft-format.md section 1).

Readers take ``(buf, pos)`` and return ``(value, new_pos)``; ``buf`` may be
``bytes``, ``bytearray``, ``memoryview`` or an ``mmap``: anything that
indexes to ints. Writers append to a ``bytearray``. These sit on the hot
path, so the common one-byte case is handled before any loop.
"""

from __future__ import annotations

import base64
import binascii
import struct

from ..errors import RecordDecodeError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT32_PAIR = struct.Struct(">ii")   # a segment index entry; a response's size and correlation id
INT64_PAIR = struct.Struct(">qq")   # a UUID's two halves; a snapshot chunk's size and position

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def read_uvarint(buf, pos: int) -> tuple[int, int]:
    """Unsigned varint, at most 5 bytes, as Java's ``readUnsignedVarint``."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & 0xFFFFFFFF, pos
        shift += 7
        if shift > 28:
            raise RecordDecodeError("illegal varint: more than 5 bytes")


def read_varint(buf, pos: int) -> tuple[int, int]:
    """Zigzag-encoded signed varint (int32), at most 5 bytes."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    u, pos = read_uvarint(buf, pos)
    u &= 0xFFFFFFFF
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(buf, pos: int) -> tuple[int, int]:
    """Zigzag-encoded signed varlong (int64), at most 10 bytes."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    value = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 63:
            raise RecordDecodeError("illegal varlong: more than 10 bytes")
    value &= 0xFFFFFFFFFFFFFFFF
    return (value >> 1) ^ -(value & 1), pos


def _zigzag(u: int) -> int:
    return (u >> 1) ^ -(u & 1)


# Zigzag varints decoded by table lookup, for hot loops (CPython does not
# specialise &, |, ^ or shifts; a list index is cheap): a one-byte varint b
# is ZIGZAG1[b] (b < 0x80), a two-byte one b0 b1 is ZIGZAG2[b0][b1]
# (b0 >= 0x80, b1 < 0x80).
ZIGZAG1 = [_zigzag(b) for b in range(0x80)]
ZIGZAG2 = [None] * 0x80 + [[_zigzag((b0 & 0x7F) | (b1 << 7)) for b1 in range(0x80)]
                           for b0 in range(0x80, 0x100)]


def write_uvarint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    u = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)


class UuidText(dict):
    """16 raw bytes -> Kafka's UUID text (22 characters of URL-safe base64),
    memoised: a topic id repeats once per partition, a directory id once per
    replica. A dict whose ``__missing__`` converts, so a hit runs no Python
    at all; it starts over past a million entries."""

    def __missing__(self, raw: bytes) -> str:
        if len(raw) != 16:
            raise RecordDecodeError("uuid needs 16 bytes")
        if len(self) >= 1_000_000:
            self.clear()
        text = self[raw] = uuid_text(raw)
        return text


def uuid_text(raw: bytes) -> str:
    """16 raw bytes -> Kafka's UUID text, not memoised."""
    # binascii straight, not base64.urlsafe_b64encode (two Python calls
    # more): 180 ns instead of 670 per new id, -6% loading a snapshot
    return b2a_base64(raw, newline=False)[:22].translate(URLSAFE).decode("ascii")


b2a_base64 = binascii.b2a_base64
URLSAFE = bytes.maketrans(b"+/", b"-_")
UUID_TEXT = UuidText()   # the one memo: decoders, the engine and tools share it


def uuid_to_str(raw) -> str:
    """16 bytes (``bytes``, ``bytearray`` or ``memoryview``) -> Kafka's UUID text."""
    return UUID_TEXT[raw if type(raw) is bytes else bytes(raw)]


def uuid_from_str(text: str) -> bytes:
    """Kafka's base64 UUID text -> 16 bytes."""
    raw = base64.urlsafe_b64decode(text + "==")
    if len(raw) != 16:
        raise ValueError(f"not a Kafka UUID: {text!r}")
    return raw
