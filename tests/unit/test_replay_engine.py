"""Replay rules that are about the stream rather than one record type:
metadata transactions (KIP-868), snapshots replacing all state, the quorum
control records, and feeding a :class:`ReplayEngine` directly with batches
from ``read_file``."""

from __future__ import annotations

from metashell.fs.root import build_root
from metashell.loader.reader import read_file
from metashell.kraft.writer import control, record
from metashell.replay.engine import ReplayEngine
from metashell.session.files import open_session
from tests.support.replay import TS0, Log, cat, engine_over, ls, node, problems, write_snapshot
from tests.support.records import broker, change, feature, noop, partition, topic, uid

T1, T2, T3 = uid(1), uid(2), uid(3)


def begin(name=None):
    return record("BeginTransactionRecord", name=name)


def end():
    return record("EndTransactionRecord")


def abort(reason=None):
    return record("AbortTransactionRecord", reason=reason)


# =========================================================================== transactions

class TestTransactions:
    def txn_log(self) -> tuple[Log, dict]:
        log = Log()
        at = {}
        at["before"] = log.add(topic("before", T1))
        at["begin"] = log.add(begin("bootstrap"))
        at["topic"] = log.add(topic("inside", T2))
        at["partition"] = log.add(partition(T2, 0))          # separate batches: a transaction
        at["end"] = log.add(end())                           # spans batches
        at["after"] = log.add(topic("after", T3))
        return log, at

    def test_applied_at_end(self, tmp_path):
        log, at = self.txn_log()
        s = open_session(log.write(tmp_path))
        assert ls(s.root, "/topics") == ["after", "before", "inside"]
        assert ls(s.root, "/topics/inside") == ["0", "id", "name"]
        assert problems(s.engine) == [] and s.engine.aborted == 0
        assert s.engine.by_type["BeginTransactionRecord"] == 1
        assert s.engine.by_type["EndTransactionRecord"] == 1
        # provenance keeps each record's own offset
        assert node(s.root, "/topics/inside").last_change()[0] == at["topic"]

    def test_nothing_shows_before_end(self, tmp_path):
        log, at = self.txn_log()
        path = log.write(tmp_path)
        s = open_session(path, until_offset=at["partition"])
        assert ls(s.root, "/topics") == ["before"]
        assert s.engine.aborted == 2
        [w] = [w for w in s.warnings if "transaction" in w]
        assert "2 record(s) dropped" in w and f"offset {at['begin']}" in w
        s = open_session(path, until_offset=at["end"])
        assert ls(s.root, "/topics") == ["before", "inside"]

    def test_dropped_at_abort(self, tmp_path):
        log = Log()
        log.add(topic("before", T1))
        log.add(begin(), topic("inside", T2), partition(T2, 0))
        log.add(abort("controller failover"))
        log.add(topic("after", T3))
        s = open_session(log.write(tmp_path))
        assert ls(s.root, "/topics") == ["after", "before"]
        assert node(s.root, f"/topicIds/{T2}") is None
        assert s.engine.aborted == 2
        assert problems(s.engine) == []
        assert s.engine.by_type["AbortTransactionRecord"] == 1

    def test_dropped_at_end_of_input_with_a_warning(self, tmp_path):
        log = Log()
        log.add(topic("before", T1))
        b = log.add(begin(), topic("inside", T2))
        s = open_session(log.write(tmp_path))
        assert ls(s.root, "/topics") == ["before"]
        assert any("ended inside a metadata transaction" in w and f"offset {b}" in w
                   for w in s.warnings)

    def test_nested_begin_is_a_problem(self, tmp_path):
        log = Log()
        log.add(begin())
        log.add(topic("one", T1))
        nested = log.add(begin())
        log.add(topic("two", T2))
        log.add(end())
        s = open_session(log.write(tmp_path))
        assert [p.offset for p in s.engine.problems] == [nested]
        assert "already in a transaction" in problems(s.engine)[0]
        # the open transaction goes on and ends at End
        assert ls(s.root, "/topics") == ["one", "two"]

    def test_end_or_abort_without_begin_is_a_problem(self, tmp_path):
        log = Log()
        e = log.add(end())
        a = log.add(abort())
        log.add(topic("foo", T1))
        s = open_session(log.write(tmp_path))
        assert [p.offset for p in s.engine.problems] == [e, a]
        assert all("without having seen a BeginTransactionRecord" in p for p in problems(s.engine))
        assert ls(s.root, "/topics") == ["foo"]

    def test_a_problem_inside_a_transaction_skips_only_that_record(self, tmp_path):
        log = Log()
        log.add(begin())
        bad = log.add(change(T1, 0, leader=1))            # no such partition
        log.add(topic("foo", T1), end())
        s = open_session(log.write(tmp_path))
        assert [p.offset for p in s.engine.problems] == [bad]
        assert ls(s.root, "/topics") == ["foo"]


