"""``/image``: Kafka's shell tree as a second view over the same image, with
Kafka's strings in text and the native tree's values in JSON (the
differential test against Kafka's own shell is realkafka/test_image_vs_kafka_shell.py)."""

from __future__ import annotations

import json

import pytest

from tests.support.commands import run_command
from metashell.commands.watch import _steps, _watched
from metashell.fs import kafka_text as kt
from metashell.fs.complete import complete_path
from metashell.fs.image_view import decode_entity, image_parts, native_parts
from tests.support.replay import TS0, load, ls, node
from tests.support.records import broker, feature, noop, rich_cluster, uid

T1 = uid(1)   # topic foo of rich_cluster


@pytest.fixture
def rich(tmp_path):
    return load(tmp_path, *rich_cluster(), [broker(3, rack="r1", fenced=False,
                                                   logDirs=[uid(7), uid(3)])])


def test_the_top_level_and_listing_order_are_kafkas(rich):
    assert ls(rich.root, "/image") == ["acls", "clientQuotas", "cluster", "configs",
                                       "delegationToken", "features", "producerIds",
                                       "provenance", "scram", "topics"]
    assert ls(rich.root, "/image/cluster/brokers") == ["1", "10", "2", "3"]
    assert ls(rich.root, "/image/topics/byName/foo") == ["0", "1", "10", "id", "name"]
    assert ls(rich.root, "/image/configs") == ["BROKER", "BROKER:1", "BROKER:10", "BROKER:2",
                                               "TOPIC:foo"]
    assert kt.java_sorted(["a", "Z", "é", "\U0001F600", "\uFFFD"]) == [
        "Z", "a", "é", "\U0001F600", "\uFFFD"]   # UTF-16 code units: a surrogate sorts low


def test_text_is_kafkas_string_and_json_the_native_value(rich):
    _, text, _ = run_command(rich, "cat", "/image/topics/byName/foo/0")
    unassigned = ", ".join(["AAAAAAAAAAAAAAAAAAAAAA"] * 3)
    assert text == ("PartitionRegistration(replicas=[1, 2, 3], "
                    f"directories=[{unassigned}], isr=[1, 2, 3], "
                    "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
                    "leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=1)\n")
    _, out, _ = run_command(rich, "cat", "/image/topics/byName/foo/0", output="json")
    assert json.loads(out) == node(rich.root, "/topics/foo/0/data").value()
    _, text, _ = run_command(rich, "cat", "/image/cluster/brokers/3")
    assert "rack=Optional[r1], fenced=false" in text
    assert f"directories=[{uid(3)}, {uid(7)}], cordonedDirectories=null)" in text
    _, out, _ = run_command(rich, "cat", "/image/cluster/brokers/3", output="json")
    assert json.loads(out) == node(rich.root, "/brokers/3/registration").value()


def test_every_kind_prints_as_kafka_prints_it(rich):
    out = "".join(run_command(rich, "tree", path)[1] for path in (
        "/image/acls", "/image/clientQuotas", "/image/features", "/image/producerIds",
        "/image/delegationToken"))
    assert out.splitlines() == [
        "byId:",
        f"  {uid(900)}:",
        "    StandardAcl[resourceType=CLUSTER, resourceName=kafka-cluster, patternType=LITERAL, "
        "principal=User:admin, host=*, operation=ALL, permissionType=ALLOW]",
        "user(<default>):", "  consumer_byte_rate:", "    5.0",
        "finalized_group.version:", "  1", "metadataVersion:", "  4.1-IV1",
        "nextProducerId:", "  7000",
        "tok:", "  DelegationTokenData(tokenId=tok, owner=User:alice, tokenRequester=User:alice, "
        "renewers=, issueTimestamp=1, maxTimestamp=3, expiryTimestamp=2)"]
    assert node(rich.root, "/image/features/finalized_nothing") is None


