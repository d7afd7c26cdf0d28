"""``open_session``: time travel on a log and on a directory (snapshot choice),
provenance (``last_change``, ``changes``), the summary and the warnings."""

from __future__ import annotations

import json

import pytest

from tests.support.paths import EXAMPLE
from metashell.errors import MetashellError
from metashell.kraft.writer import record
from metashell.session.files import open_session
from tests.support.replay import TS0, Log, cat, leaves, ls, node, write_snapshot
from tests.support.records import broker, change, config, feature, partition, topic, uid

T1, T2, T3 = uid(1), uid(2), uid(3)


# =========================================================================== time travel: a log

def history_log() -> tuple[Log, dict]:
    """One change per batch, batch i appended at TS0 + 1000 * i."""
    log = Log()
    at = {}
    at["broker"] = log.add(broker(1, fenced=False))                # 0
    at["topic"] = log.add(topic("foo", T1), partition(T1, 0))      # 1, 2
    at["leader2"] = log.add(change(T1, 0, leader=2))               # 3
    at["leader3"] = log.add(change(T1, 0, leader=3))               # 4
    at["bar"] = log.add(topic("bar", T2))                          # 5
    at["rm"] = log.add(record("RemoveTopicRecord", topicId=T1))    # 6
    return log, at


class TestTimeTravelOnALog:
    def test_until_offset(self, tmp_path):
        log, at = history_log()
        path = log.write(tmp_path)
        s = open_session(path, until_offset=at["leader2"])
        assert ls(s.root, "/topics") == ["foo"]
        assert cat(s.root, "/topics/foo/0/data")["leader"] == 2
        assert cat(s.root, "/metadataQuorum/offset") == at["leader2"]
        s = open_session(path, until_offset=at["leader3"])
        assert cat(s.root, "/topics/foo/0/data")["leaderEpoch"] == 2
        s = open_session(path, until_offset=at["rm"])
        assert ls(s.root, "/topics") == ["bar"]
        s = open_session(path)
        assert ls(s.root, "/topics") == ["bar"]

    def test_until_offset_inside_a_batch(self, tmp_path):
        log, at = history_log()
        s = open_session(log.write(tmp_path), until_offset=at["topic"])   # TopicRecord, not yet the partition
        assert ls(s.root, "/topics/foo") == ["id", "name"]
        assert cat(s.root, "/metadataQuorum/offset") == at["topic"]
        assert cat(s.root, "/metadataQuorum/time") == "2023-11-14T22:13:21.000Z"

    def test_until_offset_before_anything(self, tmp_path):
        log, _ = history_log()
        with pytest.raises(MetashellError, match=r"--until-offset -1 is before the oldest point "
                                                 r"this source can rebuild: offset 0 at 2023-11-14T22:13:20"):
            open_session(log.write(tmp_path), until_offset=-1)

    def test_until_time(self, tmp_path):
        log, at = history_log()
        path = log.write(tmp_path)
        s = open_session(path, until_time=TS0 + 2000)          # batches 0-2 (inclusive)
        assert cat(s.root, "/topics/foo/0/data")["leader"] == 2
        assert cat(s.root, "/metadataQuorum/offset") == at["leader2"]
        s = open_session(path, until_time=TS0 + 2999)
        assert cat(s.root, "/topics/foo/0/data")["leader"] == 2
        with pytest.raises(MetashellError, match="before the oldest point"):
            open_session(path, until_time=TS0 - 1)
        s = open_session(path, until_time=TS0 + 10_000)
        assert ls(s.root, "/topics") == ["bar"]
        assert s.problems() == ["--until-time 2023-11-14T22:13:30.000Z is past the end of the data: "
                                "the last record is offset 6 at 2023-11-14T22:13:25.000Z; "
                                "the image is as of then"]


# =========================================================================== time travel: a directory

def logdir(tmp_path) -> tuple:
    """A metadata log dir: a log from 0 (offsets 0-6) and snapshots ending at 3 and 6
    (written the way Kafka would: the image at that point)."""
    log, at = history_log()
    part = tmp_path / "__cluster_metadata-0"
    seg = log.write(part)
    # image after offsets 0-2 (end offset 3); the snapshot's time is the last batch's
    write_snapshot(part, 3, [broker(1, fenced=False), topic("foo", T1), partition(T1, 0)],
                   timestamp=TS0 + 1000)
    # image after offsets 0-5 (end offset 6)
    write_snapshot(part, 6, [broker(1, fenced=False), topic("foo", T1),
                             partition(T1, 0, leader=3, leaderEpoch=2, partitionEpoch=2),
                             topic("bar", T2)], timestamp=TS0 + 4000)
    return seg, at


def tree_json(s) -> str:
    tops = ["brokers", "controllers", "topics", "topicIds", "configs", "clientQuotas", "acls",
            "features", "producerIds", "scram", "delegationTokens"]
    return json.dumps(leaves(s.root, tops), sort_keys=True)