# =========================================================================== snapshots

class TestSnapshots:
    def test_begin_snapshot_replaces_all_state(self, tmp_path):
        log = Log()
        log.add(broker(1), broker(2), topic("old", T1), partition(T1, 0), feature("group.version", 1),
                record("ProducerIdsRecord", brokerId=1, brokerEpoch=10, nextProducerId=5000))
        log.add(record("AccessControlEntryRecord", id=uid(900), resourceType=2, resourceName="x",
                       patternType=3, principal="User:a", host="*", operation=3, permissionType=3))
        seg = log.write(tmp_path / "log")
        snap = write_snapshot(tmp_path / "snap", 100, [
            feature("metadata.version", 27), broker(2, 20), topic("new", T2), partition(T2, 3)],
            timestamp=TS0 + 5000)

        eng = ReplayEngine()
        for batch in read_file(seg, lazy=True):
            eng.apply_batch(batch)
        eng.begin_snapshot(100, None, 1)
        for batch in read_file(snap, lazy=True):
            eng.apply_batch(batch)
        eng.end_snapshot()
        eng.finish()
        root = build_root(eng.image)
        assert ls(root, "/brokers") == ["2"]
        assert cat(root, "/brokers/2/registration")["brokerEpoch"] == 20
        assert ls(root, "/topics") == ["new"]
        assert ls(root, "/topics/new") == ["3", "id", "name"]
        assert ls(root, "/features") == ["metadata.version"]
        assert ls(root, "/acls") == []
        assert cat(root, "/producerIds/nextProducerId") == -1
        # a snapshot's entities are stamped with its last offset and its header's time
        assert node(root, "/topics/new").last_change() == (99, TS0 + 5000)
        assert node(root, "/topics/new/3/data").last_change() == (99, TS0 + 5000)
        assert cat(root, "/metadataQuorum/offset") == 99
        # a snapshot cannot say when a broker registered
        assert cat(root, "/brokers/2/registeredAt") is None

    def test_snapshot_file_alone(self, tmp_path):
        snap = write_snapshot(tmp_path, 42, [topic("foo", T1), partition(T1, 0)], epoch=3,
                              timestamp=TS0 + 7)
        s = open_session(snap)
        assert ls(s.root, "/topics") == ["foo"]
        assert node(s.root, "/topics/foo/0/data").last_change() == (41, TS0 + 7)
        assert cat(s.root, "/metadataQuorum/leaderEpoch") == 3
        assert problems(s.engine) == []

    def test_directory_skips_log_records_the_snapshot_covers(self, tmp_path):
        part = tmp_path / "__cluster_metadata-0"
        log = Log()
        log.add(topic("log-only", T1))                     # offset 0, covered by the snapshot
        log.add(topic("covered-too", T3))                  # offset 1
        after = log.add(topic("after", T2))                # offset 2: replayed
        log.write(part)
        # the snapshot of offsets 0-1 says something else (it wins for those offsets)
        write_snapshot(part, 2, [topic("from-snapshot", T1)])
        s = open_session(tmp_path)
        assert ls(s.root, "/topics") == ["after", "from-snapshot"]
        assert node(s.root, "/topics/after").last_change()[0] == after
        # and the whole log from 0 is what replaying the segment alone gives
        s = open_session(part / "00000000000000000000.log")
        assert ls(s.root, "/topics") == ["after", "covered-too", "log-only"]

    def test_snapshot_end_offset_inside_a_batch(self, tmp_path):
        # Kafka 3.x snapshots may end inside a log batch: the rest of that batch still applies
        part = tmp_path / "__cluster_metadata-0"
        log = Log()
        log.add(topic("a", T1), topic("b", T2), topic("c", T3))   # offsets 0-2, one batch
        log.write(part)
        write_snapshot(part, 2, [topic("a", T1), topic("b", T2)])
        s = open_session(tmp_path)
        assert ls(s.root, "/topics") == ["a", "b", "c"]
        assert node(s.root, "/topics/c").last_change()[0] == 2
        assert node(s.root, "/topics/a").last_change()[0] == 1


