"""Replay rules, record type by record type (Kafka's MetadataDelta semantics,
kafka-metadata-shell-reference.md section 4.2; contract section 4).

Each test writes records with the project's writer into a temporary
segment, loads it with ``open_session`` and checks the tree (and, where the
rule is about errors, the problem reported with the record's offset and
that the rest of the file still loads).
"""

from __future__ import annotations

import pytest

from metashell.kraft.writer import record
from tests.support.replay import Log, cat, load, ls, node, problems
from tests.support.records import (MIGRATING, acl, broker, change, config, feature, noop, partition, scram,
                                   token, topic, uid)

T1, T2, T3 = uid(1), uid(2), uid(3)


def session_of(tmp_path, log: Log, **kw):
    from metashell.session.files import open_session
    return open_session(log.write(tmp_path), **kw)


def pdata(s, topic_name: str, pid: int) -> dict:
    return cat(s.root, f"/topics/{topic_name}/{pid}/data")


# =========================================================================== brokers

class TestRegisterBroker:
    def test_v0_defaults_for_fields_it_lacks(self, tmp_path):
        s = load(tmp_path, broker(1, 5, version=0, rack="r1", fenced=False))
        reg = cat(s.root, "/brokers/1/registration")
        assert reg["brokerId"] == 1 and reg["brokerEpoch"] == 5 and reg["rack"] == "r1"
        assert reg["fenced"] is False
        assert reg["inControlledShutdown"] is False     # v1+
        assert reg["isMigratingZkBroker"] is False      # v2+
        assert reg["logDirs"] == []                     # v3+
        assert reg["listeners"] == [{"name": "PLAINTEXT", "host": "b1", "port": 9092,
                                     "securityProtocol": "PLAINTEXT"}]
        assert cat(s.root, "/brokers/1/isFenced") is False

    def test_listeners_and_features_by_name_whatever_the_record_order(self, tmp_path):
        """Kafka's snapshots write them in hash-map order, its log in the
        broker's: the same registration reads the same from either."""
        eps = [{"name": n, "host": "b1", "port": 9092 + i, "securityProtocol": i}
               for i, n in enumerate(("SSL", "INTERNAL", "PLAINTEXT"))]
        feats = [{"name": n, "minSupportedVersion": 0, "maxSupportedVersion": 1}
                 for n in ("share.version", "group.version", "kraft.version")]
        regs = []
        for order in (slice(None), slice(None, None, -1)):
            s = load(tmp_path / str(len(regs)), broker(1, endPoints=eps[order], features=feats[order]),
                     record("RegisterControllerRecord", controllerId=9, incarnationId=uid(9),
                            zkMigrationReady=False, endPoints=eps[order], features=feats[order]))
            regs.append((cat(s.root, "/brokers/1/registration"),
                         cat(s.root, "/controllers/9/registration")))
        assert regs[0] == regs[1]
        for reg in regs[0]:
            assert [e["name"] for e in reg["listeners"]] == ["INTERNAL", "PLAINTEXT", "SSL"]
            assert list(reg["features"]) == ["group.version", "kraft.version", "share.version"]

    def test_v1_in_controlled_shutdown(self, tmp_path):
        s = load(tmp_path, broker(1, version=1, inControlledShutdown=True))
        assert cat(s.root, "/brokers/1/inControlledShutdown") is True
        assert cat(s.root, "/brokers/1/registration")["inControlledShutdown"] is True

    def test_v2_migrating_zk_broker(self, tmp_path):
        s = load(tmp_path, broker(1, version=2, isMigratingZkBroker=True))
        assert cat(s.root, "/brokers/1/registration")["isMigratingZkBroker"] is True

    def test_v3_log_dirs_and_features(self, tmp_path):
        dirs = [uid(70), uid(71)]
        s = load(tmp_path, broker(1, version=3, logDirs=dirs, features=[
            {"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 29}]))
        reg = cat(s.root, "/brokers/1/registration")
        assert reg["logDirs"] == dirs
        assert reg["features"] == {"metadata.version": {"min": 7, "max": 29}}

    def test_fenced_comes_from_the_record(self, tmp_path):
        s = load(tmp_path, broker(1, fenced=True), broker(2, fenced=False))
        assert cat(s.root, "/brokers/1/isFenced") is True
        assert cat(s.root, "/brokers/2/isFenced") is False

    def test_reregistration_replaces_everything(self, tmp_path):
        s = load(tmp_path,
                 broker(1, 10, version=3, rack="a", fenced=False, inControlledShutdown=True,
                        logDirs=[uid(70)]),
                 broker(1, 11, version=3, rack=None, fenced=True, logDirs=[uid(71)]))
        reg = cat(s.root, "/brokers/1/registration")
        assert reg["brokerEpoch"] == 11 and reg["rack"] is None
        assert reg["fenced"] is True and reg["inControlledShutdown"] is False
        assert reg["logDirs"] == [uid(71)]
        assert ls(s.root, "/brokers") == ["1"]

    def test_broker_ids_sort_numerically(self, tmp_path):
        s = load(tmp_path, broker(10), broker(9), broker(100))
        assert ls(s.root, "/brokers") == ["9", "10", "100"]


class TestUnregisterBroker:
    def test_removes_the_broker(self, tmp_path):
        s = load(tmp_path, broker(1), broker(2),
                 record("UnregisterBrokerRecord", brokerId=1, brokerEpoch=10))
        assert ls(s.root, "/brokers") == ["2"]
        assert node(s.root, "/brokers/1") is None
        assert problems(s.engine) == []


class TestFenceUnfence:
    def test_epoch_must_match(self, tmp_path):
        log = Log()
        log.add(broker(1, 10, fenced=True))
        log.add(record("UnfenceBrokerRecord", id=1, epoch=10))
        bad = log.add(record("FenceBrokerRecord", id=1, epoch=9))
        s = session_of(tmp_path, log)
        assert cat(s.root, "/brokers/1/isFenced") is False
        assert [p.offset for p in s.engine.problems] == [bad]
        assert "epoch" in problems(s.engine)[0] and "offset 2" in problems(s.engine)[0]

    def test_fence_after_unfence(self, tmp_path):
        s = load(tmp_path, broker(1, 10, fenced=False), record("FenceBrokerRecord", id=1, epoch=10))
        assert cat(s.root, "/brokers/1/isFenced") is True
        assert cat(s.root, "/brokers/1/registration")["fenced"] is True

    def test_unknown_broker_is_a_problem_and_the_rest_loads(self, tmp_path):
        log = Log()
        bad1 = log.add(record("UnfenceBrokerRecord", id=7, epoch=1))
        bad2 = log.add(record("FenceBrokerRecord", id=8, epoch=1))
        log.add(broker(1), topic("after", T1))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [bad1, bad2]
        assert "broker 7" in problems(s.engine)[0] and "not registered" in problems(s.engine)[0]
        assert ls(s.root, "/brokers") == ["1"]
        assert ls(s.root, "/topics") == ["after"]
        assert any("offset 0" in w for w in s.warnings)


class TestBrokerRegistrationChange:
    def brc(self, version=None, **kw):
        kw.setdefault("brokerEpoch", 10)
        return record("BrokerRegistrationChangeRecord", version, brokerId=1, **kw)

    def test_fenced_codes(self, tmp_path):
        s = load(tmp_path, broker(1, fenced=True), self.brc(0, fenced=-1))
        assert cat(s.root, "/brokers/1/isFenced") is False
        s = load(tmp_path / "b", broker(1, fenced=False), self.brc(0, fenced=1))
        assert cat(s.root, "/brokers/1/isFenced") is True
        s = load(tmp_path / "c", broker(1, fenced=False), self.brc(0, fenced=0))
        assert cat(s.root, "/brokers/1/isFenced") is False
        s = load(tmp_path / "d", broker(1, fenced=True), self.brc(0, fenced=0))
        assert cat(s.root, "/brokers/1/isFenced") is True

    def test_controlled_shutdown(self, tmp_path):
        s = load(tmp_path, broker(1, fenced=False), self.brc(1, inControlledShutdown=1))
        assert cat(s.root, "/brokers/1/inControlledShutdown") is True
        assert cat(s.root, "/brokers/1/isFenced") is False
        # 0 = no change: it stays in controlled shutdown
        s = load(tmp_path / "b", broker(1, fenced=False), self.brc(1, inControlledShutdown=1),
                 self.brc(1, fenced=1, inControlledShutdown=0))
        assert cat(s.root, "/brokers/1/inControlledShutdown") is True
        assert cat(s.root, "/brokers/1/isFenced") is True

    def test_log_dirs_replace_only_when_non_empty(self, tmp_path):
        s = load(tmp_path, broker(1, logDirs=[uid(70)]), self.brc(2, logDirs=[uid(71), uid(72)]))
        assert cat(s.root, "/brokers/1/registration")["logDirs"] == [uid(71), uid(72)]
        s = load(tmp_path / "b", broker(1, logDirs=[uid(70)]), self.brc(2, fenced=-1, logDirs=[]))
        assert cat(s.root, "/brokers/1/registration")["logDirs"] == [uid(70)]
        assert cat(s.root, "/brokers/1/isFenced") is False

    def test_cordoned_log_dirs_4_4(self, tmp_path):
        """v4/v3 (Kafka 4.4): null = not reported (registration) or no change."""
        s = load(tmp_path, broker(1, version=4, logDirs=[uid(70)]))
        assert "cordonedLogDirs" not in cat(s.root, "/brokers/1/registration")
        s = load(tmp_path / "b", broker(1, version=4, logDirs=[uid(70)], cordonedLogDirs=[]),
                 self.brc(3, cordonedLogDirs=[uid(70)]), self.brc(3, fenced=-1))
        reg = cat(s.root, "/brokers/1/registration")
        assert reg["cordonedLogDirs"] == [uid(70)] and reg["fenced"] is False

    @pytest.mark.parametrize("fields", [{"fenced": 2}, {"fenced": -2}, {"inControlledShutdown": 2},
                                        {"inControlledShutdown": -1}])
    def test_bad_codes_are_problems_and_change_nothing(self, tmp_path, fields):
        log = Log()
        log.add(broker(1, fenced=True, logDirs=[uid(70)]))
        bad = log.add(self.brc(2, logDirs=[uid(71)], **({"fenced": -1} | fields)))
        log.add(topic("after", T1))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [bad]
        assert "unknown value" in problems(s.engine)[0]
        reg = cat(s.root, "/brokers/1/registration")
        assert reg["fenced"] is True and reg["inControlledShutdown"] is False
        assert reg["logDirs"] == [uid(70)]
        assert ls(s.root, "/topics") == ["after"]

    def test_epoch_mismatch_and_unknown_broker(self, tmp_path):
        log = Log()
        log.add(broker(1, 10, fenced=True))
        a = log.add(self.brc(0, brokerEpoch=11, fenced=-1))
        b = log.add(record("BrokerRegistrationChangeRecord", 0, brokerId=2, brokerEpoch=10, fenced=-1))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [a, b]
        assert cat(s.root, "/brokers/1/isFenced") is True


class TestRegisterController:
    def ctl(self, cid, port=9093, **kw):
        return record("RegisterControllerRecord", controllerId=cid, incarnationId=uid(500 + cid),
                      zkMigrationReady=False,
                      endPoints=[{"name": "CONTROLLER", "host": f"c{cid}", "port": port,
                                  "securityProtocol": 0}],
                      features=[{"name": "kraft.version", "minSupportedVersion": 0,
                                 "maxSupportedVersion": 1}], **kw)

    def test_adds_and_replaces(self, tmp_path):
        s = load(tmp_path, self.ctl(3001), self.ctl(3000), self.ctl(3001, port=19093))
        assert ls(s.root, "/controllers") == ["3000", "3001"]
        reg = cat(s.root, "/controllers/3001/registration")
        assert reg["controllerId"] == 3001 and reg["incarnationId"] == uid(3501)
        assert reg["listeners"] == [{"name": "CONTROLLER", "host": "c3001", "port": 19093,
                                     "securityProtocol": "PLAINTEXT"}]
        assert reg["features"] == {"kraft.version": {"min": 0, "max": 1}}

    def test_unregister_removes_the_registration_4_4(self, tmp_path):
        s = load(tmp_path, self.ctl(3000), self.ctl(3001),
                 record("UnregisterControllerRecord", controllerId=3001),
                 record("UnregisterControllerRecord", controllerId=3002))
        assert ls(s.root, "/controllers") == ["3000"]
        assert s.engine.problems == []


# =========================================================================== topics

class TestTopic:
    def test_topic_by_name_and_by_id(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), partition(T1, 1), partition(T1, 0))
        assert ls(s.root, "/topics/foo") == ["0", "1", "id", "name"]
        assert cat(s.root, "/topics/foo/id") == T1
        assert cat(s.root, "/topicIds/" + T1 + "/name") == "foo"
        assert pdata(s, "foo", 1) == cat(s.root, f"/topicIds/{T1}/1/data")

    def test_recreating_the_same_id_resets_partitions(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), partition(T1, 0), partition(T1, 1), topic("foo", T1),
                 partition(T1, 2))
        assert ls(s.root, "/topics/foo") == ["2", "id", "name"]

    def test_partitions_sort_numerically(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), *[partition(T1, p) for p in (10, 2, 1, 0)])
        assert ls(s.root, "/topics/foo")[:4] == ["0", "1", "2", "10"]


class TestPartition:
    def test_fields(self, tmp_path):
        s = load(tmp_path, topic("foo", T1),
                 partition(T1, 0, [3, 1, 2], version=2, isr=[3, 1], leader=3, leaderEpoch=4,
                           partitionEpoch=7, leaderRecoveryState=1,
                           directories=[uid(70), uid(71), uid(72)],
                           removingReplicas=[2], addingReplicas=[],
                           eligibleLeaderReplicas=[2], lastKnownElr=[1]))
        assert pdata(s, "foo", 0) == {
            "partitionId": 0, "topicId": T1, "replicas": [3, 1, 2], "isr": [3, 1],
            "removingReplicas": [2], "addingReplicas": [], "leader": 3,
            "leaderRecoveryState": 1, "leaderEpoch": 4, "partitionEpoch": 7,
            "directories": [uid(70), uid(71), uid(72)],
            "eligibleLeaderReplicas": [2], "lastKnownElr": [1]}

    def test_v0_defaults(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), partition(T1, 0, [1, 2], version=0))
        d = pdata(s, "foo", 0)
        assert d["directories"] == [MIGRATING, MIGRATING]
        assert d["eligibleLeaderReplicas"] == [] and d["lastKnownElr"] == []
        assert d["leaderRecoveryState"] == 0

    def test_a_second_record_replaces_the_partition(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), partition(T1, 0, [1, 2], leaderEpoch=5),
                 change(T1, 0, leader=2), partition(T1, 0, [4, 5], leaderEpoch=0))
        d = pdata(s, "foo", 0)
        assert d["replicas"] == [4, 5] and d["leader"] == 4 and d["leaderEpoch"] == 0
        assert d["partitionEpoch"] == 0

    def test_unknown_topic_is_a_problem_and_the_rest_loads(self, tmp_path):
        log = Log()
        bad = log.add(partition(T2, 0))
        log.add(topic("foo", T1), partition(T1, 0))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [bad]
        assert T2 in problems(s.engine)[0]
        assert ls(s.root, "/topics") == ["foo"]
        assert node(s.root, f"/topicIds/{T2}") is None