def test_secrets_are_redacted_unless_asked(tmp_path, rich):
    assert node(rich.root, "/image/configs/BROKER/ssl.keystore.password").text() == "[redacted]"
    scram = node(rich.root, "/image/scram/SCRAM-SHA-512/alice").text()
    assert scram == ("ScramCredentialData(salt=[redacted], storedKey=[redacted], "
                     "serverKey=[redacted], iterations=8192)")
    shown = load(tmp_path / "b", *rich_cluster(), show_secrets=True)
    assert node(shown.root, "/image/configs/BROKER/ssl.keystore.password").text() == "pw"
    assert node(shown.root, "/image/scram/SCRAM-SHA-512/alice").text() == (
        "ScramCredentialData(salt=73, storedKey=6b, serverKey=76, iterations=8192)")


def test_globs_find_completion_and_changes_work_there(rich):
    status, out, _ = run_command(rich, "find", "/image/topics/by*/foo", "-name", "1*")
    assert (status, out.split()) == (0, ["/image/topics/byName/foo/1", "/image/topics/byName/foo/10"])
    status, out, _ = run_command(rich, "ls", f"/image/topics/*/{T1}")
    assert (status, out.split()) == (0, ["0", "1", "10", "id", "name"])
    assert [c.text for c in complete_path(rich.root, "/", "/image/c")] == [
        "/image/clientQuotas/", "/image/cluster/", "/image/configs/"]
    status, out, _ = run_command(rich, "changes", "/image/topics/byName/foo/0")
    assert status == 0 and "PartitionChangeRecord" in out
    _, native, _ = run_command(rich, "changes", "/topics/foo/0")
    assert out == native


def test_paths_map_both_ways():
    assert decode_entity(r"clientId(a\)b)_user(<default>)") == ["client-id", "a)b", "user", "<default>"]
    assert decode_entity("user(x") is None and decode_entity("nobody(x)") is None
    assert native_parts(["configs", "TOPIC:foo", "retention.ms"]) == [
        "configs", "topic", "foo", "retention.ms"]
    assert native_parts(["configs", "BROKER"]) == ["configs", "broker", "<default>"]
    assert image_parts(["configs", "broker", "<default>"]) == ["image", "configs", "BROKER"]
    assert image_parts(["clientQuotas", "user", "<default>"]) == [
        "image", "clientQuotas", "user(<default>)"]
    assert image_parts(["topics", "foo", "3"]) == ["image", "topics", "byName", "foo", "3"]
    assert _watched(_steps("/", "/image/topics/*/foo"), ["topics", "foo", "3"])
    assert not _watched(_steps("/", "/image/cluster"), ["topics", "foo", "3"])


def test_java_formats():
    assert [kt.java_double(v) for v in (1048576.0, 1e7, 12.5, 0.001, 1e-4, 2.5e9, 5.0)] == [
        "1048576.0", "1.0E7", "12.5", "0.001", "1.0E-4", "2.5E9", "5.0"]
    assert kt.zoned_time(1683749211480) == "2023-05-10T20:06:51.48Z[UTC]"
    assert kt.zoned_time(1683749211000) == "2023-05-10T20:06:51Z[UTC]"
    assert kt.version_range(1, 1) == "1" and kt.version_range(0, 32767) == "0+"


def test_the_old_shells_paths_are_in_the_native_tree(tmp_path):
    log = [noop()]
    s = load(tmp_path, *log)
    assert node(s.root, "/metadataQuorum/leader").text() == (
        "LeaderAndEpoch(leaderId=OptionalInt.empty, epoch=-1)")
    assert node(s.root, "/metadataQuorum/offset").value() == 0
    commit = node(s.root, "/local/commitId").value()
    assert commit == "unknown" or len(commit) == 16


