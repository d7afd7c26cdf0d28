"""metashell against what real Kafka reports, for every release.

One workload cluster per release (``kafka_run``, see workload.py): 3
controllers and 2 brokers, every kind of metadata change the release can
make, several snapshots and segments per node. Then:

- ``-s`` on every node's metadata log dir, at the offset where the admin API
  was asked, and on each snapshot taken while nothing changed, shows exactly
  what the admin API reported (topics, ids, partitions, configs, quotas,
  ACLs, SCRAM users, features, brokers, the quorum);
- every snapshot equals the replay of the log (segments alone) up to its end;
- every record of every file decodes (the catalog knows each type and
  version the release wrote), and the cleanly stopped nodes' files load
  with nothing at all on stderr.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from metashell.loader.reader import read_records

from .shell import shell
from .views import tree_view
from .workload import snapshot_end_offset

SECTIONS = ("topics", "configs", "quotas", "acls", "scram", "features", "brokers", "quorum")


def tree(path, until_offset=None) -> "tuple[dict, str]":
    """``-o json tree /`` of ``path``, and its stderr."""
    status, out, err = shell(path, "tree", "/", until_offset=until_offset)
    assert status == 0, f"{path}: exit {status}: {err}"
    return json.loads(out), err


def without_time_travel_notes(err: str) -> str:
    """stderr without the notes --until-offset prints about files it left out."""
    return "".join(line for line in err.splitlines(keepends=True) if "--until-offset" not in line)


def assert_same_view(where: str, expected: dict, got: dict) -> None:
    for section in SECTIONS:
        assert got[section] == expected[section], f"{where}: {section} differs from the admin API"


# -- the workload itself ------------------------------------------------------------------------

def test_workload_made_every_kind_of_metadata(kafka_run):
    """The admin view the other tests compare with is not empty: the workload
    made what it says (or says why the release could not)."""
    steps, view = kafka_run.workload.steps, kafka_run.expected
    assert not [s for s, how in steps.items() if how != "done" and not how.startswith("skipped: ")]
    assert set(view["topics"]) == {"orders", "events", "payments", "audit.log"}
    assert len(view["topics"]["orders"]["partitions"]) == 32
    assert {b: v["rack"] for b, v in view["brokers"].items()} == {101: "rack-a", 102: "rack-b"}
    # broker 102's min.insync.replicas stays where eligible leader replicas are off;
    # turning them on removes every broker-level value (only the cluster's counts)
    broker_102 = {"listener.name.sasl.scram-sha-256.sasl.jaas.config": "[redacted]"}
    if not kafka_run.with_elr:
        broker_102["min.insync.replicas"] = "1"
    assert view["configs"][("broker", "102")] == broker_102
    assert len(view["quotas"]) == 7 and len(view["acls"]) == 4
    assert view["quorum"]["voters"] == [1, 2, 3]
    (scram_step,) = [how for step, how in steps.items() if step.startswith("SCRAM users")]
    if scram_step != "done":
        assert view["scram"] == {}
    else:
        assert view["scram"] == {"alice": {"SCRAM-SHA-256": 4096}, "bob": {"SCRAM-SHA-512": 8192},
                                 "admin": {"SCRAM-SHA-256": 4096, "SCRAM-SHA-512": 5000}}
    assert len(kafka_run.snapshots[1]) >= 2 and len(kafka_run.segments[1]) >= 2


# -- the files show what the admin API reported -----------------------------------------------------

def test_every_metadata_dir_shows_what_the_admin_api_reported(kafka_run):
    at = kafka_run.high_watermark - 1
    for node_id, path in kafka_run.metadata_dirs.items():
        got, err = tree(path, until_offset=at)
        assert without_time_travel_notes(err) == "", f"node {node_id}: {err}"
        assert_same_view(f"node {node_id} dir at offset {at}", kafka_run.expected,
                         tree_view(got, kafka_run.with_elr))


def _quiet_snapshots(kafka_run):
    """Snapshots of the settled metadata: ending after the admin API was asked
    and before the first change after it."""
    for node_id, snapshots in kafka_run.snapshots.items():
        for snap in snapshots:
            if kafka_run.high_watermark <= snapshot_end_offset(snap) <= kafka_run.quiet_until:
                yield node_id, snap


def snapshot_quorum(expected: dict) -> dict:
    """What a snapshot alone can say of the quorum: its epoch (in its name and
    batches), and the voters only where it holds a VotersRecord (kraft.version
    1); no LeaderChangeMessage, so no leader."""
    q = expected["quorum"]
    return dict(q, leader=-1, voters=q["voters"] if q["kraftVersion"] >= 1 else [])


def test_each_snapshot_alone_shows_what_the_admin_api_reported(kafka_run):
    quiet = list(_quiet_snapshots(kafka_run))
    assert {n for n, _ in quiet} == set(kafka_run.metadata_dirs), "a node took no snapshot"
    expected = dict(kafka_run.expected, quorum=snapshot_quorum(kafka_run.expected))
    for node_id, snap in quiet:
        got, err = tree(snap)
        assert err == "", f"{snap}: {err}"
        assert_same_view(f"node {node_id} {snap.name}", expected, tree_view(got, kafka_run.with_elr))


# -- snapshots against the log ---------------------------------------------------------------------

def segments_only(segments: "list[Path]", into: Path) -> Path:
    """A metadata log dir holding links to ``segments`` (and their indexes)
    and no snapshot, so that loading it replays the log."""
    part = into / "__cluster_metadata-0"
    part.mkdir(parents=True)
    for seg in segments:
        for sibling in seg.parent.glob(seg.stem + ".*"):
            if sibling.suffix in (".log", ".index", ".timeindex"):
                (part / sibling.name).symlink_to(sibling)
    return into


# Fields a log shows and a snapshot cannot: when (at which offset) a broker registered.
LOG_ONLY_BROKER_FIELDS = ("registeredAt", "registeredAtOffset")


def comparable(tree_json: dict) -> dict:
    """The tree without what a snapshot and the log it was taken from say
    differently on purpose: where the files are (``/local``), the quorum,
    log-only broker fields, and ``/image/provenance`` (checked on its own:
    a controller counts a trailing control batch in a snapshot's id, Kafka's
    shell does not count it when it reads the log)."""
    out = {k: v for k, v in tree_json.items() if k not in ("local", "metadataQuorum")}
    out["brokers"] = {i: {k: v for k, v in b.items() if k not in LOG_ONLY_BROKER_FIELDS}
                      for i, b in tree_json.get("brokers", {}).items()}
    out["image"] = {k: v for k, v in tree_json["image"].items() if k != "provenance"}
    return out


# A batch header's first fields (the record batch format, magic 2): baseOffset,
# batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta.
_BATCH_START = struct.Struct(">qiibIhi")
_CONTROL = 0x20   # attributes bit: a control batch


def data_batches(segments: "list[Path]") -> "list[tuple[int, int]]":
    """(last offset, leader epoch) of every data batch of ``segments``, read
    here from the bytes, apart from metashell's reader."""
    out = []
    for seg in segments:
        buf, pos = seg.read_bytes(), 0
        while pos + 61 <= len(buf):
            base, length, epoch, _, _, attributes, delta = _BATCH_START.unpack_from(buf, pos)
            if length <= 0 or pos + 12 + length > len(buf):
                break
            if not attributes & _CONTROL:
                out.append((base + delta, epoch))
            pos += 12 + length
    return out