class TestPartitionChange:
    def base(self, *changes, replicas=(1, 2, 3), **pfields):
        return [topic("foo", T1), partition(T1, 0, replicas, leaderEpoch=5, partitionEpoch=9,
                                            **pfields), *changes]

    def test_merges_only_non_null_fields(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0, isr=[1, 2])))
        d = pdata(s, "foo", 0)
        assert d["isr"] == [1, 2]
        assert d["replicas"] == [1, 2, 3] and d["leader"] == 1
        assert d["removingReplicas"] == [] and d["addingReplicas"] == []
        assert d["leaderEpoch"] == 5
        assert d["partitionEpoch"] == 10

    def test_replica_moves(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0, replicas=[1, 2, 3, 4], addingReplicas=[4],
                                             removingReplicas=[3])))
        d = pdata(s, "foo", 0)
        assert d["replicas"] == [1, 2, 3, 4]
        assert d["addingReplicas"] == [4] and d["removingReplicas"] == [3]
        assert d["isr"] == [1, 2, 3]
        s = load(tmp_path / "b", *self.base(
            change(T1, 0, replicas=[1, 2, 3, 4], addingReplicas=[4], removingReplicas=[3]),
            change(T1, 0, replicas=[1, 2, 4], isr=[1, 2, 4], addingReplicas=[], removingReplicas=[])))
        d = pdata(s, "foo", 0)
        assert d["replicas"] == [1, 2, 4] and d["isr"] == [1, 2, 4]
        assert d["addingReplicas"] == [] and d["removingReplicas"] == []
        assert d["partitionEpoch"] == 11

    def test_leader_minus_two_is_no_change(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0, leader=-2, isr=[1])))
        d = pdata(s, "foo", 0)
        assert d["leader"] == 1 and d["leaderEpoch"] == 5 and d["partitionEpoch"] == 10

    @pytest.mark.parametrize("leader", [2, -1, 1])
    def test_a_leader_sets_leader_and_bumps_leader_epoch(self, tmp_path, leader):
        # even "re-electing" the same leader bumps the epoch, and -1 (no leader) is a change
        s = load(tmp_path, *self.base(change(T1, 0, leader=leader)))
        d = pdata(s, "foo", 0)
        assert d["leader"] == leader and d["leaderEpoch"] == 6 and d["partitionEpoch"] == 10

    def test_partition_epoch_always_increments(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0), change(T1, 0), change(T1, 0, leader=3)))
        d = pdata(s, "foo", 0)
        assert d["partitionEpoch"] == 12 and d["leaderEpoch"] == 6 and d["leader"] == 3

    def test_leader_recovery_state(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0, leader=2, leaderRecoveryState=1)))
        assert pdata(s, "foo", 0)["leaderRecoveryState"] == 1
        s = load(tmp_path / "b", *self.base(change(T1, 0, leaderRecoveryState=1),
                                            change(T1, 0, isr=[1], leaderRecoveryState=-1)))
        assert pdata(s, "foo", 0)["leaderRecoveryState"] == 1     # -1 = unchanged
        s = load(tmp_path / "c", *self.base(change(T1, 0, leaderRecoveryState=1),
                                            change(T1, 0, leaderRecoveryState=0)))
        assert pdata(s, "foo", 0)["leaderRecoveryState"] == 0

    def test_directories_default_to_migrating(self, tmp_path):
        # PartitionRecord v0 has none: one MIGRATING per replica; a replica change without
        # directories keeps every replica MIGRATING (resized)
        s = load(tmp_path, *self.base(change(T1, 0, version=0, replicas=[1, 2, 3, 4]),
                                      version=0))
        assert pdata(s, "foo", 0)["directories"] == [MIGRATING] * 4

    def test_all_migrating_directories_are_resized(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0, replicas=[1, 2], directories=[MIGRATING] * 3)))
        assert pdata(s, "foo", 0)["directories"] == [MIGRATING] * 2

    def test_directories_given(self, tmp_path):
        dirs = [uid(70), uid(71), uid(72)]
        s = load(tmp_path, *self.base(change(T1, 0, directories=dirs)))
        assert pdata(s, "foo", 0)["directories"] == dirs
        # null keeps them
        s = load(tmp_path / "b", *self.base(change(T1, 0, directories=dirs), change(T1, 0, isr=[1])))
        assert pdata(s, "foo", 0)["directories"] == dirs
        # a record's explicit directories are kept as given
        s = load(tmp_path / "c", *self.base(directories=dirs))
        assert pdata(s, "foo", 0)["directories"] == dirs

    def test_directories_that_do_not_fit_the_replicas_are_rejected(self, tmp_path):
        # Kafka's PartitionRegistration refuses directories whose count differs from the
        # replicas' (a replica change without directories while the old ones are real, or a
        # record whose lists differ): the record fails to replay and is skipped
        dirs = [uid(70), uid(71), uid(72)]
        log = Log()
        log.add(*self.base(directories=dirs))
        bad1 = log.add(change(T1, 0, replicas=[1, 2, 3, 4], leader=4))
        bad2 = log.add(change(T1, 0, replicas=[1, 2], directories=dirs))
        log.add(change(T1, 0, isr=[1]))
        s = session_of(tmp_path, log)
        for _ in range(2):   # the same on every look, reported once
            d = pdata(s, "foo", 0)
            assert d["replicas"] == [1, 2, 3] and d["directories"] == dirs and d["isr"] == [1]
            assert d["leader"] == 1 and d["leaderEpoch"] == 5 and d["partitionEpoch"] == 10
        assert [p.offset for p in s.engine.problems] == [bad1, bad2]
        assert "3 directories for 4 replicas" in problems(s.engine)[0]

    def test_a_partition_record_whose_directories_do_not_fit_is_skipped(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1), partition(T1, 0, [1, 2], leaderEpoch=3))
        bad = log.add(partition(T1, 0, [1, 2, 3], directories=[uid(70)]))
        log.add(partition(T1, 1, [1, 2], directories=[uid(70)]))
        s = session_of(tmp_path, log)
        assert ls(s.root, "/topics/foo") == ["0", "id", "name"]
        assert pdata(s, "foo", 0)["replicas"] == [1, 2]
        assert sorted(p.offset for p in s.engine.problems) == [bad, bad + 1]

    def test_elr(self, tmp_path):
        s = load(tmp_path, *self.base(change(T1, 0, eligibleLeaderReplicas=[2, 3], lastKnownElr=[1])))
        d = pdata(s, "foo", 0)
        assert d["eligibleLeaderReplicas"] == [2, 3] and d["lastKnownElr"] == [1]
        # null = unchanged; [] = cleared
        s = load(tmp_path / "b", *self.base(
            change(T1, 0, eligibleLeaderReplicas=[2, 3], lastKnownElr=[1]),
            change(T1, 0, isr=[1]),
            change(T1, 0, lastKnownElr=[])))
        d = pdata(s, "foo", 0)
        assert d["eligibleLeaderReplicas"] == [2, 3] and d["lastKnownElr"] == []

    def bad_changes(self, tmp_path):
        """A session of a change of no partition, of no topic, then a good one;
        and the offsets of the bad ones."""
        log = Log()
        log.add(*self.base())
        bad1 = log.add(change(T1, 5, leader=2))
        bad2 = log.add(change(T2, 0, leader=2))
        log.add(change(T1, 0, leader=2))
        return session_of(tmp_path, log), bad1, bad2

    def test_unknown_partition_is_a_problem(self, tmp_path):
        s, bad1, bad2 = self.bad_changes(tmp_path)
        # the log's changes are filed when needed (fast/pending.py): a topic's
        # when its partitions are looked at, all of them for the counts
        assert s.engine.problems == []
        assert pdata(s, "foo", 0)["leader"] == 2
        assert [p.offset for p in s.engine.problems] == [bad1]
        assert "unable to find partition" in problems(s.engine)[0].lower()
        assert f"{T1}:5" in problems(s.engine)[0]
        assert ls(s.root, "/topics/foo") == ["0", "id", "name"]
        assert s.counts()["recordsSkipped"] == 2
        assert [p.offset for p in s.engine.problems] == [bad1, bad2]

    def test_unknown_partitions_reported_in_log_order_when_all_are_filed(self, tmp_path):
        s, bad1, bad2 = self.bad_changes(tmp_path)
        assert s.counts()["byType"]["PartitionChangeRecord"] == 1
        assert [p.offset for p in s.engine.problems] == [bad1, bad2]
        assert f"{T1}:5" in problems(s.engine)[0] and f"{T2}:0" in problems(s.engine)[1]
        assert pdata(s, "foo", 0)["leader"] == 2

    def test_change_after_a_topic_is_recreated(self, tmp_path):
        # the old partitions are gone with the re-created topic
        log = Log()
        log.add(*self.base())
        log.add(topic("foo", T1))
        bad = log.add(change(T1, 0, leader=2))
        s = session_of(tmp_path, log)
        assert ls(s.root, "/topics/foo") == ["id", "name"]
        assert [p.offset for p in s.engine.problems] == [bad]


