"""The bundled example cluster (examples/cluster/, made by
examples/make_example_cluster.py): the committed files are what the script
writes, the directory loads cleanly and shows what the script meant, and its
snapshot agrees with the log it was taken from."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO
from metashell.fs.walk import walk
from metashell.loader.side_files import read_meta_properties, read_quorum_state
from metashell.loader.reader import FileReader
from metashell.session.files import open_session

SCRIPT = REPO / "examples" / "make_example_cluster.py"
CLUSTER = REPO / "examples" / "cluster"
PART = CLUSTER / "__cluster_metadata-0"
SEGMENT = PART / "00000000000000000000.log"

# the story's fixed points (see the script's docstring)
TOPIC_PARTITIONS = {"__consumer_offsets": 50, "audit-log": 1, "inventory": 4,
                    "legacy-events": 1, "orders": 12, "payments": 6}
CONTROLLERS = [101, 102, 103]
BROKERS = [1, 2, 3, 4]
COMPARED_ROOTS = ("topics", "topicIds", "brokers", "controllers", "configs", "acls",
                  "clientQuotas", "scram", "delegationTokens", "features", "producerIds")


def snapshot_path() -> Path:
    snaps = sorted(PART.glob("*.checkpoint"))
    assert len(snaps) == 1, snaps
    return snaps[0]


def snapshot_end_offset() -> int:
    return int(snapshot_path().name[:20])


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def node(session, path: str):
    n = session.root
    for part in path.strip("/").split("/"):
        n = n.child(part)
        assert n is not None, f"{path}: no such file or directory (at {part!r})"
    return n


def value(session, path: str):
    n = node(session, path)
    assert not n.is_dir, f"{path} is a directory"
    return n.value()


def ls(session, path: str) -> list[str]:
    return node(session, path).children()


def leaves(session, roots=COMPARED_ROOTS) -> dict[str, object]:
    """Every file under ``roots`` with its value, except ``registeredAt`` (a
    snapshot does not say when a broker registered)."""
    out = {}
    for top in roots:
        start = session.root.child(top)
        if start is None:
            continue
        for path, n in walk(start, "/" + top):
            if not n.is_dir and not path.endswith("/registeredAt"):
                out[path] = n.value()
    return out


@pytest.fixture(scope="module")
def session():
    return open_session(CLUSTER)


@pytest.fixture(scope="module")
def secrets():
    return open_session(CLUSTER, show_secrets=True)


# ---------------------------------------------------------------------------
# the committed files are the script's output


def test_regenerating_gives_byte_identical_files(tmp_path):
    out = tmp_path / "cluster"
    run = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    fresh, committed = files_under(out), files_under(CLUSTER)
    assert sorted(fresh) == sorted(committed), "file list differs: run the script and commit"
    for name in committed:
        assert fresh[name] == committed[name], \
            f"{name} differs from the script's output: run python examples/make_example_cluster.py"


def test_the_readme_names_the_current_snapshot():
    readme = (REPO / "examples" / "README.md").read_text()
    assert snapshot_path().name in readme
    assert f"--until-offset {snapshot_end_offset() - 1}" in readme


def test_the_directory_is_small_and_complete():
    files = files_under(CLUSTER)
    assert sum(len(b) for b in files.values()) < 200_000
    assert {"meta.properties", "bootstrap.checkpoint",
            "__cluster_metadata-0/quorum-state", "__cluster_metadata-0/leader-epoch-checkpoint",
            "__cluster_metadata-0/partition.metadata",
            "__cluster_metadata-0/00000000000000000000.log"} <= set(files)


# ---------------------------------------------------------------------------
# the small files


def test_meta_properties():
    meta = read_meta_properties(CLUSTER / "meta.properties")
    assert meta["version"] == 1 and meta["node.id"] == 101
    assert len(meta["cluster.id"]) == 22 and len(meta["directory.id"]) == 22
    text = (CLUSTER / "meta.properties").read_text()
    assert text.startswith("#\n#Mon Mar 02 07:58:12 UTC 2026\n")


def test_quorum_state_leader_epoch_checkpoint_and_partition_metadata():
    qs = read_quorum_state(PART / "quorum-state")
    assert qs == {"leaderId": 102, "leaderEpoch": 2, "votedId": -1,
                  "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1}
    leader_changes = [(b.header.epoch, b.header.base_offset) for b in FileReader(SEGMENT)
                      if b.records[0].name == "LeaderChangeMessage"]
    lines = (PART / "leader-epoch-checkpoint").read_text().split("\n")
    assert lines[:2] == ["0", str(len(leader_changes))]
    assert [tuple(map(int, x.split())) for x in lines[2:-1]] == leader_changes
    assert [e for e, _ in leader_changes] == [1, 2]
    assert lines[-1] == ""
    assert (PART / "partition.metadata").read_bytes() == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"


def test_bootstrap_checkpoint_is_what_the_log_starts_with():
    batches = list(FileReader(CLUSTER / "bootstrap.checkpoint"))
    names = [r.name for b in batches for r in b.records]
    assert names[0] == "SnapshotHeaderRecord" and names[-1] == "SnapshotFooterRecord"
    assert batches[0].records[0].data["lastContainedLogTimestamp"] == 0
    assert all(b.header.epoch == 0 for b in batches)
    boot = [(r.name, r.data) for b in batches[1:-1] for r in b.records]
    assert boot[0] == ("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 29})
    assert [d["name"] for n, d in boot if n == "FeatureLevelRecord"][1:] == [
        "eligible.leader.replicas.version", "group.version", "share.version", "streams.version",
        "transaction.version"]
    assert [(d["name"], d["mechanism"]) for n, d in boot if n == "UserScramCredentialRecord"] == [
        ("admin", 2)]

    log = list(FileReader(SEGMENT))
    assert log[0].is_control and [r.name for r in log[0].records] == ["LeaderChangeMessage"]
    txn = log[1].records
    assert txn[0].name == "BeginTransactionRecord" and txn[0].data["name"] == "Bootstrap records"
    assert txn[-1].name == "EndTransactionRecord"
    assert [(r.name, r.data) for r in txn[1:1 + len(boot)]] == boot


def test_batches_look_like_a_kafka_4_controller_wrote_them():
    last_ts, last_epoch, offset = 0, 0, 0
    for b in FileReader(SEGMENT):
        h = b.header
        assert h.base_offset == offset
        offset = h.base_offset + h.last_offset_delta + 1
        assert h.codec == 0 and h.producer_id == -1 and h.base_sequence == -1
        assert h.base_timestamp == h.max_timestamp >= last_ts
        assert h.epoch >= last_epoch
        last_ts, last_epoch = h.base_timestamp, h.epoch
        for r in b.records:
            if r.name == "PartitionRecord" or r.name == "PartitionChangeRecord":
                assert r.version == 2
            if r.name == "RegisterBrokerRecord":
                assert r.version == 3 and r.data["logDirs"]
    # about a day of appends
    first = next(iter(FileReader(SEGMENT))).header.base_timestamp
    assert 20 * 3600_000 < last_ts - first < 26 * 3600_000


# ---------------------------------------------------------------------------
# loading the directory


def test_loads_snapshot_then_log_without_warnings(session):
    assert session.warnings == []
    assert session.engine.skipped == 0
    loaded = value(session, "/local/loaded")
    assert loaded == {"snapshot": snapshot_path().name, "segments": [SEGMENT.name]}
    assert value(session, "/local/clusterId") == read_meta_properties(
        CLUSTER / "meta.properties")["cluster.id"]
    assert value(session, "/local/nodeId") == 101


def test_topics_and_partition_counts(session):
    assert ls(session, "/topics") == sorted(TOPIC_PARTITIONS)
    for name, count in TOPIC_PARTITIONS.items():
        assert [c for c in ls(session, f"/topics/{name}") if c not in ("id", "name")] == \
            [str(i) for i in range(count)]
        tid = value(session, f"/topics/{name}/id")
        assert value(session, f"/topicIds/{tid}/name") == name
    assert len(ls(session, "/topicIds")) == len(TOPIC_PARTITIONS)
    data = value(session, "/topics/orders/0/data")
    assert len(data["replicas"]) == 3 and len(data["directories"]) == 3


def test_topic_configs(session):
    assert value(session, "/configs/topic/orders/min.insync.replicas") == "2"
    assert value(session, "/configs/topic/orders/retention.ms") == "259200000"   # changed after the snapshot
    assert value(session, "/configs/topic/payments/cleanup.policy") == "compact"
    assert value(session, "/configs/topic/__consumer_offsets/cleanup.policy") == "compact"
    assert "inventory" not in ls(session, "/configs/topic")   # its only key was deleted


def test_reassignment_in_progress(session):
    d = value(session, "/topics/orders/3/data")
    assert d["replicas"] == [4, 2, 3, 1]
    assert d["addingReplicas"] == [4] and d["removingReplicas"] == [1]
    assert 4 not in d["isr"] and len(d["directories"]) == 4
    changes = session.changes("/topics/orders/3")
    assert any(c["type"] == "PartitionChangeRecord" and "addingReplicas [4]" in c["summary"]
               for c in changes)


def test_under_replicated_offline_and_elr(session):
    offline = value(session, "/topics/legacy-events/0/data")
    assert offline["leader"] == -1 and offline["isr"] == []
    assert offline["eligibleLeaderReplicas"] == [4] and offline["lastKnownElr"] == [4]
    audit = value(session, "/topics/audit-log/0/data")
    assert audit["replicas"] == [4, 1] and audit["isr"] == [1] and audit["leader"] == 1
    assert audit["eligibleLeaderReplicas"] == [4]
    summary = session.summary()
    assert summary["offlinePartitions"] == 1
    assert summary["underReplicatedPartitions"] > 0
    assert summary["partitions"] == sum(TOPIC_PARTITIONS.values())
    # the snapshot's PartitionRecords (v2) carry the ELR fields
    recs = [r for b in FileReader(snapshot_path()) for r in b.records if r.name == "PartitionRecord"]
    assert all(r.version == 2 for r in recs)
    assert sum(1 for r in recs if r.data["eligibleLeaderReplicas"]) >= 2
    assert any(r.data["lastKnownElr"] for r in recs)


def test_brokers_and_controllers(session):
    assert ls(session, "/brokers") == [str(b) for b in BROKERS]
    assert [value(session, f"/brokers/{b}/isFenced") for b in BROKERS] == [False, False, False, True]
    assert [value(session, f"/brokers/{b}/inControlledShutdown") for b in BROKERS] == \
        [False, False, True, False]
    reg = value(session, "/brokers/3/registration")
    assert reg["rack"] == "us-east-1c" and reg["inControlledShutdown"] is True
    assert [(e["name"], e["securityProtocol"]) for e in reg["listeners"]] == [
        ("REPLICATION", "SSL"), ("SASL_SSL", "SASL_SSL")]
    assert len(reg["logDirs"]) == 1
    assert reg["features"]["metadata.version"] == {"min": 7, "max": 29}
    # broker 1 restarted after the snapshot; the others were registered before it, and
    # their times come from the batch headers of the segment the snapshot covers
    assert value(session, "/brokers/1/registeredAt").startswith("2026-03-03T07:31:40")
    assert value(session, "/brokers/2/registeredAt").startswith("2026-03-02T08:00:02")
    assert value(session, "/brokers/4/registeredAt").startswith("2026-03-02T14:00:05")
    assert session.image.brokers[2].registered_at is None
    assert ls(session, "/controllers") == [str(c) for c in CONTROLLERS]
    assert value(session, "/controllers/101/registration")["listeners"][0]["name"] == "CONTROLLER"


def test_broker_and_other_configs_with_redaction(session, secrets):
    assert value(session, "/configs/broker/<default>/min.insync.replicas") == "2"
    jaas = "/configs/broker/1/listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"
    password = "/configs/broker/1/ssl.keystore.password"
    assert value(session, jaas) == "[redacted]"
    assert value(session, password) == "[redacted]"
    assert value(session, "/configs/broker/1/log.cleaner.threads") == "2"
    assert "ScramLoginModule" in value(secrets, jaas)
    assert value(secrets, password) == "kafka-1-keystore-secret"
    assert value(session, "/configs/broker_logger/1/kafka.server.ReplicaFetcherThread") == "DEBUG"
    assert value(session, "/configs/client_metrics/producer-metrics/interval.ms") == "60000"
    assert value(session, "/configs/group/analytics-etl/consumer.session.timeout.ms") == "45000"


def test_acls(session):
    acls = [value(session, f"/acls/{a}") for a in ls(session, "/acls")]
    assert len(acls) == 5
    assert {"resourceType": "TOPIC", "resourceName": "orders", "patternType": "LITERAL",
            "principal": "User:analytics", "host": "*", "operation": "READ",
            "permissionType": "ALLOW"} in acls
    assert any(a["resourceType"] == "GROUP" and a["patternType"] == "PREFIXED" for a in acls)
    assert any(a["resourceType"] == "CLUSTER" and a["operation"] == "ALTER"
               and a["permissionType"] == "DENY" for a in acls)
    assert not any(a["principal"] == "User:legacy-app" for a in acls)   # removed


def test_client_quotas(session):
    assert value(session, "/clientQuotas/user/alice/producer_byte_rate") == 1048576.0
    assert value(session, "/clientQuotas/user/alice/consumer_byte_rate") == 4194304.0
    assert value(session, "/clientQuotas/user/<default>/producer_byte_rate") == 5242880.0
    assert value(session, "/clientQuotas/client-id/batch-loader/consumer_byte_rate") == 2097152.0
    assert value(session, "/clientQuotas/client-id/reporting/user/alice/request_percentage") == 50.0
    assert value(session, "/clientQuotas/ip/10.0.0.15/connection_creation_rate") == 10.0
    assert "perf-test" not in ls(session, "/clientQuotas/client-id")    # removed


def test_scram_users(session, secrets):
    assert ls(session, "/scram/SCRAM-SHA-256") == ["alice", "bob"]
    assert ls(session, "/scram/SCRAM-SHA-512") == ["admin", "alice"]
    assert value(session, "/scram/SCRAM-SHA-256/alice")["salt"] == "[redacted]"
    for mech, size in (("SCRAM-SHA-256", 32), ("SCRAM-SHA-512", 64)):
        for user in ls(secrets, f"/scram/{mech}"):
            cred = value(secrets, f"/scram/{mech}/{user}")
            assert len(base64.b64decode(cred["storedKey"])) == size
            assert len(base64.b64decode(cred["serverKey"])) == size
            assert cred["iterations"] >= 4096 and base64.b64decode(cred["salt"])


def test_delegation_tokens(session):
    tokens = ls(session, "/delegationTokens")
    assert len(tokens) == 1     # the etl token was removed
    tok = value(session, f"/delegationTokens/{tokens[0]}")
    assert tok["owner"] == tok["requester"] == "User:alice"
    assert tok["renewers"] == ["User:bob"]
    # renewed at 22:15: expires a day after the renewal, within the max lifetime
    assert tok["issueTimestamp"] < tok["expirationTimestamp"] <= tok["maxTimestamp"]
    assert tok["expirationTimestamp"] - tok["issueTimestamp"] > 24 * 3600_000


def test_features_producer_ids_and_quorum(session):
    assert value(session, "/features/metadata.version") == 29
    assert value(session, "/features/transaction.version") == 2
    assert "kraft.version" not in ls(session, "/features")
    assert value(session, "/producerIds/nextProducerId") == 2000
    assert value(session, "/metadataQuorum/leaderId") == 102
    assert value(session, "/metadataQuorum/leaderEpoch") == 2
    assert value(session, "/metadataQuorum/kraftVersion") == 1
    voters = value(session, "/metadataQuorum/voters")
    assert sorted(voters) == [str(c) for c in CONTROLLERS]
    assert voters["101"]["directoryId"] == read_meta_properties(
        CLUSTER / "meta.properties")["directory.id"]
    assert voters["102"]["endpoints"] == [
        {"name": "CONTROLLER", "host": "controller-102.prod.example.com", "port": 9093}]


def test_removed_and_aborted_things_are_absent(session):
    # in the files ...
    names = {r.data["name"] for b in FileReader(SEGMENT) for r in b.records
             if r.name == "TopicRecord"}
    assert {"tmp-load-test", "clickstream-raw"} <= names
    kinds = {r.name for b in FileReader(SEGMENT) for r in b.records}
    assert {"RemoveTopicRecord", "AbortTransactionRecord", "RemoveAccessControlEntryRecord",
            "RemoveUserScramCredentialRecord", "RemoveDelegationTokenRecord"} <= kinds
    # ... but not in the cluster
    for topic in ("tmp-load-test", "clickstream-raw"):
        assert topic not in ls(session, "/topics")
        assert topic not in ls(session, "/configs/topic")
    assert "legacy-app" not in ls(session, "/scram/SCRAM-SHA-256")
    assert session.counts()["recordsDropped"] > 0


# ---------------------------------------------------------------------------
# the snapshot agrees with the log


def test_snapshot_is_batch_aligned_and_well_formed():
    end = snapshot_end_offset()
    assert end in {b.header.base_offset for b in FileReader(SEGMENT)}
    log_epoch = max(b.header.epoch for b in FileReader(SEGMENT) if b.header.base_offset < end)
    assert snapshot_path().name.endswith(f"-{log_epoch:010d}.checkpoint")
    batches = list(FileReader(snapshot_path()))
    assert [r.name for r in batches[0].records] == ["SnapshotHeaderRecord"]
    assert [r.name for r in batches[-1].records] == ["SnapshotFooterRecord"]
    last_ts = max(b.header.max_timestamp for b in FileReader(SEGMENT) if b.header.base_offset < end)
    assert batches[0].records[0].data["lastContainedLogTimestamp"] == last_ts
    first = batches[1].records[0]
    assert first.name == "FeatureLevelRecord" and first.data["name"] == "metadata.version"


def test_snapshot_equals_the_log_replayed_to_its_end():
    end = snapshot_end_offset()
    snap = open_session(snapshot_path())
    log = open_session(SEGMENT, until_offset=end - 1)
    assert snap.warnings == [] and log.warnings == []
    a, b = leaves(snap), leaves(log)
    # Kafka's ProducerIdsImage keeps only the next id: a snapshot's
    # ProducerIdsRecord says broker -1, epoch -1, so only nextProducerId compares
    for side in (a, b):
        for key in ("/producerIds/lastBrokerId", "/producerIds/lastBrokerEpoch"):
            side.pop(key, None)
    assert sorted(a) == sorted(b), sorted(set(a) ^ set(b))[:10]
    diffs = [p for p in a if a[p] != b[p]]
    assert diffs == [], {p: (a[p], b[p]) for p in diffs[:5]}
    # the snapshot holds the whole cluster of 17:00, tmp-load-test included
    assert sum(1 for p in a if p.startswith("/topics/") and p.endswith("/data")) == 77
    assert "/topics/tmp-load-test/name" in a
