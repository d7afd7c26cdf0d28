"""The one builder of each metadata record shape the tests write (no tests here).

Each builder gives a :class:`metashell.kraft.writer.Out` at the newest
version unless ``version`` says otherwise, with Kafka's usual values for
the fields a test does not name (a partition's ISR is its replicas, its
leader the first replica, epochs 0), so that a test names only what it
checks. Logs and snapshots of these records: :mod:`tests.support.replay`.
"""

from __future__ import annotations

from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.writer import Out, record

MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"   # the directory id of a replica being migrated


def uid(n: int) -> str:
    """A deterministic, non-zero 22-character topic/ACL/dir id: the tests'
    only id maker, so that ``uid(n)`` names the same topic in every file."""
    return uuid_to_str((0x5EED0000_00000000_00000000_00000000 + n).to_bytes(16, "big"))


def broker(bid: int, epoch: int = 10, version: int | None = None, **fields) -> Out:
    """A RegisterBrokerRecord: fenced, one PLAINTEXT listener on host ``b<bid>``."""
    fields.setdefault("incarnationId", uid(1000 + bid))
    fields.setdefault("endPoints", [{"name": "PLAINTEXT", "host": f"b{bid}", "port": 9092,
                                     "securityProtocol": 0}])
    fields.setdefault("fenced", True)
    return record("RegisterBrokerRecord", version, brokerId=bid, brokerEpoch=epoch, **fields)


def topic(name: str, tid: str) -> Out:
    """A TopicRecord."""
    return record("TopicRecord", name=name, topicId=tid)


def partition(tid: str, pid: int, replicas=(1, 2, 3), *, version: int | None = None, **fields) -> Out:
    """A PartitionRecord of topic ``tid``: in sync, led by its first replica
    (no leader without replicas), epochs 0, unless ``fields`` say otherwise."""
    replicas = list(replicas)
    fields.setdefault("isr", list(replicas))
    fields.setdefault("leader", replicas[0] if replicas else -1)
    fields.setdefault("leaderEpoch", 0)
    fields.setdefault("partitionEpoch", 0)
    return record("PartitionRecord", version, partitionId=pid, topicId=tid, replicas=replicas,
                  **fields)


def change(tid: str, pid: int, *, version: int | None = None, **fields) -> Out:
    """A PartitionChangeRecord of partition ``pid`` of topic ``tid`` changing ``fields``."""
    return record("PartitionChangeRecord", version, partitionId=pid, topicId=tid, **fields)


def config(rtype: int, name: str, key: str, value) -> Out:
    """A ConfigRecord setting ``key`` of resource ``name`` (of type ``rtype``: 2 topic, 4 broker)."""
    return record("ConfigRecord", resourceType=rtype, resourceName=name, name=key, value=value)


def feature(name: str, level: int) -> Out:
    """A FeatureLevelRecord."""
    return record("FeatureLevelRecord", name=name, featureLevel=level)


def acl(aid: str, topic_name: str = "orders", **fields) -> Out:
    """An AccessControlEntryRecord ``aid``: User:alice allowed (3) to READ (3)
    the topic ``topic_name`` (literal, 3) from any host, unless ``fields`` say otherwise."""
    fields = dict(dict(resourceType=2, patternType=3, principal="User:alice", host="*", operation=3,
                       permissionType=3), **fields)
    return record("AccessControlEntryRecord", id=aid, resourceName=topic_name, **fields)


def scram(user: str, mechanism: int = 1, iterations: int = 4096, **fields) -> Out:
    """A UserScramCredentialRecord of ``user`` (mechanism 1: SCRAM-SHA-256,
    2: SCRAM-SHA-512) with a fixed salt and keys unless ``fields`` say otherwise."""
    fields = dict(dict(salt=b"\x01salt", storedKey=b"\x02stored", serverKey=b"\x03server"), **fields)
    return record("UserScramCredentialRecord", name=user, mechanism=mechanism, iterations=iterations,
                  **fields)


def token(tid: str, owner: str = "User:alice", **fields) -> Out:
    """A DelegationTokenRecord ``tid`` of ``owner`` (its requester too), renewed
    by User:bob, issued at 1, expiring at 2, at the latest 3, unless ``fields`` say otherwise."""
    fields = dict(dict(requester=owner, renewers=["User:bob"], issueTimestamp=1, maxTimestamp=3,
                       expirationTimestamp=2), **fields)
    return record("DelegationTokenRecord", tokenId=tid, owner=owner, **fields)


def reframed(out: Out, **framing) -> Out:
    """The record ``out`` framed otherwise in its batch: a ``key``, ``headers``,
    ``attributes`` or a ``timestamp_delta`` (what the fast path's runs must notice)."""
    return Out(spec=out.spec, version=out.version, data=out.data, **framing)


def noop() -> Out:
    """A NoOpRecord: a controller's heartbeat, one a batch."""
    return record("NoOpRecord")


def rich_cluster() -> list[Out]:
    """One record of every kind the tree shows (a controller, three brokers,
    topics ``foo`` (``uid(1)``) and ``bar`` (``uid(2)``), configs, a quota,
    an ACL, SCRAM, a token, producer ids): the cluster the tree tests walk."""
    return [
        feature("metadata.version", 27), feature("group.version", 1),
        record("RegisterControllerRecord", controllerId=3000, incarnationId=uid(500),
               zkMigrationReady=False, endPoints=[], features=[]),
        broker(1, fenced=False), broker(2, fenced=False), broker(10),
        topic("foo", uid(1)), partition(uid(1), 0), partition(uid(1), 1), partition(uid(1), 10),
        topic("bar", uid(2)), partition(uid(2), 0, [2]),
        change(uid(1), 0, leader=2),
        config(2, "foo", "retention.ms", "1000"), config(4, "", "ssl.keystore.password", "pw"),
        config(4, "1", "log.retention.hours", "1"), config(4, "10", "x", "y"),
        config(4, "2", "x", "y"),
        record("ClientQuotaRecord", entity=[{"entityType": "user", "entityName": None}],
               key="consumer_byte_rate", value=5.0, remove=False),
        acl(uid(900), "kafka-cluster", resourceType=4, principal="User:admin", operation=2),
        scram("alice", 2, 8192, salt=b"s", storedKey=b"k", serverKey=b"v"),
        token("tok", renewers=[]),
        record("ProducerIdsRecord", brokerId=1, brokerEpoch=10, nextProducerId=7000),
    ]