class TestTimeTravelOnADirectory:
    def test_newest_snapshot_and_the_rest_of_the_log(self, tmp_path):
        seg, at = logdir(tmp_path)
        s = open_session(tmp_path)
        assert s.plan.snapshot.path.name.startswith("00000000000000000006-")
        assert tree_json(s) == tree_json(open_session(seg))
        assert ls(s.root, "/topics") == ["bar"]

    @pytest.mark.parametrize("until,snapshot_end", [(2, 3), (3, 3), (4, 3), (5, 6), (6, 6), (1, None)])
    def test_until_offset_picks_the_snapshot(self, tmp_path, until, snapshot_end):
        seg, _ = logdir(tmp_path)
        s = open_session(tmp_path, until_offset=until)
        if snapshot_end is None:
            assert s.plan.snapshot is None
        else:
            assert s.plan.snapshot.end_offset == snapshot_end
        assert tree_json(s) == tree_json(open_session(seg, until_offset=until))

    @pytest.mark.parametrize("until,snapshot_end", [(TS0 + 1000, 3), (TS0 + 3500, 3), (TS0 + 4000, 6),
                                                    (TS0 + 999, None)])
    def test_until_time_picks_the_snapshot(self, tmp_path, until, snapshot_end):
        seg, _ = logdir(tmp_path)
        s = open_session(tmp_path, until_time=until)
        if snapshot_end is None:
            assert s.plan.snapshot is None
        else:
            assert s.plan.snapshot.end_offset == snapshot_end
        assert tree_json(s) == tree_json(open_session(seg, until_time=until))

    def test_a_snapshot_alone_cannot_go_back(self, tmp_path):
        snap = write_snapshot(tmp_path, 10, [topic("foo", T1)])
        with pytest.raises(MetashellError, match="before the oldest point .*: offset 9 at .*a snapshot loads whole"):
            open_session(snap, until_offset=5)
        assert ls(open_session(snap, until_offset=9).root, "/topics") == ["foo"]


# =========================================================================== provenance

def provenance_log() -> tuple[Log, dict]:
    log = Log()
    at = {}
    at["reg"] = log.add(broker(1, 10, fenced=True))
    at["unfence"] = log.add(record("UnfenceBrokerRecord", id=1, epoch=10))
    at["topic"] = log.add(topic("foo", T1))
    at["p0"] = log.add(partition(T1, 0, isr=[1, 2, 3]))
    at["p1"] = log.add(partition(T1, 1))
    at["isr"] = log.add(change(T1, 0, isr=[1, 2]))
    at["cfg1"] = log.add(config(2, "foo", "retention.ms", "1000"))
    at["cfg2"] = log.add(config(2, "foo", "cleanup.policy", "compact"))
    at["cfg3"] = log.add(config(2, "foo", "retention.ms", "2000"))
    at["quota"] = log.add(record("ClientQuotaRecord", entity=[{"entityType": "user", "entityName": "alice"}],
                                 key="producer_byte_rate", value=1024.0, remove=False))
    at["feature"] = log.add(feature("metadata.version", 27))
    at["acl"] = log.add(record("AccessControlEntryRecord", id=uid(900), resourceType=2,
                               resourceName="foo", patternType=3, principal="User:alice", host="*",
                               operation=3, permissionType=3))
    at["scram"] = log.add(record("UserScramCredentialRecord", name="alice", mechanism=1,
                                 salt=b"pepper-salt", storedKey=b"stored-key-bytes",
                                 serverKey=b"server-key-bytes", iterations=4096))
    at["leader"] = log.add(change(T1, 0, leader=2))
    return log, at


