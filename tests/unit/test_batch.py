"""Record batch framing (kraft-format.md sections 2 and 2.4): headers, CRC-32C,
the end of the data (clean end, torn tail, zero padding, short tail) and
damage (bad magic, CRC mismatch, impossible length), with and without
``skip_damage``. Fixtures come from the project's own writer."""

from __future__ import annotations

import struct

import pytest

from metashell.errors import CorruptDataError
from metashell.kraft.batch import (
    ATTR_CONTROL, ATTR_LOG_APPEND_TIME, ATTR_TRANSACTIONAL, HEADER, HEADER_SIZE, LOG_OVERHEAD,
    MIN_BATCH_LENGTH, BatchScanner, crc32c,
)
from metashell.loader.reader import read_file
from metashell.kraft.writer import LogWriter, build_batch, encode_records
from tests.support.records import noop

TS = 1_700_000_000_000


def three_batches() -> tuple[bytes, list[int]]:
    """Batches of 2, 3 and 4 NoOps at offsets 10..18; returns the bytes and
    the byte position of each batch."""
    w = LogWriter(base_offset=10, epoch=4, timestamp=TS)
    for n in (2, 3, 4):
        w.batch([noop() for _ in range(n)])
    positions, pos = [], 0
    for part in w.parts:
        positions.append(pos)
        pos += len(part)
    return w.getvalue(), positions


