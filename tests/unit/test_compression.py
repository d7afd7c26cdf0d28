"""Batch compression codecs (kraft-format.md section 4)."""

from __future__ import annotations

import gzip
import struct
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from metashell.kraft.compression import (
    DEFAULT_MAX_SIZE, GZIP, LZ4, NONE, SNAPPY, XERIAL_MAGIC, ZSTD, codec_name, compress,
    decompress,
)

CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]
COMPRESSED = [GZIP, SNAPPY, LZ4, ZSTD]

# compressible, record-like payload
SAMPLE = b"".join(b"\x00\x01TopicRecord-%06d\x7f" % i for i in range(20000))


def raw_snappy(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


# --------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=5000))
def test_round_trip_random(codec, data):
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=10, deadline=None)
@given(data=st.binary(min_size=1, max_size=64).flatmap(
    lambda unit: st.integers(1, 5000).map(lambda n: unit * n)))
def test_round_trip_repetitive(codec, data):
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_large_and_buffer_types(codec):
    comp = compress(codec, SAMPLE)
    if codec != NONE:
        assert len(comp) < len(SAMPLE)
    assert decompress(codec, comp) == SAMPLE
    assert decompress(codec, bytearray(comp)) == SAMPLE
    assert decompress(codec, memoryview(b"xx" + comp)[2:]) == SAMPLE


def test_codec_names():
    assert [codec_name(c) for c in CODECS] == ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.mark.parametrize("codec", [5, 6, 7, -1, 8])
def test_unknown_codec(codec):
    with pytest.raises(ValueError, match=f"^unknown compression codec {codec}$"):
        decompress(codec, b"abc")
    with pytest.raises(ValueError, match=f"^unknown compression codec {codec}$"):
        compress(codec, b"abc")


# --------------------------------------------------------------------------- gzip

def test_gzip_header_is_java_like():
    comp = compress(GZIP, b"hello")
    assert comp[:4] == b"\x1f\x8b\x08\x00"
    assert comp[4:8] == b"\x00\x00\x00\x00"  # mtime 0: deterministic output
    assert gzip.decompress(comp) == b"hello"
    assert compress(GZIP, b"hello") == comp


def test_gzip_reads_stdlib_output_and_concatenated_members():
    data = gzip.compress(b"first ", mtime=0) + gzip.compress(b"second", mtime=0)
    assert decompress(GZIP, data) == b"first second"


# --------------------------------------------------------------------------- snappy

def test_xerial_layout():
    data = bytes(range(256)) * 300  # 76800 bytes: 3 chunks of <= 32 KiB
    comp = compress(SNAPPY, data)
    assert comp[:8] == b"\x82SNAPPY\x00"
    assert struct.unpack(">ii", comp[8:16]) == (1, 1)
    pos, sizes = 16, []
    out = b""
    while pos < len(comp):
        (n,) = struct.unpack_from(">i", comp, pos)
        block = comp[pos + 4:pos + 4 + n]
        assert len(block) == n
        chunk = bytes(cramjam.snappy.decompress_raw(block))
        sizes.append(len(chunk))
        out += chunk
        pos += 4 + n
    assert pos == len(comp)
    assert sizes == [32768, 32768, 76800 - 65536]
    assert out == data


def test_xerial_hand_built_stream():
    blocks = [b"alpha " * 10, b"beta " * 7]
    stream = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for b in blocks:
        raw = raw_snappy(b)
        stream += struct.pack(">i", len(raw)) + raw
    assert decompress(SNAPPY, stream) == b"".join(blocks)


def test_snappy_raw_block_fallback():
    assert decompress(SNAPPY, raw_snappy(b"legacy raw block" * 4)) == b"legacy raw block" * 4
    # shorter than the 16-byte header: raw as well
    assert decompress(SNAPPY, raw_snappy(b"ab")) == b"ab"


def test_snappy_concatenated_xerial_streams():
    a, b = compress(SNAPPY, b"one " * 5000), compress(SNAPPY, b"two " * 10)
    assert decompress(SNAPPY, a + b) == b"one " * 5000 + b"two " * 10
    assert decompress(SNAPPY, a + compress(SNAPPY, b"") + b) == b"one " * 5000 + b"two " * 10


def test_snappy_header_only_is_empty():
    assert decompress(SNAPPY, compress(SNAPPY, b"")) == b""


# --------------------------------------------------------------------------- lz4