class TestRemoveTopic:
    def test_removes_topic_and_its_configs(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), partition(T1, 0), topic("bar", T2),
                 config(2, "foo", "retention.ms", "1"), config(2, "bar", "retention.ms", "2"),
                 config(4, "", "foo", "x"),
                 record("RemoveTopicRecord", topicId=T1))
        assert ls(s.root, "/topics") == ["bar"]
        assert ls(s.root, "/topicIds") == [T2]
        assert ls(s.root, "/configs/topic") == ["bar"]
        assert cat(s.root, "/configs/broker/<default>/foo") == "x"
        assert problems(s.engine) == []

    def test_same_name_recreated_with_a_new_id(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), partition(T1, 0), config(2, "foo", "a", "1"),
                 record("RemoveTopicRecord", topicId=T1), topic("foo", T2), partition(T2, 3))
        assert ls(s.root, "/topics") == ["foo"]
        assert cat(s.root, "/topics/foo/id") == T2
        assert ls(s.root, "/topics/foo") == ["3", "id", "name"]
        assert node(s.root, "/configs/topic") is None

    def test_unknown_id_is_a_problem(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1))
        bad = log.add(record("RemoveTopicRecord", topicId=T2))
        log.add(topic("bar", T3))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [bad]
        assert "no such topic" in problems(s.engine)[0]
        assert ls(s.root, "/topics") == ["bar", "foo"]


