"""The native tree against Kafka 3.4's old-design shell (``MetadataNodeManager``)
at the paths both have, on the corpus files Kafka 3.4 and older wrote, and on
the files the workload cluster of a release before 3.5 wrote (``kafka_run``,
shared with the other modules; only the releases ``METASHELL_KAFKA_VERSIONS``
chooses): each node's whole log and newest snapshot.

The old shell's paths the native tree names otherwise are read through the
native tree's aliases (``/client-quotas/...``, ``/acl/id/<id>``,
``/producerIds/nextBlockStartId``, ...), so they are compared too; an ACL's
enums are compared as the record's codes (the old shell prints the record's
JSON, its ``id`` too; the native tree names them).

Kafka's one-shot mode runs one command per JVM, so two JVMs per file: ``find /``
for the paths, then one ``cat`` of every file compared. Compared: a broker's
``isFenced``, a topic's ``id`` and ``name``, every field of a partition's
``data`` (the old shell ignores the replica lists of a PartitionChangeRecord,
a bug of its own: those fields are compared only for partitions no change
touched), config values, features, and for a log ``/metadataQuorum/offset``
and ``leader`` (for a snapshot the old shell shows offsets inside the file; a
log's offset is its last data batch's, where ours counts the control batches
it may end in).
The old shell also sets ``isFenced`` to true at every registration, whatever
the record says (3.5+ takes the record's flag, as metashell does): a broker's
``isFenced`` is compared only once a fence, unfence or registration change
followed its registration. And it keeps a deleted topic's configs (Kafka's
image drops them with the topic, as metashell does): a config of a topic
name some RemoveTopicRecord deleted is compared only where ours has it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from metashell.fs.node import lookup
from metashell.kraft import enums
from metashell.loader.reader import read_records
from metashell.session.files import open_session

from .jars import log_config, require_java_and_maven, selected_versions, shell_classpath
from tests.support.corpora import corpus

from .image_shell import joined_log
from .workload import version_tuple

OLD_SHELL = "3.4.1"
FILES = ("kafka-3.2-three-brokers/00000000000000000000.log",
         "kafka-3.3-bootstrap/bootstrap.checkpoint",
         "kafka-3.4-snapshot/00000000000000014707-0000000001.checkpoint")
REPLICA_FIELDS = ("replicas", "removingReplicas", "addingReplicas")


def old_shell(path: Path, *words: str, tmp: Path) -> str:
    cmd = ["java", log_config(OLD_SHELL)[0], f"-Dkafka.logs.dir={tmp}",
           "-cp", shell_classpath(OLD_SHELL), "org.apache.kafka.shell.MetadataShell",
           "--snapshot", str(path), *words]
    return subprocess.run(cmd, capture_output=True, check=True, timeout=300,
                          text=True).stdout


def compared(paths: list[str]) -> list[str]:
    """The files of the old shell's ``find /`` this test compares."""
    out, dirs = [], {p.rsplit("/", 1)[0] for p in paths}
    for p in paths:
        parts = p.split("/")[1:]
        if p in dirs:
            continue
        if (parts[0] == "brokers" and parts[-1] == "isFenced"
                or parts[0] == "topics" and (parts[-1] in ("id", "name", "data"))
                or parts[0] == "configs" and len(parts) == 4
                or parts[0] == "features" and len(parts) == 2
                or parts[0] == "client-quotas"
                or parts[:2] == ["acl", "id"] and len(parts) == 3
                or parts[0] == "producerIds" and len(parts) == 2
                or p in ("/metadataQuorum/offset", "/metadataQuorum/leader")):
            out.append(p)
    return out


def split_cat(text: str, paths: list[str]) -> dict:
    """``cat`` of many files: a JSON file runs to its closing ``}`` line."""
    lines, values, i = text.splitlines(), {}, 0
    for p in paths:
        if lines[i].startswith("{"):
            j = i
            while lines[j] != "}":
                j += 1
            values[p] = json.loads("\n".join(lines[i:j + 1]))
            i = j + 1
        else:
            values[p] = lines[i]
            i += 1
    return values


def ours_as_old(root, path: str):
    """Our value at the old shell's ``path``, as the old shell writes it."""
    parts = path.split("/")[1:]
    node = lookup(root, parts)
    if node is None:
        return None
    if node.text() is not None:
        return node.text()
    value = node.value()
    if parts[0] == "features":
        return {"name": parts[1], "featureLevel": value}
    if parts[0] == "acl":
        return acl_record(parts[2], value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, dict) else str(value)


ACL_CODES = {"resourceType": enums.ACL_RESOURCE_TYPES, "patternType": enums.PATTERN_TYPES,
             "operation": enums.ACL_OPERATIONS, "permissionType": enums.ACL_PERMISSION_TYPES}


def acl_record(acl_id: str, value: dict) -> dict:
    """An ACL of the native tree as the old shell shows it: the
    AccessControlEntryRecord, its enums as codes."""
    codes = {f: {name: code for code, name in table.items()} for f, table in ACL_CODES.items()}
    return {"id": acl_id, **{k: codes[k][v] if k in codes else v for k, v in value.items()}}


