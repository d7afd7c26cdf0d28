"""Batch compression codecs (kraft-format.md section 4).

A record batch's attributes name a codec (bits 0-2); when it is not 0, the
bytes after the 61-byte header are one compressed stream holding the records.
KRaft controllers have never compressed metadata batches upstream, but the
batch format allows it, so a faithful reader handles every codec:

===  ======  ================================================================
id   codec   library and why
===  ======  ================================================================
0    none    nothing to do.
1    gzip    stdlib ``zlib`` (``wbits=31``): the gzip container, incremental
             inflate with ``max_length`` so output is bounded; no dependency.
2    snappy  ``cramjam.snappy`` raw blocks. Kafka uses snappy-java's *xerial*
             framing, which no Python library implements; it is a thin
             container (16-byte header, then int32-length-prefixed raw
             blocks), so it is parsed here and each raw block goes to
             cramjam, whose ``decompress_raw_len`` reads a block's declared
             size *before* inflating it (bomb check per block).
3    lz4     ``lz4.frame`` (python-lz4, the reference C library): Kafka writes
             a standard LZ4 frame; ``LZ4FrameDecompressor`` takes
             ``max_length`` for bounded streaming output.
4    zstd    ``zstandard`` (python-zstandard, the reference C library).
             zstd-jni writes frames without a content size, sometimes several
             back to back, so one-shot ``decompress()`` cannot be used. The
             frame and block headers are walked here (cheap, no inflating) to
             find frame boundaries and detect truncation, and each frame is
             fed to a ``decompressobj`` one block at a time: a zstd block
             inflates to at most 128 KiB, so output is bounded per call.
===  ======  ================================================================

Errors: an unknown codec id raises ``ValueError("unknown compression codec
N")``; a corrupt, truncated or oversized stream raises ``ValueError`` with a
one-line message starting with the codec name (``"zstd: ..."``). Callers wrap
these into :class:`~metashell.errors.CorruptDataError` with file and position.

Decompression-bomb protection: ``decompress`` never produces more than
``max_size`` bytes (default 64 MiB; a KRaft batch is at most 8 MiB). Every
codec inflates incrementally and stops with ``ValueError`` as soon as the
limit would be exceeded; memory use stays within ``max_size`` plus one chunk.

Concatenated streams of the same codec (gzip members, LZ4 frames, zstd frames,
xerial streams) are accepted and their outputs joined. Any other bytes after
the end of the stream are reported as corruption: Kafka never writes them, and
the batch CRC already vouches for every compressed byte.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from .primitives import INT32

__all__ = [
    "NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD", "CODEC_NAMES", "DEFAULT_MAX_SIZE",
    "codec_name", "compress", "decompress",
]

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

DEFAULT_MAX_SIZE = 64 * 1024 * 1024

#: Output produced per incremental decompression call.
_CHUNK = 256 * 1024
#: Input fed per call where the library copies what it has not consumed.
_IN_PIECE = 64 * 1024


# xerial snappy-java framing (section 4.1)
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + INT32.pack(1) + INT32.pack(1)
XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size, used by Kafka

# LZ4 frame (section 4.2)
LZ4_MAGIC = b"\x04\x22\x4d\x18"
LZ4_BLOCK_SIZE = lz4.frame.BLOCKSIZE_MAX64KB

# zstd frame format (RFC 8878)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_MAX_BLOCK = 128 * 1024
ZSTD_LEVEL = 3  # zstd-jni / Kafka default level

GZIP_MAGIC = b"\x1f\x8b"


def codec_name(codec: int) -> str:
    """Name of a codec id (``"gzip"``); raises ValueError for unknown ids."""
    try:
        return CODEC_NAMES[codec]
    except (KeyError, TypeError):
        raise ValueError(f"unknown compression codec {codec}") from None


class _Budget:
    """Counts produced bytes and stops at ``max_size``."""

    __slots__ = ("name", "limit", "used", "parts")

    def __init__(self, name: str, limit: int):
        self.name = name
        self.limit = limit
        self.used = 0
        self.parts: list[bytes] = []

    @property
    def left(self) -> int:
        return self.limit - self.used

    def check(self, size: int) -> None:
        if self.used + size > self.limit:
            raise ValueError(
                f"{self.name}: decompressed data exceeds the limit of {self.limit} bytes")

    def add(self, chunk) -> None:
        self.check(len(chunk))
        self.used += len(chunk)
        self.parts.append(chunk)

    def result(self) -> bytes:
        return b"".join(self.parts)


# ---------------------------------------------------------------------------
# public API

def decompress(codec: int, data, max_size: int = DEFAULT_MAX_SIZE) -> bytes:
    """Decompress one batch's records section.

    ``data`` is any bytes-like object (``bytes``, ``memoryview`` of an mmap …).
    Raises ``ValueError`` for an unknown codec, a corrupt or truncated stream,
    or output larger than ``max_size`` bytes.
    """
    name = codec_name(codec)
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    if codec == NONE:
        return bytes(view)
    if len(view) == 0:
        raise ValueError(f"{name}: empty stream")
    budget = _Budget(name, max_size)
    if codec == GZIP:
        _gunzip(view, budget)
    elif codec == SNAPPY:
        _unsnappy(view, budget)
    elif codec == LZ4:
        _unlz4(view, budget)
    else:
        _unzstd(view, budget)
    return budget.result()


def compress(codec: int, data) -> bytes:
    """Compress a records section the way Kafka's producer side frames it.

    gzip: one gzip member (mtime 0, no name, as Java's ``GZIPOutputStream``);
    snappy: xerial framing, 32 KiB uncompressed per chunk; lz4: one frame,
    64 KiB independent blocks, no checksums, no content size (FLG 0x60,
    BD 0x40); zstd: one frame without content size, level 3.
    """
    codec_name(codec)
    data = bytes(data)
    if codec == NONE:
        return data
    if codec == GZIP:
        return _gzip(data)
    if codec == SNAPPY:
        out = bytearray(XERIAL_HEADER)
        for i in range(0, len(data), XERIAL_BLOCK_SIZE):
            block = bytes(cramjam.snappy.compress_raw(data[i:i + XERIAL_BLOCK_SIZE]))
            out += INT32.pack(len(block))
            out += block
        return bytes(out)
    if codec == LZ4:
        return lz4.frame.compress(
            data, block_size=LZ4_BLOCK_SIZE, block_linked=False,
            content_checksum=False, block_checksum=False, store_size=False)
    cobj = zstandard.ZstdCompressor(
        level=ZSTD_LEVEL, write_content_size=False, write_checksum=False).compressobj()
    return cobj.compress(data) + cobj.flush()


# ---------------------------------------------------------------------------
# gzip

def _gzip(data: bytes) -> bytes:
    # Java GZIPOutputStream header: magic, CM=8, FLG=0, MTIME=0, XFL=0, OS=255
    comp = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = comp.compress(data) + comp.flush()
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + trailer


def _gunzip(view, budget: _Budget) -> None:
    # Input is fed in pieces so that zlib's ``unconsumed_tail`` (a copy) stays
    # small; output is drained in chunks of at most _CHUNK bytes.
    rest = view
    while True:
        if bytes(rest[:2]) != GZIP_MAGIC:
            raise ValueError("gzip: not a gzip stream (bad magic)")
        d = zlib.decompressobj(31)
        pos = 0
        try:
            while not d.eof:
                if pos >= len(rest):
                    raise ValueError("gzip: truncated stream")
                buf = rest[pos:pos + _IN_PIECE]
                pos += len(buf)
                while True:
                    limit = min(_CHUNK, budget.left + 1)
                    chunk = d.decompress(buf, limit)
                    budget.add(chunk)
                    buf = d.unconsumed_tail
                    if d.eof or (not buf and len(chunk) < limit):
                        break
        except zlib.error as e:
            raise ValueError(f"gzip: corrupt stream ({_one_line(e)})") from None
        tail = d.unused_data
        rest = tail + bytes(rest[pos:]) if tail else rest[pos:]
        if not rest:
            return
        if bytes(rest[:2]) != GZIP_MAGIC:
            raise ValueError(
                f"gzip: {len(rest)} unexpected bytes after the end of the stream")


# ---------------------------------------------------------------------------
# snappy (xerial framing)

def _unsnappy(view, budget: _Budget) -> None:
    if len(view) < len(XERIAL_HEADER) or bytes(view[:8]) != XERIAL_MAGIC:
        # snappy-java: anything without the xerial header is one raw block
        _snappy_block(view, budget, "raw snappy block")
        return
    pos = 0
    n = len(view)
    while pos < n:
        if bytes(view[pos:pos + 4]) == XERIAL_MAGIC[:4]:
            # (another) xerial stream header
            if n - pos < len(XERIAL_HEADER) or bytes(view[pos:pos + 8]) != XERIAL_MAGIC:
                raise ValueError(f"snappy: truncated or bad xerial header at byte {pos}")
            pos += len(XERIAL_HEADER)
            continue
        if n - pos < 4:
            raise ValueError(f"snappy: truncated chunk length at byte {pos}")
        (length,) = INT32.unpack_from(view, pos)
        if length < 0:
            raise ValueError(f"snappy: negative chunk length {length} at byte {pos}")
        start = pos + 4
        if start + length > n:
            raise ValueError(
                f"snappy: chunk at byte {pos} declares {length} bytes, "
                f"only {n - start} left")
        if length:
            _snappy_block(view[start:start + length], budget, f"chunk at byte {pos}")
        pos = start + length


def _snappy_block(block, budget: _Budget, what: str) -> None:
    try:
        size = cramjam.snappy.decompress_raw_len(block)
    except Exception as e:  # cramjam.DecompressionError
        raise ValueError(f"snappy: corrupt {what} ({_one_line(e)})") from None
    budget.check(size)
    try:
        out = bytes(cramjam.snappy.decompress_raw(block))
    except Exception as e:
        raise ValueError(f"snappy: corrupt {what} ({_one_line(e)})") from None
    if len(out) != size:
        raise ValueError(f"snappy: corrupt {what} (declared {size} bytes, got {len(out)})")
    budget.add(out)


# ---------------------------------------------------------------------------
# lz4

def _is_lz4_frame(buf) -> bool:
    head = bytes(buf[:4])
    return head == LZ4_MAGIC or (
        len(head) == 4 and head[1:] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50)


def _unlz4(view, budget: _Budget) -> None:
    rest = view
    while True:
        if not _is_lz4_frame(rest):
            raise ValueError("lz4: not an LZ4 frame (bad magic)")
        d = lz4.frame.LZ4FrameDecompressor()
        buf = rest
        try:
            while True:
                chunk = d.decompress(buf, max_length=min(_CHUNK, budget.left + 1))
                buf = b""
                budget.add(chunk)
                if d.eof:
                    break
                if d.needs_input:
                    raise ValueError("lz4: truncated frame")
        except RuntimeError as e:
            raise ValueError(f"lz4: corrupt frame ({_one_line(e)})") from None
        rest = d.unused_data
        if not rest:
            return
        if not _is_lz4_frame(rest):
            raise ValueError(
                f"lz4: {len(rest)} unexpected bytes after the end of the frame")


# ---------------------------------------------------------------------------
# zstd

def _unzstd(view, budget: _Budget) -> None:
    pos = 0
    n = len(view)
    dctx = zstandard.ZstdDecompressor()
    while pos < n:
        head = bytes(view[pos:pos + 4])
        if len(head) == 4 and head[1:] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50:
            # skippable frame: magic, uint32 LE size, user data
            if n - pos < 8:
                raise ValueError(f"zstd: truncated skippable frame at byte {pos}")
            (size,) = struct.unpack_from("<I", view, pos + 4)
            if pos + 8 + size > n:
                raise ValueError(f"zstd: truncated skippable frame at byte {pos}")
            pos += 8 + size
            continue
        if head != ZSTD_MAGIC:
            if pos == 0:
                raise ValueError("zstd: not a zstd frame (bad magic)")
            raise ValueError(
                f"zstd: {n - pos} unexpected bytes after the end of the frame")
        pos = _unzstd_frame(dctx, view, pos, budget)


def _unzstd_frame(dctx, view, pos: int, budget: _Budget) -> int:
    """Inflate the frame at ``pos``, one block per call; return its end."""
    n = len(view)
    start = pos
    if n - pos < 5:
        raise ValueError(f"zstd: truncated frame header at byte {start}")
    fhd = view[pos + 4]
    if fhd & 0x08:
        raise ValueError(f"zstd: corrupt frame header at byte {start} (reserved bit set)")
    single_segment = bool(fhd & 0x20)
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fhd >> 6]
    header_size = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 3] + fcs_size
    has_checksum = bool(fhd & 0x04)
    if n - pos < header_size:
        raise ValueError(f"zstd: truncated frame header at byte {start}")
    dobj = dctx.decompressobj()
    feed_from = pos
    pos += header_size
    try:
        while True:
            if n - pos < 3:
                raise ValueError(f"zstd: truncated frame at byte {start}")
            bh = view[pos] | (view[pos + 1] << 8) | (view[pos + 2] << 16)
            last = bh & 1
            btype = (bh >> 1) & 3
            bsize = bh >> 3
            if btype == 3:
                raise ValueError(f"zstd: corrupt block at byte {pos} (reserved type)")
            if bsize > _ZSTD_MAX_BLOCK:
                raise ValueError(f"zstd: corrupt block at byte {pos} (size {bsize})")
            content = 1 if btype == 1 else bsize
            if n - pos - 3 < content:
                raise ValueError(f"zstd: truncated frame at byte {start}")
            pos += 3 + content
            if last:
                if has_checksum:
                    if n - pos < 4:
                        raise ValueError(f"zstd: truncated frame at byte {start}")
                    pos += 4
            # a block inflates to at most 128 KiB: check before inflating it
            budget.check(min(bsize, _ZSTD_MAX_BLOCK) if btype != 2 else 0)
            out = dobj.decompress(view[feed_from:pos])
            feed_from = pos
            budget.add(out)
            if last:
                break
    except zstandard.ZstdError as e:
        raise ValueError(f"zstd: corrupt frame at byte {start} ({_one_line(e)})") from None
    if not dobj.eof:
        raise ValueError(f"zstd: corrupt frame at byte {start} (frame did not end)")
    return pos


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__