class TestClearElr:
    def setup(self):
        elr = dict(eligibleLeaderReplicas=[2], lastKnownElr=[3])
        return [topic("foo", T1), topic("bar", T2),
                partition(T1, 0, partitionEpoch=4, **elr),
                partition(T1, 1, partitionEpoch=4),                        # no ELR: untouched
                partition(T1, 2, partitionEpoch=4, lastKnownElr=[3]),      # only lastKnownElr
                partition(T2, 0, partitionEpoch=4, **elr)]

    def test_one_topic(self, tmp_path):
        s = load(tmp_path, *self.setup(), record("ClearElrRecord", topicName="foo"))
        for pid, epoch in ((0, 5), (1, 4), (2, 5)):
            d = pdata(s, "foo", pid)
            assert (d["eligibleLeaderReplicas"], d["lastKnownElr"]) == ([], [])
            assert d["partitionEpoch"] == epoch, pid
            assert d["leaderEpoch"] == 0
        d = pdata(s, "bar", 0)
        assert d["eligibleLeaderReplicas"] == [2] and d["partitionEpoch"] == 4

    def test_all_topics(self, tmp_path):
        s = load(tmp_path, *self.setup(), record("ClearElrRecord", topicName=""))
        assert [pdata(s, "foo", p)["partitionEpoch"] for p in (0, 1, 2)] == [5, 4, 5]
        d = pdata(s, "bar", 0)
        assert d["eligibleLeaderReplicas"] == [] and d["lastKnownElr"] == [] and d["partitionEpoch"] == 5

    def test_unknown_topic_is_a_problem(self, tmp_path):
        log = Log()
        log.add(*self.setup())
        bad = log.add(record("ClearElrRecord", topicName="nope"))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [bad]
        assert pdata(s, "foo", 0)["partitionEpoch"] == 4


