"""The history tables: ``records`` has every record of every log file once,
however the files are sliced; values are redacted as the shell does;
``partition_changes`` ends, for each partition, in the state the image
shows."""

from __future__ import annotations

import json

import pytest

from metashell.loader.reader import FileReader
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.corpora import require_corpora
from tests.support.spark import read_table

pytestmark = pytest.mark.usefixtures("spark")

SEGMENT = EXAMPLE / "__cluster_metadata-0" / "00000000000000000000.log"
BIG_LOG = CORPORA / "kafka-4.2-logdir"


def _file_records(path) -> list[tuple]:
    return [(r.offset, r.name, r.version) for b in FileReader(path) for r in b.records]


def test_records_are_the_log_files_records(spark):
    rows = read_table(spark, "records", str(EXAMPLE))
    assert {r["file"] for r in rows} == {SEGMENT.name}   # the log, not the snapshot
    assert sorted((r["offset"], r["type"], r["version"]) for r in rows) == _file_records(SEGMENT)
    assert {r["cluster_id"] for r in rows} == {"bjaYWdoNRVibjFQf9j24sQ"}
    topic = next(r for r in rows if r["type"] == "TopicRecord")
    assert json.loads(topic["value"])["topicId"] == topic["topic_id"]
    change = next(r for r in rows if r["type"] == "PartitionChangeRecord")
    d = json.loads(change["value"])
    assert (change["topic_id"], change["partition"]) == (d["topicId"], d["partitionId"])
    assert any(r["broker_id"] is not None and r["type"] == "RegisterBrokerRecord" for r in rows)
    assert any((r["resource"] or "").startswith("config/topic/") for r in rows)


def test_a_large_file_is_split_at_batch_boundaries(spark):
    require_corpora()
    whole = read_table(spark, "records", str(BIG_LOG))
    sliced = read_table(spark, "records", str(BIG_LOG), sliceBytes=256 * 1024)
    df = spark.read.format("kraft-metadata").option("table", "records") \
        .option("sliceBytes", 256 * 1024).load(str(BIG_LOG))
    assert df.rdd.getNumPartitions() > 10   # 3.6 MB in 256 KiB slices
    key = lambda r: (r["file"], r["offset"])  # noqa: E731
    assert sorted(sliced, key=key) == sorted(whole, key=key)
    segment = BIG_LOG / "__cluster_metadata-0" / "00000000000000000000.log"
    assert [r["offset"] for r in sorted(sliced, key=key)] == [o for o, _, _ in _file_records(segment)]


def test_records_are_redacted_as_the_shell_does(spark):
    scram = [r for r in read_table(spark, "records", str(EXAMPLE))
             if r["type"] == "UserScramCredentialRecord"]
    assert scram and all(json.loads(r["value"])["salt"] == "[redacted]" for r in scram)
    shown = [r for r in read_table(spark, "records", str(EXAMPLE), showSecrets="true")
             if r["type"] == "UserScramCredentialRecord"]
    assert all(json.loads(r["value"])["salt"] != "[redacted]" for r in shown)
    configs = [json.loads(r["value"]) for r in read_table(spark, "records", str(EXAMPLE))
               if r["type"] == "ConfigRecord"]
    assert any(c["value"] == "[redacted]" and c["name"].endswith("jaas.config") for c in configs)


def test_until_offset_and_time_bound_the_history(spark):
    rows = read_table(spark, "records", str(EXAMPLE), untilOffset=100)
    assert max(r["offset"] for r in rows) == 100
    all_rows = read_table(spark, "records", str(EXAMPLE))
    cut = sorted({r["append_time"] for r in all_rows})[5]
    timed = read_table(spark, "records", str(EXAMPLE), untilTime=str(cut))
    assert timed and all(r["append_time"] <= cut for r in timed)
    assert len(timed) == sum(1 for r in all_rows if r["append_time"] <= cut)


def test_partition_changes_end_in_the_image(spark):
    # the example's log starts at offset 0, so it holds every partition's whole history
    changes = read_table(spark, "partition_changes", str(EXAMPLE))
    assert {c["type"] for c in changes} == {"PartitionRecord", "PartitionChangeRecord"}
    assert [c["offset"] for c in changes] == sorted(c["offset"] for c in changes)
    last = {}
    for c in changes:
        last[(c["topic_id"], c["partition"])] = c
    image = read_table(spark, "partitions", str(EXAMPLE))
    assert image
    for p in image:
        c = last[(p["topic_id"], p["partition"])]
        assert (c["topic"], c["leader"], c["leader_epoch"], c["partition_epoch"], c["isr"],
                c["replicas"]) == (p["topic"], p["leader"], p["leader_epoch"],
                                   p["partition_epoch"], p["isr"], p["replicas"])
