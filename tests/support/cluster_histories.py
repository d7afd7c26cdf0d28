"""Random small cluster histories a controller could have written (no tests here).

``history(rng)`` gives batches of records that touch every kind of entity
Kafka's image holds: brokers registering, fencing, shutting down, leaving;
controllers; topics with partitions changing and topics removed; configs of
topics and brokers (a password among them); client quotas of every entity
shape, default names included; producer ids; ACLs; SCRAM users; delegation
tokens; features. Each record is valid where it stands (a fence names a
registered broker at its epoch, a change a partition that exists), so
Kafka's shell applies them all and the two shells must agree on everything.
"""

from __future__ import annotations

import random
from pathlib import Path

from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.writer import record

METADATA_VERSIONS = (21, 24, 27)   # 3.9, 4.0, 4.1: every record here representable
FEATURES = {"group.version": (0, 1), "transaction.version": (0, 2),
            "eligible.leader.replicas.version": (0, 1)}
TOPIC_CONFIGS = {"cleanup.policy": ("delete", "compact", "compact,delete"),
                 "retention.ms": ("-1", "604800000", "3600000"),
                 "min.insync.replicas": ("1", "2"), "segment.bytes": ("1073741824",)}
BROKER_CONFIGS = {"min.insync.replicas": ("1", "2"), "log.retention.ms": ("86400000",),
                  "ssl.keystore.password": ("secret", "hunter2")}
QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
              "controller_mutation_rate")
QUOTA_VALUES = (1024.0, 1048576.0, 12.5, 1e7, 2.5e9, 0.001, 100.0)
NAMES = ("orders", "payments", "a", "Z", "b-10", "b-2", "éclair", "x.y_z")


class History:
    """The state a generated history has reached, to keep every record valid."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.brokers: dict[int, int] = {}      # id -> epoch
        self.topics: dict[str, dict] = {}      # id -> {name, partitions: {pid: replicas}}
        self.acls: set[str] = set()
        self.tokens: set[str] = set()
        # topics given configs: never removed here, since Kafka's image keeps the
        # configs set in the same delta as the removal (a Kafka bug the README lists)
        self.configured: set[str] = set()
        self.next_id = 1

    def uid(self) -> str:
        self.next_id += 1
        return uuid_to_str(self.rng.getrandbits(128).to_bytes(16, "big"))


def history(rng: random.Random, steps: int) -> list[list]:
    """``steps`` batches after a bootstrap batch (metadata.version first), and
    a last batch of one NoOpRecord: Kafka's shell may show the image before
    a log's last batch, which then changes nothing but the provenance."""
    h = History(rng)
    batches = [[record("FeatureLevelRecord", name="metadata.version",
                       featureLevel=rng.choice(METADATA_VERSIONS))]]
    makers = [_broker, _broker_change, _controller, _topic, _partition_change, _remove_topic,
              _config, _quota, _producer_ids, _acl, _scram, _token, _feature, _noop]
    for _ in range(steps):
        batch = []
        for _ in range(rng.randint(1, 4)):
            batch.extend(rng.choice(makers)(h))
        if batch:
            batches.append(batch)
    batches.append([record("NoOpRecord")])
    return batches


def _endpoints(rng, name: str) -> list:
    return [{"name": name, "host": rng.choice(("localhost", "b1.example", "10.0.0.7")),
             "port": rng.choice((9092, 9093, 19092)), "securityProtocol": rng.randint(0, 3)}]


def _features(rng) -> list:
    out = [{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 27}]
    if rng.random() < 0.5:
        out.append({"name": "group.version", "minSupportedVersion": 0, "maxSupportedVersion": 1})
    return out


def _broker(h: History) -> list:
    rng = h.rng
    bid = rng.randint(0, 12)
    epoch = h.brokers.get(bid, rng.randint(0, 50)) + rng.randint(1, 100)
    h.brokers[bid] = epoch
    dirs = [h.uid() for _ in range(rng.randint(0, 3))]
    return [record("RegisterBrokerRecord", brokerId=bid, brokerEpoch=epoch,
                   incarnationId=h.uid(), endPoints=_endpoints(rng, "PLAINTEXT"),
                   features=_features(rng), rack=rng.choice((None, "rack-a", "r2")),
                   fenced=rng.random() < 0.5, inControlledShutdown=False,
                   isMigratingZkBroker=False, logDirs=dirs)]