# =========================================================================== configs, quotas

class TestConfig:
    @pytest.mark.parametrize("code,name", [(2, "topic"), (4, "broker"), (8, "broker_logger"),
                                           (16, "client_metrics"), (32, "group")])
    def test_every_resource_type(self, tmp_path, code, name):
        s = load(tmp_path, config(code, "r1", "some.key", "v1"))
        assert ls(s.root, "/configs") == [name]
        assert cat(s.root, f"/configs/{name}/r1/some.key") == "v1"

    def test_null_deletes_and_an_empty_resource_vanishes(self, tmp_path):
        s = load(tmp_path, config(2, "foo", "a", "1"), config(2, "foo", "b", "2"),
                 config(2, "bar", "a", "3"), config(2, "foo", "a", None))
        assert ls(s.root, "/configs/topic/foo") == ["b"]
        s = load(tmp_path / "b", config(2, "foo", "a", "1"), config(4, "1", "x", "y"),
                 config(2, "foo", "a", None), config(2, "foo", "never.set", None))
        assert ls(s.root, "/configs") == ["broker"]
        assert node(s.root, "/configs/topic") is None
        assert problems(s.engine) == []

    def test_overwrite(self, tmp_path):
        s = load(tmp_path, config(4, "1", "k", "old"), config(4, "1", "k", "new"))
        assert cat(s.root, "/configs/broker/1/k") == "new"

    def test_default_resource(self, tmp_path):
        s = load(tmp_path, config(4, "", "min.insync.replicas", "2"), config(4, "3", "k", "v"),
                 config(4, "1", "k", "v"))
        assert ls(s.root, "/configs/broker") == ["1", "3", "<default>"]
        assert cat(s.root, "/configs/broker/<default>/min.insync.replicas") == "2"