def write(tmp_path, data: bytes, name="00000000000000000010.log"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def offsets(path, **kw):
    reader = read_file(path, **kw)
    return [r.offset for b in reader for r in b.records], reader.summary


def assert_one_line(err: CorruptDataError, path, position: int, offset: int | None) -> None:
    text = str(err)
    assert "\n" not in text
    where = f"byte {position}" if offset is None else f"byte {position}, offset {offset}"
    assert text.startswith(f"{path} ({where}): ")
    assert (err.path, err.position, err.offset) == (str(path), position, offset)


def patch(data: bytes, pos: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, pos, value)
    return bytes(out)


# --------------------------------------------------------------------------- basics

def test_constants_and_crc32c_check_value():
    assert HEADER_SIZE == 61 and LOG_OVERHEAD == 12 and MIN_BATCH_LENGTH == 49
    assert crc32c(b"123456789") == 0xE3069283


def test_scanner_yields_headers_with_positions(tmp_path):
    data, positions = three_batches()
    scanner = BatchScanner(data, "buf")
    headers = list(scanner)
    assert [h.position for h in headers] == positions
    assert [(h.base_offset, h.count, h.last_offset) for h in headers] == [(10, 2, 11), (12, 3, 14), (15, 4, 18)]
    assert all(h.magic == 2 and h.epoch == 4 and h.codec == 0 for h in headers)
    assert all(not (h.is_control or h.is_transactional or h.log_append_time) for h in headers)
    assert headers[-1].end == len(data) and headers[0].size == positions[1]
    assert (scanner.end_reason, scanner.end_position, scanner.problems) == ("end", len(data), [])


def test_attribute_bits():
    payload, n = encode_records([noop()])
    raw = build_batch(0, payload, n, attributes=ATTR_CONTROL | ATTR_TRANSACTIONAL | ATTR_LOG_APPEND_TIME | 3)
    (hd,) = BatchScanner(raw, "buf")
    assert hd.is_control and hd.is_transactional and hd.log_append_time and hd.codec == 3


def test_log_append_time_gives_every_record_the_batch_time(tmp_path):
    payload, n = encode_records([noop(), noop()])
    raw = build_batch(0, payload, n, base_timestamp=TS, max_timestamp=TS + 99, attributes=ATTR_LOG_APPEND_TIME)
    (b,) = read_file(write(tmp_path, raw))
    assert [r.timestamp for r in b.records] == [TS + 99, TS + 99]


def test_clean_end(tmp_path):
    data, _ = three_batches()
    got, summary = offsets(write(tmp_path, data))
    assert got == list(range(10, 19))
    assert (summary.end_reason, summary.end_position, summary.size) == ("end", len(data), len(data))
    assert summary.notes() == [] and summary.problems == []


# --------------------------------------------------------------------------- end of data

def test_torn_last_batch(tmp_path):
    data, positions = three_batches()
    path = write(tmp_path, data[:-7])
    got, summary = offsets(path)
    assert got == list(range(10, 15))            # the records before the torn batch
    assert summary.end_reason == "torn" and summary.end_position == positions[2]
    (note,) = summary.notes()
    assert str(path) in note and f"byte {positions[2]}" in note and "incomplete" in note


def test_batch_length_past_the_end_is_torn_not_damage(tmp_path):
    data, positions = three_batches()
    path = write(tmp_path, patch(data, positions[1] + 8, ">i", 1_000_000))
    got, summary = offsets(path)
    assert got == [10, 11] and summary.end_reason == "torn" and summary.end_position == positions[1]


@pytest.mark.parametrize("zeros", [5, 17, 18, 61, 4096])
def test_zero_padding(tmp_path, zeros):
    data, _ = three_batches()
    got, summary = offsets(write(tmp_path, data + bytes(zeros)))
    assert got == list(range(10, 19))
    assert summary.end_reason == "zeros" and summary.end_position == len(data)
    assert "zero padding" in summary.notes()[0]


def test_short_non_zero_tail(tmp_path):
    data, _ = three_batches()
    path = write(tmp_path, data + b"\x01" * 9)
    got, summary = offsets(path)
    assert got == list(range(10, 19)) and summary.end_reason == "tail"
    assert summary.notes() == [f"{path} (byte {len(data)}): 9 trailing bytes too short to be a batch; ignored"]


# --------------------------------------------------------------------------- damage

@pytest.mark.parametrize("magic", [0, 1, 3, -1])
def test_bad_magic(tmp_path, magic):
    data, positions = three_batches()
    path = write(tmp_path, patch(data, positions[1] + 16, ">b", magic))
    # a legacy (magic 0/1) entry has a trustworthy offset field; other magics do not
    offset = 12 if magic in (0, 1) else None
    with pytest.raises(CorruptDataError) as e:
        offsets(path)
    assert_one_line(e.value, path, positions[1], offset)
    assert f"magic 2, found {magic}" in str(e.value)
    if magic in (0, 1):
        assert "legacy message set" in str(e.value)
    got, summary = offsets(path, skip_damage=True)
    assert got == [10, 11, 15, 16, 17, 18]
    (problem,) = summary.problems
    assert_one_line(problem, path, positions[1], offset)
    assert summary.end_reason == "end"


def test_crc_mismatch(tmp_path):
    data, positions = three_batches()
    flipped = bytearray(data)
    flipped[positions[1] + HEADER_SIZE + 3] ^= 0x40     # a byte inside the second batch's records
    path = write(tmp_path, bytes(flipped))
    with pytest.raises(CorruptDataError) as e:
        offsets(path)
    assert_one_line(e.value, path, positions[1], 12)
    assert "CRC-32C" in str(e.value)
    got, summary = offsets(path, skip_damage=True)
    assert got == [10, 11, 15, 16, 17, 18] and len(summary.problems) == 1
    assert "CRC-32C" in str(summary.problems[0])


def test_crc_mismatch_in_the_header_part_covered_by_the_crc(tmp_path):
    data, positions = three_batches()
    path = write(tmp_path, patch(data, positions[0] + 27, ">q", TS + 1))    # baseTimestamp
    with pytest.raises(CorruptDataError, match="CRC-32C"):
        offsets(path)


def test_crc_not_verified_when_asked(tmp_path):
    data, positions = three_batches()
    path = write(tmp_path, patch(data, positions[0] + 27, ">q", TS + 1))
    got, _ = offsets(path, verify_crc=False)
    assert got == list(range(10, 19))


@pytest.mark.parametrize("length", [0, 14, 48, -5])
def test_batch_length_below_the_header_size(tmp_path, length):
    data, positions = three_batches()
    damaged = patch(data, positions[1] + 8, ">i", length)
    if length == 0:   # a zero length with a zero base offset would be zero padding
        damaged = patch(damaged, positions[1], ">q", 12)
    path = write(tmp_path, damaged)
    with pytest.raises(CorruptDataError) as e:
        offsets(path)
    assert_one_line(e.value, path, positions[1], 12)
    assert f"at least 49 bytes, found {length}" in str(e.value)
    # with skip_damage the batch is listed, but nothing after it can be found: its
    # length is the only way to the next batch
    got, summary = offsets(path, skip_damage=True)
    assert got == [10, 11] and len(summary.problems) == 1 and summary.end_reason == "corrupt"


def test_several_damaged_batches_skipped(tmp_path):
    w = LogWriter(0, 1, TS)
    for _ in range(6):
        w.batch([noop()])
    parts = list(w.parts)
    parts[1] = patch(parts[1], 16, ">b", 0)
    bad = bytearray(parts[3])
    bad[-2] ^= 0xFF
    parts[3] = bytes(bad)
    path = write(tmp_path, b"".join(parts))
    got, summary = offsets(path, skip_damage=True)
    assert got == [0, 2, 4, 5]
    assert [p.offset for p in summary.problems] == [1, 3]
    assert [p.position for p in summary.problems] == [len(parts[0]), len(b"".join(parts[:3]))]


def test_scanner_over_a_buffer_range():
    data, positions = three_batches()
    scanner = BatchScanner(data, "buf", start=positions[1], end=positions[2])
    assert [h.base_offset for h in scanner] == [12]
    assert scanner.end_reason == "end" and scanner.end_position == positions[2]


def test_header_layout_is_big_endian_at_the_documented_offsets():
    payload, n = encode_records([noop()])
    raw = build_batch(0x0102030405060708, payload, n, epoch=0x0A0B0C0D, base_timestamp=TS)
    assert raw[0:8] == bytes.fromhex("0102030405060708")
    assert raw[12:16] == bytes.fromhex("0a0b0c0d") and raw[16] == 2
    assert HEADER.unpack_from(raw)[12] == 1 and raw[57:61] == b"\x00\x00\x00\x01"


def test_overrunning_batch_with_a_bad_magic_is_damage_not_a_torn_tail(tmp_path):
    data, positions = three_batches()
    damaged = patch(patch(data, positions[2] + 16, ">b", 7), positions[2] + 8, ">i", 1_000_000)
    path = write(tmp_path, damaged)
    with pytest.raises(CorruptDataError, match="magic 2, found 7"):
        offsets(path)
    got, summary = offsets(path, skip_damage=True)
    assert got == list(range(10, 15)) and summary.end_reason == "corrupt" and len(summary.problems) == 1