# =========================================================================== the quorum

class TestQuorum:
    def test_leader_change(self, tmp_path):
        log = Log()
        log.leader(1, voters=(1, 2, 3), epoch=4)
        log.add(topic("foo", T1))
        at = log.leader(2, voters=(1, 2, 3), epoch=5)
        s = open_session(log.write(tmp_path))
        assert cat(s.root, "/metadataQuorum/leaderId") == 2
        assert cat(s.root, "/metadataQuorum/leaderEpoch") == 5
        assert sorted(cat(s.root, "/metadataQuorum/voters")) == ["1", "2", "3"]
        assert node(s.root, "/metadataQuorum/leaderId").last_change()[0] == at
        assert [c["type"] for c in s.changes("/metadataQuorum")] == ["LeaderChangeMessage"] * 2

    def test_kraft_version_and_voters_from_a_snapshot(self, tmp_path):
        voters = [{"voterId": 3000, "voterDirectoryId": uid(80),
                   "endpoints": [{"name": "CONTROLLER", "host": "c0", "port": 9093}],
                   "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]
        snap = write_snapshot(tmp_path, 10, [feature("metadata.version", 27)], kraft_version=1,
                              voters=voters)
        s = open_session(snap)
        assert cat(s.root, "/metadataQuorum/kraftVersion") == 1
        assert cat(s.root, "/metadataQuorum/voters") == {"3000": {
            "directoryId": uid(80),
            "endpoints": [{"name": "CONTROLLER", "host": "c0", "port": 9093}],
            "kraftVersion": {"min": 0, "max": 1}}}

    def test_kraft_version_mid_log(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1))
        log.w.batch([control("KRaftVersionRecord", kRaftVersion=1)], control=True)
        s = open_session(log.write(tmp_path))
        assert cat(s.root, "/metadataQuorum/kraftVersion") == 1

    def test_offset_and_time(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1), ts=TS0)
        log.add(noop(), noop(), ts=TS0 + 1500)
        s = open_session(log.write(tmp_path))
        assert cat(s.root, "/metadataQuorum/offset") == 2
        assert cat(s.root, "/metadataQuorum/time") == "2023-11-14T22:13:21.500Z"


# =========================================================================== engine directly

class TestEngineDirect:
    def test_apply_batches_from_read_file(self, tmp_path):
        log = Log()
        log.add(broker(1, fenced=False), topic("foo", T1), partition(T1, 0))
        log.add(change(T1, 0, leader=2, isr=[2, 3]))
        eng = engine_over(log.write(tmp_path))
        t = eng.image.topic_by_name("foo")
        p = t.partition(0)
        assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (2, 1, 1, [2, 3])
        assert eng.applied == 4 and eng.skipped == 0
        assert eng.image.last_offset == 3

    def test_until_offset_stops_mid_batch(self, tmp_path):
        log = Log()
        log.add(topic("a", T1), topic("b", T2), topic("c", T3))
        eng = engine_over(log.write(tmp_path), until_offset=1)
        assert sorted(eng.image.topic_names) == ["a", "b"]
        assert eng.reached_limit and eng.image.last_offset == 1

    def test_until_time_stops_at_a_batch(self, tmp_path):
        log = Log()
        log.add(topic("a", T1), ts=TS0)
        log.add(topic("b", T2), ts=TS0 + 10)
        log.add(topic("c", T3), ts=TS0 + 20)
        eng = engine_over(log.write(tmp_path), until_time=TS0 + 10)
        assert sorted(eng.image.topic_names) == ["a", "b"]
        assert eng.image.last_time == TS0 + 10