class TestClientQuota:
    def q(self, entity: dict, key="producer_byte_rate", value=1024.0, remove=False):
        return record("ClientQuotaRecord",
                      entity=[{"entityType": t, "entityName": n} for t, n in entity.items()],
                      key=key, value=value, remove=remove)

    def test_single_entity_and_default_name(self, tmp_path):
        s = load(tmp_path, self.q({"user": "alice"}), self.q({"user": None}, value=10.0),
                 self.q({"client-id": "c1"}, key="request_percentage", value=50.5))
        assert ls(s.root, "/clientQuotas") == ["client-id", "user"]
        assert ls(s.root, "/clientQuotas/user") == ["<default>", "alice"]
        assert cat(s.root, "/clientQuotas/user/alice/producer_byte_rate") == 1024.0
        assert cat(s.root, "/clientQuotas/user/<default>/producer_byte_rate") == 10.0
        assert cat(s.root, "/clientQuotas/client-id/c1/request_percentage") == 50.5

    def test_multi_entity_paths_use_sorted_types(self, tmp_path):
        s = load(tmp_path, self.q({"user": "alice", "client-id": "c1"}))
        assert ls(s.root, "/clientQuotas") == ["client-id"]
        assert ls(s.root, "/clientQuotas/client-id/c1") == ["user"]
        assert cat(s.root, "/clientQuotas/client-id/c1/user/alice/producer_byte_rate") == 1024.0
        assert node(s.root, "/clientQuotas/user") is None

    def test_entity_with_keys_and_extensions(self, tmp_path):
        s = load(tmp_path, self.q({"client-id": "c1"}, key="a", value=1.0),
                 self.q({"user": "u", "client-id": "c1"}, key="b", value=2.0))
        assert ls(s.root, "/clientQuotas/client-id/c1") == ["a", "user"]

    def test_remove_and_entity_vanishes(self, tmp_path):
        s = load(tmp_path, self.q({"user": "alice"}, key="a"), self.q({"user": "alice"}, key="b"),
                 self.q({"user": "bob"}, key="a"),
                 self.q({"user": "alice"}, key="a", remove=True))
        assert ls(s.root, "/clientQuotas/user/alice") == ["b"]
        s = load(tmp_path / "b", self.q({"user": "alice"}, key="a"),
                 self.q({"user": "alice"}, key="a", remove=True))
        assert ls(s.root, "/clientQuotas") == []
        assert node(s.root, "/clientQuotas/user") is None


