#!/usr/bin/env python3
"""Write ``examples/cluster/``: the metadata log directory of controller 101 of a
small Kafka 4.2 cluster (metadata.version 4.2-IV1, level 29), one day after it
was formatted.

    python examples/make_example_cluster.py            # rewrite examples/cluster/
    python examples/make_example_cluster.py --out DIR  # write somewhere else

Everything is deterministic: fixed timestamps, UUIDs derived from names, no
randomness, so two runs give the same bytes (``tests/e2e/test_examples.py``
checks the committed files against a fresh run).

How it works: a small Python model of the cluster (``Cluster``) is changed by
one method per operator or controller action (register a broker, create a
topic, fence a broker ...). Each method updates the model *and* appends the
records a Kafka 4.2 controller writes for that action to the log. The
snapshot is written from the model at that point (in the order of Kafka's
``MetadataImage.write``), never by replaying the log, so the test that
compares the snapshot with a replay of the log checks both. Partition
changes follow Kafka 4.x's rules as far as this example needs them (leader
election from the ISR, then the ELR; ELR and last-known-ELR upkeep when an
ISR falls below min.insync.replicas).

The story, in log order (times UTC, 2026-03-02/03):

* 07:58 ``kafka-storage format`` writes ``bootstrap.checkpoint`` (metadata.version
  29, the other 4.2 feature levels, SCRAM-SHA-512 user ``admin`` via --add-scram).
* 08:00 controller 101 wins epoch 1 (LeaderChangeMessage), appends the bootstrap
  records in a "Bootstrap records" metadata transaction, controllers 101-103
  and brokers 1-3 (racks us-east-1a/b/c) register, the brokers are unfenced.
* 08:03-10:00 topics (``__consumer_offsets`` 50 partitions, ``orders`` 12,
  ``payments`` 6, ``inventory`` 4, ``tmp-load-test`` 3), a producer id block,
  ACLs, SCRAM users, client quotas, broker / broker-logger / client-metrics /
  group configs, two delegation tokens (the ``etl`` one is cancelled at 11:00).
* 12:05 broker 1 falls out of the ISR of ``payments-2`` (under-replicated).
* 14:00 broker 4 (us-east-1a) joins; ``audit-log`` (RF 2 on 4,1) and
  ``legacy-events`` (RF 1 on 4) are created on it.
* 16:00 broker 4 loses its session and is fenced: ``audit-log-0`` keeps leader 1
  with 4 in its ELR, ``legacy-events-0`` goes offline (empty ISR, ELR and
  last-known ELR [4]).
* 17:00 snapshot ``<end>-0000000001.checkpoint`` of everything above (its
  PartitionRecords v2 carry those ELR fields).
* 17:40 broker 4 is back (unfenced; ``legacy-events-0`` elects it from its ELR),
  17:41 it rejoins the ISR of ``audit-log-0``.
* 18:30 reassignment of ``orders-3`` from [1,2,3] to [4,2,3] starts (replicas
  [4,2,3,1], adding [4], removing [1]); ``tmp-load-test`` is deleted, the ACL
  and SCRAM user of ``legacy-app`` are removed.
* 19:10 kraft.version is upgraded to 1 (KRaftVersionRecord + VotersRecord with
  the three controllers' endpoints and directory ids).
* 20:00-22:15 config and quota changes (one quota added and removed again),
  alice's delegation token is renewed.
* 02:10 controller 101 fails in the middle of a metadata transaction (records
  for a topic ``clickstream-raw``); controller 102 wins epoch 2 and aborts it
  ("Controller failover"); 101 restarts and registers again.
* 05:30 broker 4 is fenced again (``orders-3``'s reassignment is now stuck).
* 07:30 rolling restart: broker 1 shuts down cleanly (controlled shutdown,
  fenced), registers again as a new incarnation, is unfenced, rejoins the ISRs
  and gets its preferred leaderships back.
* 07:50 broker 3 starts its controlled shutdown: leaders move off it and it
  leaves every ISR. The log ends there.

A real controller also appends a NoOpRecord every 500 ms while idle; this
example keeps only a few after each event so the directory stays small.
Kafka 4.2 opens metadata transactions only for its bootstrap records; the
transaction aborted at 02:10 stands in for any multi-batch write cut short by
a failover (the AbortTransactionRecord is what a 4.x controller writes then).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from metashell.kraft.primitives import uuid_to_str  # noqa: E402
from metashell.kraft.writer import (  # noqa: E402
    LogWriter, control, record, segment_name, snapshot_bytes, snapshot_name, write_file,
)

DEFAULT_OUT = HERE / "cluster"
PARTITION_DIR = "__cluster_metadata-0"
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"   # Uuid.METADATA_TOPIC_ID (0, 1)
NO_LEADER, NO_CHANGE = -1, -2
THIS_NODE = 101                                 # whose metadata log dir this is

# config resource types (ConfigRecord.ResourceType)
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
# SCRAM mechanisms
SHA256, SHA512 = 1, 2
# ACL codes (AccessControlEntryRecord)
RT_TOPIC, RT_GROUP, RT_CLUSTER, RT_TRANSACTIONAL_ID = 2, 3, 4, 5
LITERAL, PREFIXED = 3, 4
OP_READ, OP_WRITE, OP_ALTER, OP_DESCRIBE = 3, 4, 7, 8
DENY, ALLOW = 2, 3

METADATA_VERSION = 29   # 4.2-IV1
# what `kafka-storage format` writes for 4.2 besides metadata.version
FEATURES = {"eligible.leader.replicas.version": 1, "group.version": 1, "share.version": 1,
            "streams.version": 1, "transaction.version": 2}
# supported ranges a 4.2 node registers with (same order as a real 4.2 registration)
SUPPORTED = [("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 29),
             ("share.version", 0, 1), ("streams.version", 0, 1), ("transaction.version", 0, 2),
             ("eligible.leader.replicas.version", 0, 1)]

CONTROLLERS = (101, 102, 103)
RACKS = {1: "us-east-1a", 2: "us-east-1b", 3: "us-east-1c", 4: "us-east-1a"}
DAY = 24 * 3600 * 1000
TOKEN_MAX_LIFETIME = 7 * DAY     # delegation.token.max.lifetime.ms default
TOKEN_RENEW_INTERVAL = DAY       # delegation.token.expiry.time.ms default


# ---------------------------------------------------------------------------
# deterministic ids, times and secrets


def uuid_for(name: str) -> str:
    """A random-looking (version 4) Kafka UUID derived from ``name``; like
    ``Uuid.randomUuid()`` it never starts with '-' (and is never 0 or 1)."""
    n = 0
    while True:
        raw = bytearray(hashlib.sha256(f"metashell example cluster/{name}/{n}".encode()).digest()[:16])
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        text = uuid_to_str(bytes(raw))
        if not text.startswith("-"):
            return text
        n += 1


def at(text: str) -> int:
    """'2026-03-02 08:00:00.000' (UTC) -> ms since the epoch."""
    dt = datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def java_date(ms: int) -> str:
    """``java.util.Date.toString()`` in UTC, as ``Properties.store`` writes it."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")


