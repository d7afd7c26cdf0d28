"""A file that is not a Kafka log segment or snapshot at all is said to be
one, naming the file and what it starts with (no batch length or offset
read from bytes that never were either); a Kafka file damaged after its
start keeps its precise message."""

from __future__ import annotations

import os
import random

import pytest
from tests.support.replay import Log
from tests.support.records import broker, topic, uid

from metashell.loader.file_kind import NotKafkaFileError
from metashell.session.files import open_session


def test_random_bytes_are_not_a_kafka_file(tmp_path):
    path = tmp_path / "x.log"
    data = bytearray(random.Random(7).randbytes(5000))
    data[16] = 0x9C
    path.write_bytes(bytes(data))
    with pytest.raises(NotKafkaFileError) as e:
        open_session(path)
    text = str(e.value)
    assert text.startswith(f"{path}: not a Kafka log segment or snapshot (byte 16, a record "
                           f"batch's magic, is 156, not 2; it starts with bytes ")
    assert "offset" not in text and "batch length" not in text


@pytest.mark.parametrize("name", ["00000000000000000000.log",
                                  "00000000000000000010-0000000001.checkpoint"])
def test_a_text_file_is_not_a_kafka_file(tmp_path, name):
    path = tmp_path / name
    path.write_text("# Licensed to the Apache Software Foundation\nbroker.id=1\n")
    with pytest.raises(NotKafkaFileError) as e:
        open_session(path)
    assert str(e.value) == (f'{path}: not a Kafka log segment or snapshot (byte 16, a record '
                            f'batch\'s magic, is 101, not 2; it starts with text "# Licensed '
                            f'to the Apache...")')   # byte 16: the e of Apache


def test_a_metadata_dir_holding_one_names_it(tmp_path):
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"\x01" * 16 + b"x" * 200)
    with pytest.raises(NotKafkaFileError, match=r"00000000000000000000\.log: not a Kafka log segment"):
        open_session(tmp_path)


def test_a_kafka_file_damaged_later_keeps_its_precise_message(tmp_path):
    log = Log()
    log.add(broker(1), topic("t", uid(1)))
    log.add(broker(2))
    path = log.write(tmp_path)
    data = bytearray(path.read_bytes())
    second = 12 + int.from_bytes(data[8:12], "big")   # the second batch's start
    data[second + 8:second + 12] = (7).to_bytes(4, "big")   # its length: 7
    path.write_bytes(bytes(data))
    problems = [str(p) for p in open_session(path).problems()]
    assert any(f"(byte {second}" in p and "a batch length of at least 49 bytes, found 7" in p
               for p in problems), problems
    assert not any("not a Kafka" in p for p in problems)


def test_nothing_is_written_where_it_reads(tmp_path):
    path = tmp_path / "x.log"
    path.write_text("not kafka at all, not at all\n" * 3)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(NotKafkaFileError):
        open_session(path)
    assert sorted(os.listdir(tmp_path)) == before