# =========================================================================== ACLs, SCRAM, tokens

class TestAcls:
    def test_enum_names(self, tmp_path):
        s = load(tmp_path, acl(uid(901)), acl(uid(902), "grp", resourceType=3, patternType=4,
                                       operation=4, permissionType=2, host="10.0.0.1"))
        assert ls(s.root, "/acls") == sorted([uid(901), uid(902)])
        assert cat(s.root, f"/acls/{uid(901)}") == {
            "resourceType": "TOPIC", "resourceName": "orders", "patternType": "LITERAL",
            "principal": "User:alice", "host": "*", "operation": "READ", "permissionType": "ALLOW"}
        v = cat(s.root, f"/acls/{uid(902)}")
        assert (v["resourceType"], v["patternType"], v["operation"], v["permissionType"]) == \
            ("GROUP", "PREFIXED", "WRITE", "DENY")

    def test_remove_and_remove_unknown(self, tmp_path):
        log = Log()
        log.add(acl(uid(901)), acl(uid(902)))
        log.add(record("RemoveAccessControlEntryRecord", id=uid(901)))
        bad = log.add(record("RemoveAccessControlEntryRecord", id=uid(999)))
        log.add(acl(uid(903)))
        s = session_of(tmp_path, log)
        assert ls(s.root, "/acls") == sorted([uid(902), uid(903)])
        assert [p.offset for p in s.engine.problems] == [bad]
        assert uid(999) in problems(s.engine)[0]


class TestScram:
    def test_redacted_by_default(self, tmp_path):
        s = load(tmp_path, scram("alice"), scram("bob", 2, 8192))
        assert ls(s.root, "/scram") == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
        assert ls(s.root, "/scram/SCRAM-SHA-256") == ["alice"]
        assert cat(s.root, "/scram/SCRAM-SHA-256/alice") == {
            "iterations": 4096, "salt": "[redacted]", "storedKey": "[redacted]",
            "serverKey": "[redacted]"}
        assert cat(s.root, "/scram/SCRAM-SHA-512/bob")["iterations"] == 8192

    def test_shown_with_show_secrets(self, tmp_path):
        s = load(tmp_path, scram("alice"), show_secrets=True)
        assert cat(s.root, "/scram/SCRAM-SHA-256/alice") == {
            "iterations": 4096, "salt": "AXNhbHQ=", "storedKey": "AnN0b3JlZA==",
            "serverKey": "A3NlcnZlcg=="}

    def test_remove(self, tmp_path):
        s = load(tmp_path, scram("alice", 1), scram("alice", 2),
                 record("RemoveUserScramCredentialRecord", name="alice", mechanism=1),
                 record("RemoveUserScramCredentialRecord", name="nobody", mechanism=1))
        assert ls(s.root, "/scram/SCRAM-SHA-256") == []
        assert ls(s.root, "/scram/SCRAM-SHA-512") == ["alice"]
        assert problems(s.engine) == []

    def test_replaced(self, tmp_path):
        s = load(tmp_path, scram("alice", iterations=4096), scram("alice", iterations=10000))
        assert cat(s.root, "/scram/SCRAM-SHA-256/alice")["iterations"] == 10000


class TestDelegationTokens:
    def test_add_replace_remove(self, tmp_path):
        s = load(tmp_path, token("t1"), token("t2"), token("t1", expirationTimestamp=9),
                 record("RemoveDelegationTokenRecord", tokenId="t2"))
        assert ls(s.root, "/delegationTokens") == ["t1"]
        assert cat(s.root, "/delegationTokens/t1") == {
            "owner": "User:alice", "requester": "User:alice", "renewers": ["User:bob"],
            "issueTimestamp": 1, "maxTimestamp": 3, "expirationTimestamp": 9}
        assert problems(s.engine) == []


# =========================================================================== features and the rest

class TestFeatures:
    def test_levels_and_level_zero_removes(self, tmp_path):
        s = load(tmp_path, feature("metadata.version", 27), feature("group.version", 1),
                 feature("transaction.version", 2), feature("group.version", 0),
                 feature("never.set", 0))
        assert ls(s.root, "/features") == ["metadata.version", "transaction.version"]
        assert cat(s.root, "/features/metadata.version") == 27
        assert cat(s.root, "/features/transaction.version") == 2

    def test_metadata_version_changes(self, tmp_path):
        s = load(tmp_path, feature("metadata.version", 21), feature("metadata.version", 29))
        assert cat(s.root, "/features/metadata.version") == 29
        assert s.summary()["metadataVersion"]["level"] == 29


