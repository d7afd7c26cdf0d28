"""A topic's partition directory is not the metadata log (issue: `-s orders-0`
gave an empty tree and exit 0): its ``partition.metadata`` names another topic
id, so it is refused in one line before any record is read."""

from __future__ import annotations

import shutil

import pytest

from metashell.errors import InputError
from metashell.kraft.writer import LogWriter, Out
from metashell.loader.inputs import classify
from tests.support.cli import run_cli
from tests.support.paths import REPO
from tests.support.records import feature

EXAMPLE_PARTITION = REPO / "examples" / "cluster" / "__cluster_metadata-0"
ORDERS_TOPIC_ID = "Vl3wXAsnRuSkQWXM1Ii2Lw"


def _partition_dir(parent, name, topic_id):
    """``parent/name`` holding the example's segment and a partition.metadata
    naming ``topic_id``, as Kafka writes one in every partition directory."""
    d = parent / name
    d.mkdir()
    shutil.copy(EXAMPLE_PARTITION / "00000000000000000000.log", d)
    (d / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
    return d


def test_a_topic_partition_dir_is_refused_naming_the_topic(tmp_path):
    d = _partition_dir(tmp_path, "orders-0", ORDERS_TOPIC_ID)
    with pytest.raises(InputError) as e:
        classify(d)
    message = str(e.value)
    assert message.startswith(f"{d}: not the metadata log: the log of topic 'orders' partition 0")
    assert ORDERS_TOPIC_ID in message and "__cluster_metadata-0" in message


def test_the_cli_says_so_in_one_line_and_exits_1(tmp_path):
    d = _partition_dir(tmp_path, "orders-1", ORDERS_TOPIC_ID)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in d.iterdir())
    status, out, err = run_cli(["-s", str(d), "ls", "/topics"])
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and "not the metadata log" in err and "Traceback" not in err
    assert sorted((p.name, p.stat().st_mtime_ns) for p in d.iterdir()) == before


def test_the_metadata_partition_dir_under_another_name_still_loads(tmp_path):
    """A copy of __cluster_metadata-0 renamed (a backup) has the metadata topic id."""
    d = _partition_dir(tmp_path, "backup-7", "AAAAAAAAAAAAAAAAAAAAAQ")
    assert classify(d) == "partition-dir"
    status, out, _ = run_cli(["-s", str(d), "ls", "/topics"])
    assert status == 0 and "orders" in out.split()


def _topic_segment(path):
    """A segment of a topic's own messages (JSON and text values, some keyed),
    as a producer's batches hold them: Kafka's format, no metadata record."""
    w = LogWriter()
    w.batch([Out(value=b'{"order": %d, "item": "widget"}' % i, key=b"k%d" % i) for i in range(5)])
    w.batch([Out(value=b"hello world %d" % i) for i in range(3)])
    w.write(path)


@pytest.mark.parametrize("fast_path", ["1", "0"])
def test_a_topic_log_without_partition_metadata_is_refused(tmp_path, monkeypatch, fast_path):
    """No partition.metadata to go by (a segment copied out, an old dir): the
    records themselves are not metadata records, and that is one error, exit 1."""
    monkeypatch.setenv("METASHELL_FAST_PATH", fast_path)
    d = tmp_path / "orders-1"
    d.mkdir()
    _topic_segment(d / "00000000000000000000.log")
    for target in (d, d / "00000000000000000000.log"):
        status, out, err = run_cli(["-s", str(target), "ls", "/topics"])
        assert (status, out) == (1, "")
        assert err.count("\n") == 1, err
        assert ("not the metadata log: none of its 8 records is a metadata record "
                "(00000000000000000000.log offset 0: undecodable") in err


def test_one_undecodable_record_among_metadata_is_still_a_warning(tmp_path):
    """A metadata log with one record it cannot decode loads, warning of it."""
    w = LogWriter()
    w.batch([feature("metadata.version", 7),
             Out(value=b"not a metadata record")])
    w.write(tmp_path / "00000000000000000000.log")
    status, out, err = run_cli(["-s", str(tmp_path), "cat", "/features/metadata.version"])
    assert status == 0 and "undecodable" in err and "not the metadata log" not in err