def test_lz4_frame_header_as_kafka_writes_it():
    comp = compress(LZ4, SAMPLE)
    assert comp[:4] == b"\x04\x22\x4d\x18"
    assert comp[4] == 0x60  # version 01, independent blocks, no checksums, no size
    assert comp[5] == 0x40  # 64 KiB maximum block size
    assert comp[6] == 0x82  # HC: (xxhash32(60 40) >> 8) & 0xFF, the standard checksum
    assert lz4.frame.get_frame_info(comp)["block_size"] == 65536
    assert comp[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum
    assert lz4.frame.decompress(comp) == SAMPLE


def test_lz4_reads_library_frames_and_concatenation():
    a = lz4.frame.compress(b"x" * 100000, content_checksum=True, store_size=True)
    b = lz4.frame.compress(b"tail", block_linked=True)
    assert decompress(LZ4, a + b) == b"x" * 100000 + b"tail"


# --------------------------------------------------------------------------- zstd

def _zstd_stream_without_size(data: bytes) -> bytes:
    cobj = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    return cobj.compress(data) + cobj.flush()


def test_zstd_frame_without_content_size():
    comp = _zstd_stream_without_size(SAMPLE)
    assert zstandard.get_frame_parameters(comp).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(ZSTD, comp) == SAMPLE


def test_zstd_compress_writes_no_content_size():
    comp = compress(ZSTD, SAMPLE)
    assert comp[:4] == b"\x28\xb5\x2f\xfd"
    assert zstandard.get_frame_parameters(comp).content_size == zstandard.CONTENTSIZE_UNKNOWN


def test_zstd_multiple_frames_and_skippable_frame():
    a = _zstd_stream_without_size(b"first" * 1000)
    b = zstandard.ZstdCompressor(write_checksum=True).compress(b"second")
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    assert decompress(ZSTD, a + skippable + b) == b"first" * 1000 + b"second"


def test_zstd_flushed_blocks():
    # a stream flushed mid-way has many small blocks, as zstd-jni writes on flush
    cobj = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    parts = []
    for i in range(50):
        parts.append(cobj.compress(b"record %d " % i * 20))
        parts.append(cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK))
    parts.append(cobj.flush())
    expected = b"".join(b"record %d " % i * 20 for i in range(50))
    assert decompress(ZSTD, b"".join(parts)) == expected


# --------------------------------------------------------------------------- size guard

@pytest.mark.parametrize("codec", COMPRESSED)
def test_size_guard(codec):
    bomb = compress(codec, bytes(3 * 1024 * 1024))
    assert len(bomb) < 300 * 1024
    assert decompress(codec, bomb, max_size=3 * 1024 * 1024) == bytes(3 * 1024 * 1024)
    with pytest.raises(ValueError, match=rf"^{codec_name(codec)}: decompressed data exceeds"):
        decompress(codec, bomb, max_size=1024 * 1024)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_default_size_guard_stops_a_bomb(codec):
    bomb = compress(codec, bytes(DEFAULT_MAX_SIZE + 1))
    with pytest.raises(ValueError, match="exceeds the limit of 67108864 bytes"):
        decompress(codec, bomb)


def test_size_guard_raw_snappy_checks_declared_length():
    # a raw block declaring 1 GiB is refused before any inflating
    header = bytes([0x80, 0x80, 0x80, 0x80, 0x04])  # uvarint 1 << 30
    with pytest.raises(ValueError, match="exceeds"):
        decompress(SNAPPY, header + b"\x00" * 10)


def test_size_guard_counts_concatenated_streams():
    one = compress(GZIP, bytes(600 * 1024))
    with pytest.raises(ValueError, match="exceeds"):
        decompress(GZIP, one + one, max_size=1024 * 1024)


# --------------------------------------------------------------------------- corrupt input

def _flip(data: bytes, every: int = 97, start: int = 20) -> bytes:
    b = bytearray(data)
    for i in range(start, len(b), every):
        b[i] ^= 0x5A
    return bytes(b)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_corrupt_input_raises_one_line_value_error(codec):
    comp = compress(codec, SAMPLE)
    name = codec_name(codec)
    cases = [
        comp[: len(comp) // 2],  # truncated
        comp[:-1],               # last byte missing
        comp + b"garbage",       # trailing bytes
        _flip(comp),             # flipped bits
        b"\x00" * 40,            # not a stream at all
        b"",                     # empty
    ]
    for case in cases:
        with pytest.raises(ValueError) as info:
            decompress(codec, case)
        msg = str(info.value)
        assert msg.startswith(f"{name}: "), msg
        assert "\n" not in msg


@pytest.mark.parametrize("codec", COMPRESSED)
@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_never_crash(codec, data):
    try:
        decompress(codec, data, max_size=1 << 20)
    except ValueError as e:
        assert str(e).startswith(codec_name(codec) + ": ")


def test_gzip_bad_trailer_crc():
    comp = bytearray(compress(GZIP, b"payload" * 10))
    comp[-8] ^= 1
    with pytest.raises(ValueError, match="^gzip: corrupt"):
        decompress(GZIP, bytes(comp))


def test_xerial_bad_chunk_lengths():
    head = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    with pytest.raises(ValueError, match="^snappy: negative chunk length"):
        decompress(SNAPPY, head + struct.pack(">i", -5))
    with pytest.raises(ValueError, match="^snappy: chunk at byte 16 declares 100 bytes"):
        decompress(SNAPPY, head + struct.pack(">i", 100) + b"abc")
    with pytest.raises(ValueError, match="^snappy: truncated chunk length"):
        decompress(SNAPPY, head + b"\x00\x00")


def test_zlib_stream_is_not_gzip():
    with pytest.raises(ValueError, match="^gzip: not a gzip stream"):
        decompress(GZIP, zlib.compress(b"abc"))