class TestProducerIds:
    def test_next_producer_id(self, tmp_path):
        s = load(tmp_path)
        assert ls(s.root, "/producerIds") == ["nextProducerId"]
        s = load(tmp_path / "b", record("ProducerIdsRecord", brokerId=1, brokerEpoch=5,
                                        nextProducerId=1000),
                 record("ProducerIdsRecord", brokerId=2, brokerEpoch=7, nextProducerId=2000))
        assert cat(s.root, "/producerIds/nextProducerId") == 2000
        assert cat(s.root, "/producerIds/lastBrokerId") == 2
        assert cat(s.root, "/producerIds/lastBrokerEpoch") == 7


class TestZkMigrationAndNoOp:
    def test_zk_migration_state(self, tmp_path):
        s = load(tmp_path, record("ZkMigrationStateRecord", zkMigrationState=2))
        assert s.image.zk_migration_state == 2
        assert problems(s.engine) == []

    def test_noop_only_moves_the_offset(self, tmp_path):
        s = load(tmp_path, topic("foo", T1), noop(), noop())
        assert cat(s.root, "/metadataQuorum/offset") == 2
        assert s.engine.by_type["NoOpRecord"] == 2
        assert cat(s.root, "/topics/foo/id") == T1
        assert node(s.root, "/topics/foo").last_change()[0] == 0


# =========================================================================== secrets

class TestSensitiveConfigs:
    KEYS = ["ssl.keystore.password", "sasl.jaas.config", "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config",
            "my.custom.password", "ssl.key.password"]

    def records(self):
        return [config(4, "1", k, "s3cret") for k in self.KEYS] + \
               [config(4, "1", "log.retention.hours", "168"), config(2, "t", "sasl.jaas.config", "x")]

    def test_redacted_by_default(self, tmp_path):
        s = load(tmp_path, *self.records())
        for k in self.KEYS:
            assert cat(s.root, f"/configs/broker/1/{k}") == "[redacted]", k
        assert cat(s.root, "/configs/topic/t/sasl.jaas.config") == "[redacted]"
        assert cat(s.root, "/configs/broker/1/log.retention.hours") == "168"

    def test_shown_with_show_secrets(self, tmp_path):
        s = load(tmp_path, *self.records(), show_secrets=True)
        for k in self.KEYS:
            assert cat(s.root, f"/configs/broker/1/{k}") == "s3cret", k

    def test_changes_never_show_them(self, tmp_path):
        s = load(tmp_path, *self.records(), show_secrets=True)
        text = repr(s.changes("/configs/broker/1"))
        assert "s3cret" not in text and "[redacted]" in text and "168" in text


# =========================================================================== undecodable records

def truncated(out, cut: int = 3):
    """The record's value with its last ``cut`` bytes missing: the frame header
    and the first fields still read, the body does not decode."""
    from metashell.kraft.writer import Out
    return Out(value=out.encoded_value()[:-cut])


class TestUndecodable:
    def test_a_bad_record_is_reported_and_skipped(self, tmp_path):
        log = Log()
        bad = log.add(truncated(topic("lost", T2)))
        log.add(topic("foo", T1))
        s = session_of(tmp_path, log)
        assert [p.offset for p in s.engine.problems] == [bad]
        assert "undecodable" in problems(s.engine)[0]
        assert ls(s.root, "/topics") == ["foo"]

    def test_changes_after_a_bad_partition_record_apply_to_the_older_one(self, tmp_path):
        # Kafka skips the undecodable PartitionRecord; the older registration stays and the
        # following change merges into it. Looking twice must give the same answer.
        log = Log()
        log.add(topic("foo", T1), partition(T1, 0, leaderEpoch=5), change(T1, 0, leader=2))
        bad = log.add(truncated(partition(T1, 0, [7, 8], leaderEpoch=50)))
        log.add(change(T1, 0, leader=3))
        s = session_of(tmp_path, log)
        assert ls(s.root, "/topics/foo") == ["0", "id", "name"]
        for _ in range(2):
            d = pdata(s, "foo", 0)
            assert d["replicas"] == [1, 2, 3] and d["leader"] == 3 and d["leaderEpoch"] == 7
            assert d["partitionEpoch"] == 2
        assert [p.offset for p in s.engine.problems] == [bad]

    def test_only_a_bad_partition_record_means_no_partition(self, tmp_path):
        log = Log()
        log.add(topic("foo", T1))
        bad = log.add(truncated(partition(T1, 0)))
        chg = log.add(change(T1, 0, leader=3))
        s = session_of(tmp_path, log)
        assert ls(s.root, "/topics/foo") == ["id", "name"]
        assert ls(s.root, "/topics/foo") == ["id", "name"]
        assert node(s.root, "/topics/foo/0") is None
        assert node(s.root, f"/topicIds/{T1}/0") is None
        assert sorted(p.offset for p in s.engine.problems) == [bad, chg]