def test_provenance_is_the_last_data_batch_as_in_kafkas_shell(tmp_path):
    """A log ending in control batches (a new leader's LeaderChange): Kafka's
    shell (4.3.1, checked on a real controller's log cut after such batches)
    shows the last data batch's offset, epoch and time; so does /image; the
    native tree's last offset still counts every batch."""
    from metashell.kraft.writer import LogWriter, segment_name
    from metashell.session.files import open_session
    w = LogWriter(0, epoch=1, timestamp=1_700_000_000_000)
    w.batch([feature("metadata.version", 7)])
    w.batch([broker(1)], timestamp=1_700_000_000_500)
    w.leader_change(2, [1, 2, 3], epoch=2, timestamp=1_700_000_009_000)
    path = tmp_path / segment_name(0)
    w.write(path)
    session = open_session(path)
    status, out, _ = run_command(session, "cat", "/image/provenance")
    assert (status, out) == (0, "offset 1, epoch 1, time 2023-11-14T22:13:20.5Z[UTC]\n")
    _, out, _ = run_command(session, "cat", "/image/provenance", output="json")
    assert json.loads(out) == {"offset": 1, "epoch": 1, "time": "2023-11-14T22:13:20.500Z"}
    _, out, _ = run_command(session, "cat", "/metadataQuorum/offset")
    assert out.strip() == "2"
    w.batch([noop()], timestamp=1_700_000_010_000)
    w.write(path)
    _, out, _ = run_command(open_session(path), "cat", "/image/provenance")
    assert out == "offset 3, epoch 2, time 2023-11-14T22:13:30Z[UTC]\n"


def test_provenance_is_the_last_batch_of_metadata_records_after_leader_changes(tmp_path):
    """Kafka's loader never sees a control batch: a log that ends in leader
    changes shows the last data batch's offset and time, in text and JSON;
    /metadataQuorum/offset is the last record applied."""
    from tests.support.replay import Log
    from metashell.session.files import open_session
    log = Log(epoch=4)
    log.add(noop())                 # offset 0, TS0
    log.add(noop())                 # offset 1, TS0 + 1 s
    log.leader(2)                                 # offset 2
    log.leader(3)                                 # offset 3
    s = open_session(log.write(tmp_path))
    prov = node(s.root, "/image/provenance")
    assert prov.text() == f"offset 1, epoch 4, time {kt.zoned_time(TS0 + 1000)}"
    assert prov.value()["offset"] == 1
    assert node(s.root, "/metadataQuorum/offset").value() == 3


def test_a_snapshot_past_the_logs_last_metadata_batch_gives_its_own_offset_and_epoch(tmp_path):
    """A 4.0.2 controller's newest snapshot also covered the leader change
    after the log's last batch of metadata records (its id: that offset + 1
    and the new epoch). Its metadata dir shows the snapshot's offset and
    epoch, as a loader of that snapshot publishes; the log alone, its last
    metadata batch's (the real-Kafka harness compares the dir with Kafka's
    shell on the log, and leaves the provenance out there)."""
    from tests.support.replay import Log, write_snapshot
    from metashell.session.files import open_session
    log_dir = tmp_path / "__cluster_metadata-0"
    log = Log()
    log.leader(1, epoch=1)                                    # offset 0
    log.add(feature("metadata.version", 20))                  # offset 1
    log.add(broker(1))                                        # offset 2
    log.leader(2, epoch=2)                                    # offset 3
    segment = log.write(log_dir)
    write_snapshot(log_dir, log.next_offset, [feature("metadata.version", 20), broker(1)],
                   epoch=2)
    whole = node(open_session(log_dir).root, "/image/provenance").value()
    alone = node(open_session(segment).root, "/image/provenance").value()
    assert (whole["offset"], whole["epoch"]) == (3, 2)
    assert (alone["offset"], alone["epoch"]) == (2, 1)


def test_provenance_time_is_the_last_data_batchs_own(tmp_path):
    """A new leader's first data batch may carry an earlier time than the
    LeaderChange before it (its records were stamped when made): Kafka's
    provenance is that batch's own time, not the latest time seen."""
    from metashell.kraft.writer import LogWriter, segment_name
    from metashell.session.files import open_session
    w = LogWriter(0, epoch=1, timestamp=1_700_000_000_000)
    w.batch([feature("metadata.version", 7)])
    w.leader_change(2, [1, 2, 3], epoch=2, timestamp=1_700_000_000_575)
    w.batch([broker(1)], timestamp=1_700_000_000_531)
    path = tmp_path / segment_name(0)
    w.write(path)
    session = open_session(path)
    _, out, _ = run_command(session, "cat", "/image/provenance")
    assert out == "offset 2, epoch 2, time 2023-11-14T22:13:20.531Z[UTC]\n"
    _, out, _ = run_command(session, "cat", "/image/provenance", output="json")
    assert json.loads(out)["time"] == "2023-11-14T22:13:20.531Z"