def differences(path: Path, theirs: dict, root, changed: set) -> list[str]:
    problems = []
    for p, value in theirs.items():
        mine = ours_as_old(root, p)
        if p.endswith("/data") and isinstance(mine, dict):
            skip = REPLICA_FIELDS if p in changed else ()
            value = {k: v for k, v in value.items() if k not in skip}
            mine = {k: mine.get(k) for k in value}
        if mine != value:
            problems.append(f"{path.name}: {p}: Kafka {OLD_SHELL}: {value!r}, ours: {mine!r}")
    return problems


def deleted_topics(records) -> set:
    """The names of the topics a RemoveTopicRecord of ``records`` deleted."""
    names, deleted = {}, set()
    for record in records:
        if record.name == "TopicRecord":
            names[record.data["topicId"]] = record.data["name"]
        elif record.name == "RemoveTopicRecord":
            deleted.add(names.get(record.data["topicId"]))
    return deleted


def fenced_since_registration(session, path: str) -> bool:
    """Whether a record after the broker's last registration set its fencing."""
    types = [r["type"] for r in session.changes(path.rsplit("/", 1)[0]) or ()]
    last = max((i for i, t in enumerate(types) if t == "RegisterBrokerRecord"), default=-1)
    return any(t in ("FenceBrokerRecord", "UnfenceBrokerRecord", "BrokerRegistrationChangeRecord")
               for t in types[last + 1:])


def compare(path: Path, tmp_path: Path) -> "tuple[dict, list[str]]":
    """The old shell's values of ``path`` this test compares, and where ours differ."""
    paths = compared(old_shell(path, "find", "/", tmp=tmp_path).split())
    theirs = split_cat(old_shell(path, "cat", *paths, tmp=tmp_path), paths)
    session = open_session(path, show_secrets=True)
    changed = {p for p in paths if p.endswith("/data") and any(
        r["type"] == "PartitionChangeRecord" for r in session.changes(p[:-len("/data")]) or ())}
    theirs = {p: v for p, v in theirs.items()
              if not p.endswith("/isFenced") or fenced_since_registration(session, p)}
    # the old shell leaves a deleted topic's configs (Kafka's image drops them)
    records = list(read_records(path))
    deleted = deleted_topics(records)
    theirs = {p: v for p, v in theirs.items()
              if not (p.startswith("/configs/topic/") and p.split("/")[3] in deleted
                      and lookup(session.root, p.split("/")[1:]) is None)}
    problems = []
    if path.suffix == ".checkpoint":   # the old shell's offsets are inside the file
        theirs = {p: v for p, v in theirs.items() if not p.startswith("/metadataQuorum")}
    elif "/metadataQuorum/offset" in theirs and records[-1].kind == "control":
        # the old shell's offset is its last data batch's (control batches go
        # elsewhere), ours the last record applied, a leader change too: its
        # last data batch's is /image/provenance's
        offset = theirs.pop("/metadataQuorum/offset")
        if offset != str(session.image.data_offset):
            problems.append(f"{path.name}: /metadataQuorum/offset: Kafka {OLD_SHELL}: {offset!r}, "
                            f"our last data batch's: {session.image.data_offset}")
    problems += differences(path, theirs, session.root, changed)
    session.close()
    return theirs, problems


@pytest.mark.parametrize("rel", FILES)
def test_the_native_tree_agrees_with_kafkas_old_shell(rel, tmp_path):
    require_java_and_maven()
    path = corpus(rel)
    theirs, problems = compare(path, tmp_path)
    assert theirs and not problems, "\n".join(problems[:20])
    print(f"\n{rel}: {len(theirs)} values compared")


# the releases whose files the old-design shell reads (3.5 and later have only /image)
OLD_RELEASES = [v for v in selected_versions() if version_tuple(v) < (3, 5)]


@pytest.mark.parametrize("kafka_version", OLD_RELEASES, ids=OLD_RELEASES, scope="module")
def test_a_kafka_clusters_files_agree_with_kafkas_old_shell(kafka_run, tmp_path):
    """Each node's whole log (its segments joined: the old shell reads one
    file) and newest snapshot, copied (the cluster's dirs stay as they are)."""
    values, problems, kinds = 0, [], set()
    for node_id in sorted(kafka_run.metadata_dirs):
        log = joined_log(kafka_run.segments[node_id], tmp_path / f"node-{node_id}-log")
        snapshot = tmp_path / f"node-{node_id}" / kafka_run.snapshots[node_id][-1].name
        snapshot.parent.mkdir()
        shutil.copyfile(kafka_run.snapshots[node_id][-1], snapshot)
        for path in (log, snapshot):
            theirs, found = compare(path, tmp_path)
            problems += [f"node {node_id} {p}" for p in found]
            values += len(theirs)
            kinds |= {p.split("/")[1] for p in theirs}
    assert not problems, "\n".join(problems[:20])
    assert {"brokers", "topics", "configs", "client-quotas", "acl", "features"} <= kinds
    print(f"\nKafka {kafka_run.version}: {values} values compared ({', '.join(sorted(kinds))})")