def _broker_change(h: History) -> list:
    rng = h.rng
    if not h.brokers:
        return _broker(h)
    bid = rng.choice(sorted(h.brokers))
    epoch = h.brokers[bid]
    kind = rng.randrange(4)
    if kind == 0:
        return [record("FenceBrokerRecord", id=bid, epoch=epoch)]
    if kind == 1:
        return [record("UnfenceBrokerRecord", id=bid, epoch=epoch)]
    if kind == 2:
        return [record("BrokerRegistrationChangeRecord", brokerId=bid, brokerEpoch=epoch,
                       fenced=rng.choice((-1, 0, 1)), inControlledShutdown=rng.choice((0, 1)),
                       logDirs=[])]
    del h.brokers[bid]
    return [record("UnregisterBrokerRecord", brokerId=bid, brokerEpoch=epoch)]


def _controller(h: History) -> list:
    rng = h.rng
    return [record("RegisterControllerRecord", controllerId=rng.randint(1, 5),
                   incarnationId=h.uid(), zkMigrationReady=rng.random() < 0.3,
                   endPoints=_endpoints(rng, "CONTROLLER"), features=_features(rng))]


def _replicas(rng) -> list:
    return rng.sample(range(0, 13), rng.randint(1, 3))


def _topic(h: History) -> list:
    rng = h.rng
    used = {t["name"] for t in h.topics.values()}
    free = [n for n in NAMES if n not in used]
    if not free:
        return _partition_change(h)
    tid, name = h.uid(), rng.choice(free)
    h.topics[tid] = {"name": name, "partitions": {}}
    out = [record("TopicRecord", name=name, topicId=tid)]
    for pid in range(rng.randint(1, 12)):
        replicas = _replicas(rng)
        h.topics[tid]["partitions"][pid] = replicas
        fields = dict(partitionId=pid, topicId=tid, replicas=replicas, isr=replicas,
                      leader=replicas[0], leaderEpoch=rng.randint(0, 3),
                      partitionEpoch=rng.randint(0, 3))
        if rng.random() < 0.5:
            out.append(record("PartitionRecord", 0, **fields))
        else:
            out.append(record("PartitionRecord", **fields,
                              directories=[h.uid() for _ in replicas]))
    return out


def _partition_change(h: History) -> list:
    rng = h.rng
    if not h.topics:
        return _topic(h)
    tid = rng.choice(sorted(h.topics))
    pid = rng.choice(sorted(h.topics[tid]["partitions"]))
    replicas = h.topics[tid]["partitions"][pid]
    fields = {"partitionId": pid, "topicId": tid}
    if rng.random() < 0.6:
        fields["isr"] = rng.sample(replicas, rng.randint(1, len(replicas)))
    fields["leader"] = rng.choice([-2, -1] + replicas)
    if rng.random() < 0.2:
        fields["leaderRecoveryState"] = rng.choice((-1, 0, 1))
    return [record("PartitionChangeRecord", 0, **fields)]


def _remove_topic(h: History) -> list:
    removable = sorted(set(h.topics) - h.configured)
    if not removable or h.rng.random() < 0.5:
        return _topic(h)
    tid = h.rng.choice(removable)
    del h.topics[tid]
    return [record("RemoveTopicRecord", topicId=tid)]


def _config(h: History) -> list:
    rng = h.rng
    if rng.random() < 0.5 and h.topics:
        tid = rng.choice(sorted(h.topics))
        h.configured.add(tid)
        rtype, name, keys = 2, h.topics[tid]["name"], TOPIC_CONFIGS
    else:
        rtype, name, keys = 4, rng.choice(("", "0", "1", "10", "2")), BROKER_CONFIGS
    key = rng.choice(sorted(keys))
    value = None if rng.random() < 0.2 else rng.choice(keys[key])
    return [record("ConfigRecord", resourceType=rtype, resourceName=name, name=key, value=value)]