def log_provenance(batches: "list[tuple[int, int]]", last_offset: int) -> "tuple[int, int]":
    """Kafka's shell's provenance of the log up to ``last_offset``: its last
    data batch's last offset and epoch."""
    return max(b for b in batches if b[0] <= last_offset)


def test_every_snapshot_equals_the_log_replayed_to_its_end(kafka_run, tmp_path):
    for node_id, snapshots in kafka_run.snapshots.items():
        log_dir = segments_only(kafka_run.segments[node_id], tmp_path / f"node-{node_id}")
        batches = data_batches(kafka_run.segments[node_id])
        for snap in snapshots:
            end = snapshot_end_offset(snap)
            if end == 0:
                continue   # the formatter's bootstrap snapshot of a dynamic quorum
            from_snapshot, err = tree(snap)
            assert err == "", f"{snap}: {err}"
            from_log, err = tree(log_dir, until_offset=end - 1)
            assert without_time_travel_notes(err) == "", f"node {node_id} log: {err}"
            assert comparable(from_snapshot) == comparable(from_log), \
                f"node {node_id}: {snap.name} differs from the log replayed to offset {end - 1}"
            assert from_snapshot["metadataQuorum"]["offset"] == end - 1
            snap_epoch = int(snap.stem.split("-")[1])
            got = from_snapshot["image"]["provenance"]
            assert (got["offset"], got["epoch"]) == (end - 1, snap_epoch), snap.name
            got = from_log["image"]["provenance"]
            assert (got["offset"], got["epoch"]) == log_provenance(batches, end - 1), \
                f"node {node_id}: the log to offset {end - 1}"


# -- every record decodes; clean files load cleanly ----------------------------------------------------

def test_every_record_of_every_file_decodes(kafka_run):
    """Every record type and version the release wrote is in the catalog."""
    seen = set()
    for node_id in kafka_run.metadata_dirs:
        for path in kafka_run.snapshots[node_id] + kafka_run.segments[node_id]:
            for record in read_records(path):
                assert record.kind != "undecodable", f"{path} offset {record.offset}: {record.error}"
                seen.add((record.name, record.version))
    names = {name for name, _ in seen}
    assert {"TopicRecord", "PartitionRecord", "PartitionChangeRecord", "ConfigRecord",
            "ClientQuotaRecord", "AccessControlEntryRecord", "FeatureLevelRecord",
            "RegisterBrokerRecord", "NoOpRecord", "LeaderChangeMessage"} <= names
    print(f"Kafka {kafka_run.version} wrote: " + ", ".join(f"{n} v{v}" for n, v in sorted(seen)))


def test_cleanly_stopped_files_load_without_any_warning(kafka_run):
    for node_id, path in kafka_run.metadata_dirs.items():
        got, err = tree(path)
        assert err == "", f"node {node_id}: {err}"
        brokers = got["brokers"]
        assert set(brokers) == {"101", "102"}
        if node_id in kafka_run.cluster.controller_ids:
            # the brokers shut down in a controlled way before the controllers
            assert all(b["isFenced"] and b["inControlledShutdown"] for b in brokers.values()), \
                f"node {node_id}: {brokers}"
    for node_id, snapshots in kafka_run.snapshots.items():
        for snap in snapshots:
            _, err = tree(snap)
            assert err == "", f"{snap}: {err}"


@pytest.mark.parametrize("command", ["summary", "changes /brokers/101"])
def test_commands_on_real_files_print_nothing_on_stderr(kafka_run, command):
    for node_id, path in kafka_run.metadata_dirs.items():
        status, _, err = shell(path, *command.split())
        assert (status, err) == (0, ""), f"node {node_id} {command}: {err}"