class TestProvenance:
    def test_last_change_offsets(self, tmp_path):
        log, at = provenance_log()
        s = open_session(log.write(tmp_path))
        r = s.root
        assert node(r, "/brokers/1").last_change()[0] == at["unfence"]
        assert node(r, "/brokers/1/isFenced").last_change()[0] == at["unfence"]
        assert node(r, "/topics/foo").last_change()[0] == at["topic"]
        assert node(r, "/topics/foo/id").last_change()[0] == at["topic"]
        assert node(r, "/topics/foo/0").last_change()[0] == at["leader"]
        assert node(r, "/topics/foo/0/data").last_change()[0] == at["leader"]
        assert node(r, "/topics/foo/1/data").last_change()[0] == at["p1"]
        assert node(r, f"/topicIds/{T1}/0/data").last_change()[0] == at["leader"]
        assert node(r, "/configs/topic/foo/retention.ms").last_change()[0] == at["cfg3"]
        assert node(r, "/configs/topic/foo/cleanup.policy").last_change()[0] == at["cfg2"]
        assert node(r, "/configs/topic/foo").last_change()[0] == at["cfg3"]
        assert node(r, "/clientQuotas/user/alice/producer_byte_rate").last_change()[0] == at["quota"]
        assert node(r, "/features/metadata.version").last_change()[0] == at["feature"]
        assert node(r, f"/acls/{uid(900)}").last_change()[0] == at["acl"]
        assert node(r, "/scram/SCRAM-SHA-256/alice").last_change()[0] == at["scram"]
        # the time is the batch's append time
        assert node(r, "/topics/foo").last_change() == (at["topic"], TS0 + 1000 * 2)
        assert r.last_change() == (at["leader"], TS0 + 1000 * 13)

    def test_changes_of_a_partition(self, tmp_path):
        log, at = provenance_log()
        s = open_session(log.write(tmp_path))
        ch = s.changes("/topics/foo/0")
        assert [c["offset"] for c in ch] == [at["p0"], at["isr"], at["leader"]]
        assert [c["type"] for c in ch] == ["PartitionRecord", "PartitionChangeRecord",
                                           "PartitionChangeRecord"]
        assert ch[0]["time"] == "2023-11-14T22:13:23.000Z"
        assert "isr [1,2]" in ch[1]["summary"] and "leader 2" in ch[2]["summary"]
        assert s.changes("/topics/foo/0/data") == ch
        assert s.changes(f"/topicIds/{T1}/0") == ch

    def test_changes_of_topic_broker_config_quota(self, tmp_path):
        log, at = provenance_log()
        s = open_session(log.write(tmp_path))
        # a topic's history holds its partitions' records
        assert [c["offset"] for c in s.changes("/topics/foo")] == [
            at[k] for k in ("topic", "p0", "p1", "isr", "leader")]
        assert [c["offset"] for c in s.changes("/topics/foo/0")] == [
            at[k] for k in ("p0", "isr", "leader")]
        assert [c["type"] for c in s.changes("/brokers/1")] == ["RegisterBrokerRecord",
                                                                "UnfenceBrokerRecord"]
        assert [c["offset"] for c in s.changes("/configs/topic/foo")] == \
            [at["cfg1"], at["cfg2"], at["cfg3"]]
        assert [c["offset"] for c in s.changes("/clientQuotas/user/alice")] == [at["quota"]]
        assert [c["offset"] for c in s.changes(f"/acls/{uid(900)}")] == [at["acl"]]
        assert [c["offset"] for c in s.changes("/features/metadata.version")] == [at["feature"]]
        for c in s.changes("/brokers/1"):
            assert set(c) == {"offset", "time", "type", "summary", "fromSnapshot"}

    def test_changes_of_removed_entities(self, tmp_path):
        log, at = history_log()
        s = open_session(log.write(tmp_path))
        ch = s.changes(f"/topicIds/{T1}")
        assert [c["offset"] for c in ch] == [at["topic"], at["topic"] + 1, at["leader2"],
                                              at["leader3"], at["rm"]]
        assert [c["type"] for c in ch] == ["TopicRecord", "PartitionRecord", "PartitionChangeRecord",
                                           "PartitionChangeRecord", "RemoveTopicRecord"]
        assert s.changes("/topics/foo") == ch     # by its name too
        log = Log()
        log.add(broker(1))
        log.add(record("UnregisterBrokerRecord", brokerId=1, brokerEpoch=10))
        s = open_session(log.write(tmp_path / "b"))
        assert [c["type"] for c in s.changes("/brokers/1")] == ["RegisterBrokerRecord",
                                                                "UnregisterBrokerRecord"]

    def test_changes_of_nothing(self, tmp_path):
        log, _ = provenance_log()
        s = open_session(log.write(tmp_path))
        for path in ("/topics/nope", "/brokers/7", "/configs/broker/9"):
            with pytest.raises(KeyError):
                s.changes(path)

    @pytest.mark.parametrize("show", [False, True])
    def test_scram_summaries_never_show_secrets(self, tmp_path, show):
        import base64
        log, _ = provenance_log()
        log.add(record("RemoveUserScramCredentialRecord", name="alice", mechanism=1))
        s = open_session(log.write(tmp_path), show_secrets=show)
        ch = s.changes("/scram/SCRAM-SHA-256/alice")
        assert [c["type"] for c in ch] == ["UserScramCredentialRecord", "RemoveUserScramCredentialRecord"]
        text = json.dumps(ch)
        assert "alice" in text
        for secret in (b"pepper-salt", b"stored-key-bytes", b"server-key-bytes"):
            assert secret.decode() not in text
            assert base64.b64encode(secret).decode() not in text
            assert secret.hex() not in text


# =========================================================================== summary, warnings, /local