def scram_salt(name: str) -> bytes:
    """Like ``ScramFormatter.secureRandomBytes``: a 130-bit number in base 36, as ASCII."""
    n = int.from_bytes(hashlib.sha256(f"salt/{name}".encode()).digest(), "big") >> 126
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.encode("ascii")


def scram_credential(user: str, mechanism: int, password: str, iterations: int) -> dict:
    """A UserScramCredentialRecord's fields, computed as RFC 5802 / Kafka's ScramFormatter do."""
    algo = "sha256" if mechanism == SHA256 else "sha512"
    salt = scram_salt(f"{user}/{mechanism}")
    salted = hashlib.pbkdf2_hmac(algo, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", algo).digest()
    return {"name": user, "mechanism": mechanism, "salt": salt,
            "storedKey": hashlib.new(algo, client_key).digest(),
            "serverKey": hmac.new(salted, b"Server Key", algo).digest(),
            "iterations": iterations}


# ---------------------------------------------------------------------------
# the log being written


class Log:
    """The segment being written: batches with consecutive offsets, each
    stamped with the current time of the story's clock."""

    def __init__(self, start: int):
        self.writer = LogWriter(0, epoch=1, timestamp=start)
        self.now = start
        self.last_time = start
        self.epoch_starts: list[tuple[int, int]] = []   # (epoch, start offset)

    @property
    def next_offset(self) -> int:
        return self.writer.next_offset

    def set_time(self, text: str) -> None:
        t = at(text)
        if t < self.now:
            raise ValueError(f"time goes backwards: {text}")
        self.now = t

    def later(self, ms: int) -> None:
        self.now += ms

    def append(self, records: list, *, control_batch: bool = False) -> int:
        base = self.writer.batch(records, timestamp=self.now, control=control_batch)
        self.last_time = self.now
        return base

    def idle(self, count: int = 3) -> None:
        """NoOpRecords, one batch each, 500 ms apart (metadata.max.idle.interval.ms)."""
        for _ in range(count):
            self.later(500)
            self.append([record("NoOpRecord")])

    def leader_change(self, epoch: int, leader: int, voters, granting) -> None:
        self.writer.epoch = epoch
        self.epoch_starts.append((epoch, self.next_offset))
        self.append([control("LeaderChangeMessage", leaderId=leader,
                             voters=[{"voterId": v} for v in voters],
                             grantingVoters=[{"voterId": v} for v in granting])],
                    control_batch=True)


# ---------------------------------------------------------------------------
# the cluster model


def endpoints(node: int) -> list:
    if node in CONTROLLERS:
        return [{"name": "CONTROLLER", "host": f"controller-{node}.prod.example.com",
                 "port": 9093, "securityProtocol": 1}]
    host = f"kafka-{node}.prod.example.com"
    return [{"name": "REPLICATION", "host": host, "port": 9091, "securityProtocol": 1},
            {"name": "SASL_SSL", "host": host, "port": 9094, "securityProtocol": 3}]


def supported_features() -> list:
    return [{"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi}
            for n, lo, hi in SUPPORTED]


def log_dir_id(node: int) -> str:
    return uuid_for(f"directory.id/{node}")


class Cluster:
    def __init__(self, log: Log):
        self.log = log
        self.features: dict[str, int] = {}
        self.brokers: dict[int, dict] = {}          # RegisterBrokerRecord fields, kept current
        self.controllers: dict[int, dict] = {}      # RegisterControllerRecord fields
        self.topics: dict[str, dict] = {}           # name -> {"id", "partitions": {pid: fields}}
        self.configs: dict[tuple, dict] = {}        # (type, name) -> {key: value}
        self.quotas: dict[tuple, dict] = {}         # ((type, name), ...) -> {key: value}
        self.acls: dict[str, dict] = {}             # id -> AccessControlEntryRecord fields
        self.scram: dict[tuple, dict] = {}          # (mechanism, user) -> record fields
        self.tokens: dict[str, dict] = {}           # token id -> DelegationTokenRecord fields
        self.next_producer_id = -1

    # -- features, bootstrap, quorum ------------------------------------------------

    @staticmethod
    def bootstrap_records() -> list:
        """What `kafka-storage format --release-version 4.2 --add-scram
        'SCRAM-SHA-512=[name=admin,password=...]'` puts in bootstrap.checkpoint."""
        recs = [record("FeatureLevelRecord", name="metadata.version", featureLevel=METADATA_VERSION)]
        recs += [record("FeatureLevelRecord", name=n, featureLevel=lvl)
                 for n, lvl in sorted(FEATURES.items())]
        recs.append(record("UserScramCredentialRecord",
                           **scram_credential("admin", SHA512, "admin-secret", 4096)))
        return recs

    def activate(self) -> None:
        """The first active controller: LeaderChange, then the bootstrap records in
        a transaction, plus the cluster-wide min.insync.replicas a 4.x controller
        with ELR enabled writes from its own configuration."""
        log = self.log
        log.leader_change(1, 101, CONTROLLERS, (101, 102))
        log.later(25)
        recs = [record("BeginTransactionRecord", name="Bootstrap records")]
        recs += self.bootstrap_records()
        recs.append(self._config_record(BROKER, "", "min.insync.replicas", "2"))
        recs.append(record("EndTransactionRecord"))
        log.append(recs)
        self.configs[(BROKER, "")] = {"min.insync.replicas": "2"}
        self.features["metadata.version"] = METADATA_VERSION
        self.features.update(FEATURES)
        admin = next(r for r in recs if r.spec.name == "UserScramCredentialRecord")
        self.scram[(SHA512, "admin")] = dict(admin.data)

    def register_controller(self, cid: int, incarnation: str) -> None:
        reg = {"controllerId": cid, "incarnationId": uuid_for(f"incarnation/{incarnation}"),
               "zkMigrationReady": False, "endPoints": endpoints(cid), "features": supported_features()}
        self.log.append([record("RegisterControllerRecord", **reg)])
        self.controllers[cid] = reg

    def upgrade_kraft_version(self) -> None:
        """`kafka-features upgrade --feature kraft.version=1` (4.1+): the leader
        writes KRaftVersionRecord and the voter set, with each controller's
        metadata directory id and endpoints."""
        voters = [{"voterId": c, "voterDirectoryId": log_dir_id(c),
                   "endpoints": [{"name": e["name"], "host": e["host"], "port": e["port"]}
                                 for e in endpoints(c)],
                   "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}
                  for c in CONTROLLERS]
        self.log.append([control("KRaftVersionRecord", kRaftVersion=1),
                         control("VotersRecord", voters=voters)], control_batch=True)

    # -- brokers ----------------------------------------------------------------------

    def register_broker(self, bid: int, incarnation: str) -> None:
        epoch = self.log.next_offset      # a 4.x controller uses the record's offset
        reg = {"brokerId": bid, "isMigratingZkBroker": False,
               "incarnationId": uuid_for(f"incarnation/{incarnation}"), "brokerEpoch": epoch,
               "endPoints": endpoints(bid), "features": supported_features(), "rack": RACKS[bid],
               "fenced": True, "inControlledShutdown": False, "logDirs": [log_dir_id(bid)]}
        self.log.append([record("RegisterBrokerRecord", 3, **reg)])
        self.brokers[bid] = reg

    def _change_broker(self, bid: int, version: int, **change) -> object:
        b = self.brokers[bid]
        if change.get("fenced"):
            b["fenced"] = change["fenced"] == 1
        if change.get("inControlledShutdown"):
            b["inControlledShutdown"] = True
        return record("BrokerRegistrationChangeRecord", version, brokerId=bid,
                      brokerEpoch=b["brokerEpoch"], **change)

    def unfence(self, bid: int) -> None:
        """The broker caught up: unfenced; leaderless partitions it can lead elect it."""
        recs = [self._change_broker(bid, 0, fenced=-1)]
        for name, pid, p in self._partitions():
            if p["leader"] == NO_LEADER and (bid in p["isr"] or bid in p["elr"]):
                recs.append(self._elect(name, pid, bid))
        self.log.append(recs)

    def fence(self, bid: int) -> None:
        """Heartbeats stopped: leave every ISR (Kafka writes the partition changes
        first, then the fencing record)."""
        recs = self._leave_isrs(bid)
        recs.append(self._change_broker(bid, 0, fenced=1))
        self.log.append(recs)

    def controlled_shutdown(self, bid: int) -> None:
        """The broker asks to shut down: it leaves every ISR, leaders move off it."""
        recs = [self._change_broker(bid, 1, inControlledShutdown=1)]
        recs += self._leave_isrs(bid)
        self.log.append(recs)

    def shutdown_complete(self, bid: int) -> None:
        """The last heartbeat of a broker that finished its controlled shutdown: fenced."""
        self.log.append(self._leave_isrs(bid) + [self._change_broker(bid, 0, fenced=1)])

    def rejoin_isrs(self, bid: int) -> None:
        """The restarted broker caught up: each leader adds it back to its ISRs
        (one AlterPartition request, so one batch, per leader)."""
        by_leader: dict[int, list] = {}
        for name, pid, p in self._partitions():
            if bid in p["replicas"] and bid not in p["isr"] and p["leader"] >= 0:
                by_leader.setdefault(p["leader"], []).append((name, pid, p))
        for leader, parts in sorted(by_leader.items()):
            self.log.append([self._change(name, pid, **self._target(name, p, p["isr"] + [bid], NO_CHANGE))
                             for name, pid, p in parts])
            self.log.later(137)

    def preferred_leader_election(self) -> None:
        """auto.leader.rebalance: partitions whose first replica is in the ISR
        and can lead, but does not, get it back as leader."""
        recs = []
        for name, pid, p in self._partitions():
            preferred = p["replicas"][0]
            if p["leader"] != preferred and preferred in p["isr"] and self._acceptable_leader(preferred):
                recs.append(self._change(name, pid, **self._target(name, p, p["isr"], preferred)))
        if recs:
            self.log.append(recs)

    def _acceptable_leader(self, bid: int, leaving: int | None = None) -> bool:
        b = self.brokers.get(bid)
        return b is not None and bid != leaving and not b["fenced"] and not b["inControlledShutdown"]

    # -- topics and partitions -----------------------------------------------------------

    def _partitions(self):
        for name in sorted(self.topics):
            for pid, p in sorted(self.topics[name]["partitions"].items()):
                yield name, pid, p

    def min_isr(self, topic: str) -> int:
        for key in ((TOPIC, topic), (BROKER, "")):
            value = self.configs.get(key, {}).get("min.insync.replicas")
            if value is not None:
                return int(value)
        return 1

    def topic_records(self, name: str, assignment: list[list[int]], configs: dict,
                      id_name: str | None = None) -> tuple[str, list, dict]:
        """TopicRecord, its ConfigRecords and PartitionRecords (the order a 4.x
        controller writes them in), and the new partitions' state."""
        tid = uuid_for(f"topic/{id_name or name}")
        recs = [record("TopicRecord", name=name, topicId=tid)]
        recs += [self._config_record(TOPIC, name, k, v) for k, v in configs.items()]
        parts = {}
        for pid, replicas in enumerate(assignment):
            p = {"replicas": list(replicas), "isr": list(replicas), "removingReplicas": [],
                 "addingReplicas": [], "leader": replicas[0], "leaderRecoveryState": 0,
                 "leaderEpoch": 0, "partitionEpoch": 0,
                 "directories": [log_dir_id(r) for r in replicas], "elr": [], "lastKnownElr": []}
            parts[pid] = p
            recs.append(self._partition_record(tid, pid, p, creation=True))
        return tid, recs, parts

    def create_topic(self, name: str, assignment: list[list[int]], configs: dict | None = None) -> None:
        configs = configs or {}
        tid, recs, parts = self.topic_records(name, assignment, configs)
        self.log.append(recs)
        self.topics[name] = {"id": tid, "partitions": parts}
        if configs:
            self.configs[(TOPIC, name)] = dict(configs)

    def delete_topic(self, name: str) -> None:
        t = self.topics.pop(name)
        self.configs.pop((TOPIC, name), None)
        self.log.append([record("RemoveTopicRecord", topicId=t["id"])])

    @staticmethod
    def _partition_record(tid: str, pid: int, p: dict, creation: bool = False):
        fields = {"partitionId": pid, "topicId": tid, "replicas": p["replicas"], "isr": p["isr"],
                  "removingReplicas": p["removingReplicas"], "addingReplicas": p["addingReplicas"],
                  "leader": p["leader"], "leaderRecoveryState": p["leaderRecoveryState"],
                  "leaderEpoch": p["leaderEpoch"], "partitionEpoch": p["partitionEpoch"],
                  "directories": p["directories"]}
        # PartitionRegistration.toRecord sets the ELR fields only when non-empty
        if not creation and p["elr"]:
            fields["eligibleLeaderReplicas"] = p["elr"]
        if not creation and p["lastKnownElr"]:
            fields["lastKnownElr"] = p["lastKnownElr"]
        return record("PartitionRecord", 2, **fields)

    def _change(self, topic: str, pid: int, **change):
        """A PartitionChangeRecord with the given (non-default) fields, applied to
        the model the way PartitionRegistration.merge does."""
        t = self.topics[topic]
        p = t["partitions"][pid]
        data = {"partitionId": pid, "topicId": t["id"]}
        for key, field in (("isr", "isr"), ("replicas", "replicas"),
                           ("removingReplicas", "removingReplicas"),
                           ("addingReplicas", "addingReplicas"), ("directories", "directories"),
                           ("eligibleLeaderReplicas", "elr"), ("lastKnownElr", "lastKnownElr")):
            if key in change:
                data[key] = list(change[key])
                p[field] = list(change[key])
        if change.get("leader", NO_CHANGE) != NO_CHANGE:
            data["leader"] = change["leader"]
            p["leader"] = change["leader"]
            p["leaderEpoch"] += 1
        p["partitionEpoch"] += 1
        return record("PartitionChangeRecord", 2, **data)

    def _target(self, topic: str, p: dict, target_isr: list[int], leader: int) -> dict:
        """Kafka 4.x PartitionChangeBuilder rules for an ISR change with ELR enabled
        (and the last known leader kept in lastKnownElr when the ISR empties)."""
        change: dict = {}
        if target_isr != p["isr"]:
            change["isr"] = target_isr
        if leader != NO_CHANGE:
            change["leader"] = leader
        if len(target_isr) >= self.min_isr(topic):
            elr = []
        else:
            elr = sorted((set(p["elr"]) | set(p["isr"])) - set(target_isr))
        if elr != p["elr"]:
            change["eligibleLeaderReplicas"] = elr
        if "isr" in change and not target_isr and p["lastKnownElr"] != [p["leader"]]:
            change["lastKnownElr"] = [p["leader"]]
        elif ((leader >= 0 or (p["leader"] != NO_LEADER and leader != NO_LEADER))
              and p["lastKnownElr"]):
            change["lastKnownElr"] = []
        return change

    def _leave_isrs(self, bid: int) -> list:
        """Remove ``bid`` from every ISR it is in; where it led, elect the first
        acceptable replica still in the ISR (or none)."""
        recs = []
        for name, pid, p in self._partitions():
            if bid not in p["isr"]:
                continue
            target = [r for r in p["isr"] if r != bid]
            leader = NO_CHANGE
            if p["leader"] == bid:
                leader = next((r for r in p["replicas"]
                               if r in target and self._acceptable_leader(r, bid)), NO_LEADER)
            recs.append(self._change(name, pid, **self._target(name, p, target, leader)))
        return recs

    def _elect(self, topic: str, pid: int, leader: int):
        p = self.topics[topic]["partitions"][pid]
        isr = p["isr"] if leader in p["isr"] else [leader]
        return self._change(topic, pid, **self._target(topic, p, isr, leader))

    def alter_isr(self, topic: str, pid: int, isr: list[int]) -> None:
        """An AlterPartition from the leader (ISR shrink or expand)."""
        p = self.topics[topic]["partitions"][pid]
        self.log.append([self._change(topic, pid, **self._target(topic, p, isr, NO_CHANGE))])

    def reassign(self, topic: str, pid: int, target: list[int]) -> None:
        """alterPartitionReassignments: replicas = target + the ones leaving."""
        p = self.topics[topic]["partitions"][pid]
        removing = [r for r in p["replicas"] if r not in target]
        adding = [r for r in target if r not in p["replicas"]]
        replicas = list(target) + removing
        self.log.append([self._change(topic, pid, replicas=replicas, removingReplicas=removing,
                                      addingReplicas=adding,
                                      directories=[log_dir_id(r) for r in replicas])])

    # -- configs and quotas --------------------------------------------------------------

    @staticmethod
    def _config_record(rtype: int, rname: str, key: str, value):
        return record("ConfigRecord", resourceType=rtype, resourceName=rname, name=key, value=value)

    def alter_configs(self, rtype: int, rname: str, changes: dict) -> None:
        """incrementalAlterConfigs: a value of None deletes the key."""
        recs = []
        res = self.configs.setdefault((rtype, rname), {})
        for key, value in changes.items():
            recs.append(self._config_record(rtype, rname, key, value))
            if value is None:
                res.pop(key, None)
            else:
                res[key] = value
        if not res:
            del self.configs[(rtype, rname)]
        self.log.append(recs)

    def alter_quotas(self, entity: list[tuple[str, str | None]], changes: dict) -> None:
        """alterClientQuotas: a value of None removes the key."""
        key = tuple(sorted(entity, key=lambda e: (e[0], e[1] or "")))
        quota = self.quotas.setdefault(key, {})
        recs = []
        for k, v in changes.items():
            ent = [{"entityType": t, "entityName": n} for t, n in entity]
            if v is None:
                recs.append(record("ClientQuotaRecord", entity=ent, key=k, value=0.0, remove=True))
                quota.pop(k, None)
            else:
                recs.append(record("ClientQuotaRecord", entity=ent, key=k, value=float(v)))
                quota[k] = float(v)
        if not quota:
            del self.quotas[key]
        self.log.append(recs)

    # -- security --------------------------------------------------------------------------

    def create_acls(self, acls: list[dict]) -> None:
        recs = []
        for a in acls:
            a = {"id": uuid_for(f"acl/{a['principal']}/{a['resourceName']}/{a['operation']}"), **a}
            recs.append(record("AccessControlEntryRecord", **a))
            self.acls[a["id"]] = a
        self.log.append(recs)

    def delete_acl(self, principal: str, resource: str, operation: int) -> None:
        aid = uuid_for(f"acl/{principal}/{resource}/{operation}")
        del self.acls[aid]
        self.log.append([record("RemoveAccessControlEntryRecord", id=aid)])

    def upsert_scram(self, creds: list[tuple[str, int, str, int]]) -> None:
        recs = []
        for user, mech, password, iterations in creds:
            fields = scram_credential(user, mech, password, iterations)
            recs.append(record("UserScramCredentialRecord", **fields))
            self.scram[(mech, user)] = fields
        self.log.append(recs)

    def delete_scram(self, user: str, mech: int) -> None:
        del self.scram[(mech, user)]
        self.log.append([record("RemoveUserScramCredentialRecord", name=user, mechanism=mech)])

    def create_token(self, key: str, owner: str, renewers: list[str]) -> str:
        now = self.log.now
        tok = {"owner": owner, "requester": owner, "renewers": renewers, "issueTimestamp": now,
               "maxTimestamp": now + TOKEN_MAX_LIFETIME,
               "expirationTimestamp": now + TOKEN_RENEW_INTERVAL,
               "tokenId": uuid_for(f"token/{key}")}
        self.log.append([record("DelegationTokenRecord", **tok)])
        self.tokens[tok["tokenId"]] = tok
        return tok["tokenId"]

    def renew_token(self, token_id: str) -> None:
        tok = self.tokens[token_id]
        tok["expirationTimestamp"] = min(self.log.now + TOKEN_RENEW_INTERVAL, tok["maxTimestamp"])
        self.log.append([record("DelegationTokenRecord", **tok)])

    def expire_token(self, token_id: str) -> None:
        del self.tokens[token_id]
        self.log.append([record("RemoveDelegationTokenRecord", tokenId=token_id)])

    def allocate_producer_ids(self, bid: int) -> None:
        nxt = max(self.next_producer_id, 0) + 1000   # one block of 1000 ids
        self.log.append([record("ProducerIdsRecord", brokerId=bid,
                                brokerEpoch=self.brokers[bid]["brokerEpoch"], nextProducerId=nxt)])
        self.next_producer_id = nxt

    # -- the snapshot ------------------------------------------------------------------------

    def snapshot_records(self) -> list:
        """The image as Kafka's MetadataImage.write emits it: features
        (metadata.version first), cluster (brokers, controllers), topics,
        configs, client quotas, producer ids, ACLs, SCRAM, delegation tokens."""
        recs = [record("FeatureLevelRecord", name="metadata.version",
                       featureLevel=self.features["metadata.version"])]
        recs += [record("FeatureLevelRecord", name=n, featureLevel=lvl)
                 for n, lvl in sorted(self.features.items()) if n != "metadata.version"]
        recs += [record("RegisterBrokerRecord", 3, **b) for _, b in sorted(self.brokers.items())]
        recs += [record("RegisterControllerRecord", **c) for _, c in sorted(self.controllers.items())]
        for name, t in sorted(self.topics.items()):
            recs.append(record("TopicRecord", name=name, topicId=t["id"]))
            recs += [self._partition_record(t["id"], pid, p) for pid, p in sorted(t["partitions"].items())]
        for (rtype, rname), keys in sorted(self.configs.items()):
            recs += [self._config_record(rtype, rname, k, v) for k, v in sorted(keys.items())]
        for entity, keys in sorted(self.quotas.items(), key=lambda kv: repr(kv[0])):
            ent = [{"entityType": t, "entityName": n} for t, n in entity]
            recs += [record("ClientQuotaRecord", entity=ent, key=k, value=v)
                     for k, v in sorted(keys.items())]
        if self.next_producer_id >= 0:
            # ProducerIdsImage keeps only the next id; it writes broker -1, epoch -1
            recs.append(record("ProducerIdsRecord", brokerId=-1, brokerEpoch=-1,
                               nextProducerId=self.next_producer_id))
        recs += [record("AccessControlEntryRecord", **a) for _, a in sorted(self.acls.items())]
        recs += [record("UserScramCredentialRecord", **s) for _, s in sorted(self.scram.items())]
        recs += [record("DelegationTokenRecord", **t) for _, t in sorted(self.tokens.items())]
        return recs


# ---------------------------------------------------------------------------
# the story


def spread(partitions: int, brokers: list[int], rf: int) -> list[list[int]]:
    """Round-robin replica assignment, leaders rotating over the brokers."""
    n = len(brokers)
    return [[brokers[(p + i) % n] for i in range(rf)] for p in range(partitions)]


def build() -> dict[str, bytes]:
    """Run the story; return {relative path: bytes} of every file of the log dir."""
    formatted = at("2026-03-02 07:58:12.345")
    log = Log(at("2026-03-02 08:00:00.000"))
    c = Cluster(log)
    files: dict[str, bytes] = {}

    files["bootstrap.checkpoint"] = snapshot_bytes(
        Cluster.bootstrap_records(), epoch=0, timestamp=formatted, last_contained_timestamp=0)

    # 08:00 first start: epoch 1, bootstrap, registrations
    c.activate()
    log.later(55)
    c.register_controller(101, "controller-101-a")
    log.idle(1)
    log.later(120)
    c.register_controller(102, "controller-102-a")
    log.later(340)
    c.register_controller(103, "controller-103-a")
    log.idle(2)
    for bid in (1, 2, 3):
        log.later(410 + 37 * bid)
        c.register_broker(bid, f"broker-{bid}-a")
    log.idle(2)
    for bid in (1, 2, 3):
        log.later(95)
        c.unfence(bid)
    log.idle(3)

    # 08:03 the first consumer group and the first idempotent producer
    log.set_time("2026-03-02 08:03:17.412")
    c.create_topic("__consumer_offsets", spread(50, [1, 2, 3], 3),
                   {"compression.type": "producer", "cleanup.policy": "compact",
                    "segment.bytes": "104857600"})
    log.later(1234)
    c.allocate_producer_ids(2)
    log.idle(3)

    # 08:10 application topics
    log.set_time("2026-03-02 08:10:02.118")
    c.create_topic("orders", spread(12, [1, 2, 3], 3),
                   {"retention.ms": "604800000", "min.insync.replicas": "2"})
    log.later(812)
    c.create_topic("payments", spread(6, [1, 2, 3], 3),
                   {"cleanup.policy": "compact", "min.compaction.lag.ms": "3600000"})
    log.later(640)
    c.create_topic("inventory", spread(4, [1, 2, 3], 3), {"retention.bytes": "1073741824"})
    log.idle(3)

    # 08:20 ACLs (one CreateAcls request)
    log.set_time("2026-03-02 08:20:45.003")
    c.create_acls([
        dict(resourceType=RT_TOPIC, resourceName="orders", patternType=LITERAL,
             principal="User:analytics", host="*", operation=OP_READ, permissionType=ALLOW),
        dict(resourceType=RT_GROUP, resourceName="analytics-", patternType=PREFIXED,
             principal="User:analytics", host="*", operation=OP_READ, permissionType=ALLOW),
        dict(resourceType=RT_CLUSTER, resourceName="kafka-cluster", patternType=LITERAL,
             principal="User:intern", host="*", operation=OP_ALTER, permissionType=DENY),
        dict(resourceType=RT_TOPIC, resourceName="payments", patternType=LITERAL,
             principal="User:payments-svc", host="*", operation=OP_WRITE, permissionType=ALLOW),
        dict(resourceType=RT_TRANSACTIONAL_ID, resourceName="payments-", patternType=PREFIXED,
             principal="User:payments-svc", host="*", operation=OP_WRITE, permissionType=ALLOW),
        dict(resourceType=RT_TOPIC, resourceName="orders", patternType=LITERAL,
             principal="User:legacy-app", host="10.0.0.15", operation=OP_WRITE,
             permissionType=ALLOW),
    ])
    log.idle(2)

    # 08:25 SCRAM users (kafka-configs --alter --add-config 'SCRAM-SHA-256=[...]')
    log.set_time("2026-03-02 08:25:10.500")
    c.upsert_scram([("alice", SHA256, "alice-secret", 4096), ("alice", SHA512, "alice-secret", 8192)])
    log.later(15_220)
    c.upsert_scram([("bob", SHA256, "bob-secret", 4096)])
    log.later(9_870)
    c.upsert_scram([("legacy-app", SHA256, "legacy-secret", 4096)])
    log.idle(2)

    # 08:30 client quotas
    log.set_time("2026-03-02 08:30:00.250")
    c.alter_quotas([("user", "alice")], {"producer_byte_rate": 1048576})
    log.later(3_100)
    c.alter_quotas([("client-id", "batch-loader")], {"consumer_byte_rate": 2097152})
    log.later(2_900)
    c.alter_quotas([("user", "alice"), ("client-id", "reporting")], {"request_percentage": 50})
    log.later(4_450)
    c.alter_quotas([("user", None)], {"producer_byte_rate": 5242880})
    log.later(3_010)
    c.alter_quotas([("ip", "10.0.0.15")], {"connection_creation_rate": 10})
    log.idle(2)

    # 08:40 dynamic configs: cluster default, broker 1, a logger, client metrics, a group
    log.set_time("2026-03-02 08:40:31.777")
    c.alter_configs(BROKER, "", {"message.max.bytes": "2097152"})
    log.later(21_400)
    c.alter_configs(BROKER, "1", {
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config":
            'org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="broker-1" password="broker-1-scram-secret";',
        "ssl.keystore.location": "/etc/kafka/secrets/kafka-1.keystore.p12",
        "ssl.keystore.password": "kafka-1-keystore-secret",
        "log.cleaner.threads": "2",
    })
    log.later(8_600)
    # Kafka applies logger levels on the broker itself and does not store them in
    # the metadata log; ConfigRecord allows the type, so one is here to show it
    c.alter_configs(BROKER_LOGGER, "1", {"kafka.server.ReplicaFetcherThread": "DEBUG"})
    log.later(30_050)
    c.alter_configs(CLIENT_METRICS, "producer-metrics", {
        "metrics": "org.apache.kafka.producer.", "interval.ms": "60000",
        "match": "client_software_name=apache-kafka-java"})
    log.later(12_345)
    c.alter_configs(GROUP, "analytics-etl", {"consumer.session.timeout.ms": "60000",
                                             "consumer.heartbeat.interval.ms": "10000"})
    log.idle(2)

    # 09:15 delegation tokens
    log.set_time("2026-03-02 09:15:08.021")
    alice_token = c.create_token("alice-1", "User:alice", ["User:bob"])
    log.later(64_300)
    etl_token = c.create_token("etl-1", "User:etl", [])
    log.idle(2)

    # 10:00 a load test topic (deleted again after the snapshot)
    log.set_time("2026-03-02 10:00:12.640")
    c.create_topic("tmp-load-test", spread(3, [2, 3, 1], 2), {"retention.ms": "3600000"})
    log.idle(2)

    # 11:00 the etl token is cancelled
    log.set_time("2026-03-02 11:00:40.900")
    c.expire_token(etl_token)
    log.idle(2)

    # 12:05 broker 1 falls behind on payments-2
    log.set_time("2026-03-02 12:05:03.310")
    isr = [r for r in c.topics["payments"]["partitions"][2]["isr"] if r != 1]
    c.alter_isr("payments", 2, isr)
    log.idle(2)

    # 13:00 the next block of producer ids
    log.set_time("2026-03-02 13:00:27.004")
    c.allocate_producer_ids(3)
    log.idle(2)

    # 14:00 broker 4 joins, gets two topics
    log.set_time("2026-03-02 14:00:05.520")
    c.register_broker(4, "broker-4-a")
    log.later(1_460)
    c.unfence(4)
    log.idle(2)
    log.set_time("2026-03-02 14:20:00.115")
    c.create_topic("audit-log", [[4, 1]], {"retention.ms": "-1", "min.insync.replicas": "2"})
    log.later(2_250)
    c.create_topic("legacy-events", [[4]], {"min.insync.replicas": "1"})
    log.idle(2)

    # 16:00 broker 4 loses its session
    log.set_time("2026-03-02 16:00:09.000")
    c.fence(4)
    log.idle(3)
    log.set_time("2026-03-02 16:59:59.000")
    log.idle(2)

    # 17:00 the controller takes a snapshot of everything so far
    log.set_time("2026-03-02 17:00:00.000")
    snap_end = log.next_offset
    snap_records = c.snapshot_records()
    files[f"{PARTITION_DIR}/{snapshot_name(snap_end, 1)}"] = snapshot_bytes(
        snap_records, epoch=1, timestamp=at("2026-03-02 17:00:00.412"),
        last_contained_timestamp=log.last_time)
    log.idle(2)

    # 17:40 broker 4 is back
    log.set_time("2026-03-02 17:40:33.870")
    c.unfence(4)
    log.later(1_020)
    c.alter_isr("audit-log", 0, [1, 4])
    log.idle(2)

    # 18:30 move orders-3 from broker 1 to broker 4; clean-ups
    log.set_time("2026-03-02 18:30:00.640")
    c.reassign("orders", 3, [4, 2, 3])
    log.idle(2)
    log.set_time("2026-03-02 18:45:10.002")
    c.delete_topic("tmp-load-test")
    log.later(40_100)
    c.delete_acl("User:legacy-app", "orders", OP_WRITE)
    log.later(5_300)
    c.delete_scram("legacy-app", SHA256)
    log.idle(2)

    # 19:10 kraft.version 1 (dynamic quorum)
    log.set_time("2026-03-02 19:10:44.180")
    c.upgrade_kraft_version()
    log.idle(2)

    # 20:00 - 22:15 config and quota changes, a token renewal
    log.set_time("2026-03-02 20:00:03.500")
    c.alter_configs(TOPIC, "orders", {"retention.ms": "259200000"})
    log.later(14_000)
    c.alter_configs(TOPIC, "inventory", {"retention.bytes": None})
    log.later(9_800)
    c.alter_configs(GROUP, "analytics-etl", {"consumer.session.timeout.ms": "45000"})
    log.idle(2)
    log.set_time("2026-03-02 20:30:12.000")
    c.alter_quotas([("user", "alice")], {"consumer_byte_rate": 4194304})
    log.later(7_700)
    c.alter_quotas([("client-id", "perf-test")], {"producer_byte_rate": 104857600})
    log.idle(2)
    log.set_time("2026-03-02 21:00:00.980")
    c.alter_quotas([("client-id", "perf-test")], {"producer_byte_rate": None})
    log.idle(2)
    log.set_time("2026-03-02 22:15:31.065")
    c.renew_token(alice_token)
    log.idle(2)

    # 02:10 controller 101 fails with a metadata transaction open; 102 takes over
    log.set_time("2026-03-03 02:10:00.030")
    _, txn_recs, _ = c.topic_records("clickstream-raw", spread(24, [1, 2, 3], 3),
                                     {"retention.ms": "86400000"})
    log.append([record("BeginTransactionRecord", name="create clickstream-raw")] + txn_recs[:14])
    log.later(4)
    log.append(txn_recs[14:])
    log.set_time("2026-03-03 02:10:02.118")
    log.leader_change(2, 102, CONTROLLERS, (102, 103))
    log.later(31)
    log.append([record("AbortTransactionRecord", reason="Controller failover")])
    log.idle(2)
    log.set_time("2026-03-03 02:10:41.555")
    c.register_controller(101, "controller-101-b")
    log.idle(2)

    # 05:30 broker 4 fenced again
    log.set_time("2026-03-03 05:30:17.250")
    c.fence(4)
    log.idle(2)

    # 07:30 rolling restart: broker 1 restarts cleanly ...
    log.set_time("2026-03-03 07:30:00.125")
    c.controlled_shutdown(1)
    log.later(6_310)
    c.shutdown_complete(1)
    log.idle(2)
    log.set_time("2026-03-03 07:31:40.802")
    c.register_broker(1, "broker-1-b")
    log.later(2_210)
    c.unfence(1)
    log.later(7_400)
    c.rejoin_isrs(1)
    log.idle(2)
    log.set_time("2026-03-03 07:36:40.000")
    c.preferred_leader_election()
    log.idle(2)

    # 07:50 ... then broker 3 starts its controlled shutdown
    log.set_time("2026-03-03 07:50:00.470")
    c.controlled_shutdown(3)
    log.idle(4)

    part = PARTITION_DIR
    files[f"{part}/{segment_name(0)}"] = log.writer.getvalue()
    files[f"{part}/leader-epoch-checkpoint"] = (
        f"0\n{len(log.epoch_starts)}\n"
        + "".join(f"{e} {o}\n" for e, o in log.epoch_starts)).encode()
    files[f"{part}/partition.metadata"] = f"version: 0\ntopic_id: {METADATA_TOPIC_ID}".encode()
    # node 101 restarted as a follower of 102 in epoch 2, after kraft.version 1
    files[f"{part}/quorum-state"] = json.dumps(
        {"leaderId": 102, "leaderEpoch": 2, "votedId": -1,
         "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1},
        separators=(",", ":")).encode()
    files["meta.properties"] = (
        f"#\n#{java_date(formatted)}\n"
        f"cluster.id={uuid_for('cluster.id')}\n"
        f"directory.id={log_dir_id(THIS_NODE)}\n"
        f"node.id={THIS_NODE}\n"
        f"version=1\n").encode()
    return files


def write(out: Path) -> list[Path]:
    """Write the files under ``out``. Snapshots and segments a previous run
    left in ``out/__cluster_metadata-0/`` that this run did not write are
    removed (nothing else is touched). Returns the paths written."""
    files = build()
    written = []
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, data)
        written.append(path)
    keep = {p.name for p in written}
    for p in (out / PARTITION_DIR).iterdir():
        if p.is_file() and p.name not in keep and p.name.endswith((".checkpoint", ".log")):
            p.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write the example KRaft metadata log directory.")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help=f"output directory (default: {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    written = write(args.out)
    total = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files, {total} bytes, to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