def _quota(h: History) -> list:
    rng = h.rng
    types = rng.sample(("user", "client-id", "ip"), rng.randint(1, 2))
    if "ip" in types:
        types = ["ip"]
    entity = [{"entityType": t, "entityName": rng.choice(("", "alice", "app(1)", "a\\b", "10.0.0.1"))}
              for t in types]
    key = "connection_creation_rate" if types == ["ip"] else rng.choice(QUOTA_KEYS)
    return [record("ClientQuotaRecord", entity=entity, key=key, value=rng.choice(QUOTA_VALUES),
                   remove=rng.random() < 0.15)]


def _producer_ids(h: History) -> list:
    rng = h.rng
    return [record("ProducerIdsRecord", brokerId=rng.randint(0, 3), brokerEpoch=rng.randint(1, 99),
                   nextProducerId=rng.randrange(0, 10**6, 1000))]


def _acl(h: History) -> list:
    rng = h.rng
    if h.acls and rng.random() < 0.3:
        acl = rng.choice(sorted(h.acls))
        h.acls.discard(acl)
        return [record("RemoveAccessControlEntryRecord", id=acl)]
    acl = h.uid()
    h.acls.add(acl)
    return [record("AccessControlEntryRecord", id=acl, resourceType=rng.choice((2, 3, 4, 5)),
                   resourceName=rng.choice(("orders", "*", "kafka-cluster", "tx-")),
                   patternType=rng.choice((3, 4)), principal=rng.choice(("User:alice", "User:*")),
                   host=rng.choice(("*", "10.0.0.1")), operation=rng.choice((2, 3, 4, 8, 12)),
                   permissionType=rng.choice((2, 3)))]


def _scram(h: History) -> list:
    rng = h.rng
    key = (rng.choice(("alice", "bob", "svc-1")), rng.choice((1, 2)))
    # no RemoveUserScramCredentialRecord: Kafka's image loses the users of a
    # mechanism that a removal empties within one delta (a Kafka bug the README lists)
    return [record("UserScramCredentialRecord", name=key[0], mechanism=key[1],
                   salt=rng.randbytes(16), storedKey=rng.randbytes(32), serverKey=rng.randbytes(32),
                   iterations=rng.choice((4096, 8192)))]


def _token(h: History) -> list:
    rng = h.rng
    if h.tokens and rng.random() < 0.3:
        token = rng.choice(sorted(h.tokens))
        h.tokens.discard(token)
        return [record("RemoveDelegationTokenRecord", tokenId=token)]
    token = "tok-" + h.uid()[:8]
    h.tokens.add(token)
    issued = 1_700_000_000_000 + rng.randrange(10**9)
    return [record("DelegationTokenRecord", tokenId=token, owner="User:alice",
                   requester=rng.choice(("User:alice", "User:bob")),
                   renewers=rng.sample(["User:bob", "User:carol"], rng.randint(0, 2)),
                   issueTimestamp=issued, maxTimestamp=issued + 86_400_000,
                   expirationTimestamp=issued + 3_600_000)]


def _feature(h: History) -> list:
    rng = h.rng
    name = rng.choice(sorted(FEATURES))
    lo, hi = FEATURES[name]
    return [record("FeatureLevelRecord", name=name, featureLevel=rng.randint(lo, hi))]


def _noop(h: History) -> list:
    return [record("NoOpRecord")]


def write_cluster(directory: Path, seed: int, steps: int) -> Path:
    """A metadata log dir of a random history, as a controller leaves it:
    ``directory/__cluster_metadata-0/`` with the first half of the history in
    a snapshot and the rest in a log segment after it, beside a
    ``meta.properties`` naming the cluster."""
    from tests.support.records import uid
    from tests.support.replay import Log, write_snapshot

    batches = history(random.Random(seed), steps)
    head = [r for batch in batches[:len(batches) // 2] for r in batch]
    part = directory / "__cluster_metadata-0"
    write_snapshot(part, len(head), head, epoch=2)
    log = Log(base_offset=len(head), epoch=2)
    for batch in batches[len(batches) // 2:]:
        log.add(*batch)
    log.write(part)
    (directory / "meta.properties").write_text(
        f"cluster.id={uid(seed)}\nnode.id=1\nversion=1\n", encoding="utf-8")
    return directory