class TestSessionFacade:
    def test_summary(self, tmp_path):
        log = Log()
        log.add(broker(1, fenced=False), broker(2, fenced=True), feature("metadata.version", 27))
        log.add(topic("foo", T1), partition(T1, 0, [1, 2], isr=[1]), partition(T1, 1, [1, 2]),
                partition(T1, 2, [2, 1], leader=-1, isr=[]))
        s = open_session(log.write(tmp_path))
        sm = s.summary()
        assert sm["brokers"]["ids"] == [1, 2] and sm["brokers"]["fenced"] == [2]
        assert sm["topics"] == 1 and sm["partitions"] == 3
        assert sm["underReplicatedPartitions"] == 2 and sm["offlinePartitions"] == 1
        assert sm["metadataVersion"]["level"] == 27
        assert sm["records"]["byType"]["PartitionRecord"] == 3

    def test_warnings_carry_offsets_and_the_rest_loads(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1))
        bad = log.add(change(T1, 4, leader=1))
        log.add(topic("bar", T2))
        s = open_session(log.write(tmp_path))
        assert any(f"offset {bad}" in w for w in s.warnings)
        assert ls(s.root, "/topics") == ["bar", "foo"]
        assert cat(s.root, "/local/counts")["recordsSkipped"] == 1

    def test_local(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1))
        path = log.write(tmp_path)
        s = open_session(path)
        assert cat(s.root, "/local/source") == str(path)
        assert cat(s.root, "/local/counts")["recordsApplied"] == 1


def test_close_frees_the_cluster_without_a_collection():
    """A program that loads cluster after cluster (a Spark worker) frees each
    one at close, by reference counting: no cycle is left for a cyclic
    collection to walk."""
    import gc
    import weakref
    was = gc.isenabled()
    gc.disable()
    try:
        s = open_session(EXAMPLE)
        s.summary()
        s.root.child("topics").children()
        refs = [weakref.ref(s.image), weakref.ref(s.engine), weakref.ref(s)]
        s.close()
        del s
        assert [r() is None for r in refs] == [True, True, True]
    finally:
        if was:
            gc.enable()


# =========================================================================== the leader of a directory

class TestLeaderOfADirectory:
    """When the epoch began before the snapshot loaded, its LeaderChangeMessage
    is in an older segment (leader-epoch-checkpoint says where); the node's
    quorum-state is a fallback, and only for the epoch the replay reached."""

    def logdir(self, tmp_path, checkpoint=True):
        from metashell.kraft.writer import LogWriter, segment_name, snapshot_bytes, snapshot_name, write_file

        part = tmp_path / "__cluster_metadata-0"
        part.mkdir(parents=True)
        w = LogWriter(0, epoch=4)
        w.records([feature("metadata.version", 8)])                    # 0: 3.4 writes it first
        w.leader_change(2, [1, 2, 3])                                  # 1: epoch 4, leader 2
        w.write(part / segment_name(0))                                # (older segment)
        w = LogWriter(2, epoch=4)
        w.records([topic("bar", T2)])                                  # 2
        w.leader_change(3, [1, 2, 3], epoch=5)                         # 3: epoch 5, leader 3
        w.records([topic("baz", T3)])                                  # 4
        w.write(part / segment_name(2))
        write_file(part / snapshot_name(2, 4), snapshot_bytes([topic("foo", T1)], epoch=4))
        if checkpoint:
            (part / "leader-epoch-checkpoint").write_text("0\n2\n4 0\n5 3\n")
        (part / "quorum-state").write_text(json.dumps(
            {"data_version": 0, "leaderId": 1, "leaderEpoch": 6, "votedId": -1, "appliedOffset": 0,
             "currentVoters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}]}))
        return tmp_path

    def test_the_epochs_leader_change_names_the_leader(self, tmp_path):
        s = open_session(self.logdir(tmp_path), until_offset=2)
        assert cat(s.root, "/local/loaded")["segments"] == ["00000000000000000002.log"]
        assert ls(s.root, "/topics") == ["bar", "foo"]
        assert (cat(s.root, "/metadataQuorum/leaderId"), cat(s.root, "/metadataQuorum/leaderEpoch"),
                sorted(cat(s.root, "/metadataQuorum/voters"))) == (2, 4, ["1", "2", "3"])

    def test_without_the_checkpoint_time_travel_does_not_take_todays_leader(self, tmp_path):
        s = open_session(self.logdir(tmp_path, checkpoint=False), until_offset=2)
        assert (cat(s.root, "/metadataQuorum/leaderId"),
                cat(s.root, "/metadataQuorum/leaderEpoch")) == (-1, 4)

    def test_the_whole_directory_reads_its_leader_from_the_log(self, tmp_path):
        s = open_session(self.logdir(tmp_path))
        assert (cat(s.root, "/metadataQuorum/leaderId"),
                cat(s.root, "/metadataQuorum/leaderEpoch")) == (3, 5)
