"""Rows of the image tables, read from the shell's own tree of a session.

Every value comes from the nodes ``-o json tree /`` prints (the same
``open_session`` and ``fs.tree``, redaction included), renamed to
snake_case columns, so a cluster's image in Spark is exactly the image the
shell shows. Times the tree prints as ISO text become timestamps
(microseconds, Arrow's unit for Spark); the last change of a node is its
``last_change()``. Rows are yielded one at a time: a topic with a million
partitions folds them one by one and never holds them in a list.

Each ``rows_<table>(session)`` yields tuples in the column order of
:mod:`metashell.spark.schemas` (without ``cluster`` and ``cluster_id``);
``partitions`` is made column-wise instead (:mod:`.partition_columns`),
from the same values.
"""

from __future__ import annotations

import re

from ..fs.tree import DEFAULT_NAME
from ..queries.min_isr import assumed_note
from ..render import parse_time
from ..replay.partition_model import spark_state_values


def micros(ms: "int | None") -> "int | None":
    """Kafka's epoch milliseconds as the microseconds of a Spark timestamp."""
    return None if ms is None or ms < 0 else ms * 1000


def iso_micros(text: "str | None") -> "int | None":
    return None if text is None else micros(parse_time(text))


def _change(node) -> tuple:
    ch = node.last_change()
    return (None, None) if ch is None else (ch[0], micros(ch[1]))


def _dir(session, name: str):
    return session.root.child(name)


def _entries(node):
    """(name, child) of a directory, in the tree's order."""
    for name in node.children():
        child = node.child(name)
        if child is not None:
            yield name, child


def _listeners(listeners: list) -> list:
    return [{"name": e["name"], "host": e["host"], "port": e["port"],
             "security_protocol": e["securityProtocol"]} for e in listeners]


def _ranges(features: dict) -> list:
    return [(k, {"min": v["min"], "max": v["max"]}) for k, v in features.items()]


# -- the cluster itself --------------------------------------------------------------------

_CORRUPT = re.compile(r"(?P<file>.+?) \(byte (?P<byte>\d+)(?:, offset (?P<offset>-?\d+))?\): "
                      r"(?P<message>.*)")
_RECORD = re.compile(r"(?:(?P<file>\S+) )?offset (?P<offset>-?\d+): (?P<message>.*)")


def problem(text: str) -> dict:
    """A warning line of the shell (``text``) and its parts: file, byte, offset, message."""
    for pattern in (_CORRUPT, _RECORD):
        m = pattern.fullmatch(text)
        if m:
            d = m.groupdict()
            return {"file": d["file"], "byte": int(d["byte"]) if d.get("byte") else None,
                    "offset": int(d["offset"]) if d["offset"] else None,
                    "message": d["message"], "text": text}
    return {"file": None, "byte": None, "offset": None, "message": text, "text": text}


def rows_clusters(session):
    s = session.summary()   # folds every partition: more problems may turn up, all listed
    local = _dir(session, "local")
    loaded = local.child("loaded").value()
    node_id = local.child("nodeId")
    node_id = node_id.value() if node_id is not None else None
    mv = s["metadataVersion"]
    counts = s["records"]
    brokers = s["brokers"]
    yield (session.plan.kind, node_id if isinstance(node_id, int) else None,
           loaded["snapshot"], loaded["segments"], mv["level"], mv["release"],
           s["lastOffset"] if s["lastOffset"] >= 0 else None, iso_micros(s["lastTime"]),
           s["quorum"]["leaderId"], s["quorum"]["leaderEpoch"], len(brokers["ids"]),
           len(brokers["fenced"]), len(brokers["inControlledShutdown"]), len(s["controllers"]),
           s["topics"], s["partitions"], s["underReplicatedPartitions"], s["offlinePartitions"],
           s["underMinIsrPartitions"], counts["recordsApplied"], counts["recordsSkipped"],
           counts["recordsDropped"], list(counts["byType"].items()),
           [problem(p) for p in s["problems"]], cluster_state(session),
           notes(session.warnings, s["problems"]) + min_isr_notes(s))


def notes(warnings: list[str], problems: list[str]) -> list[str]:
    """The warnings that are not problems (metashell.session.findings)."""
    problems = set(problems)
    return [w for w in warnings if w not in problems]


#: a cluster's ``state``: read (its problems, if any, in ``problems``), a node
#: formatted but never started (its image is the bootstrap records), unreadable
LOADED, NEVER_STARTED, UNREADABLE = "loaded", "never started", "unreadable"


def min_isr_notes(summary: dict) -> list[str]:
    """The note ``summary`` warns with where it assumed min.insync.replicas
    (its under_min_isr count rests on it)."""
    assumed = summary["minIsr"]["topicsAssumed"]
    return [assumed_note(assumed)] if assumed else []


def cluster_state(session) -> str:
    return NEVER_STARTED if session.plan.never_started else LOADED


def failed_cluster_row(kind: "str | None", message: str) -> tuple:
    """The ``clusters`` row of a cluster that could not be loaded at all."""
    return (kind,) + (None,) * 22 + ([problem(message)], UNREADABLE, [])


# -- topics and partitions -----------------------------------------------------------------

def _topics(session):
    for name, node in _entries(_dir(session, "topics")):
        yield name, node


def rows_topics(session):
    for name, node in _topics(session):
        t = node.topic
        yield (name, t.topic_id, len(t.partition_ids())) + _change(node)


def topic_states(session):
    """(name, ``TopicState``) of each topic, in the tree's order."""
    for name, node in _topics(session):
        yield name, node.topic


def partition_row(topic: str, state) -> tuple:
    """A ``partitions`` row of a folded partition (the columns of the partition
    model, :mod:`.schemas`: the values the tree's ``data`` shows); the
    table's rows are built column-wise where they can be
    (:mod:`.partition_columns`)."""
    offset, time = (None, None) if state.change is None else state.change
    return (topic, *spark_state_values(state), offset, micros(time))


# -- brokers and controllers ---------------------------------------------------------------

def _value(node, name: str):
    child = node.child(name)
    return None if child is None else child.value()


def rows_brokers(session):
    for _, node in _entries(_dir(session, "brokers")):
        r = node.child("registration").value()
        yield (r["brokerId"], r["brokerEpoch"], r["incarnationId"], _value(node, "isFenced"),
               _value(node, "inControlledShutdown"), r["rack"], _listeners(r["listeners"]),
               _ranges(r["features"]), r["isMigratingZkBroker"], r["logDirs"],
               iso_micros(_value(node, "registeredAt")), _value(node, "registeredAtOffset")
               ) + _change(node)


def rows_controllers(session):
    for _, node in _entries(_dir(session, "controllers")):
        r = node.child("registration").value()
        yield (r["controllerId"], r["incarnationId"], r["zkMigrationReady"],
               _listeners(r["listeners"]), _ranges(r["features"])) + _change(node)


# -- configs, features, quotas -------------------------------------------------------------

def rows_configs(session):
    for rtype, tnode in _entries(_dir(session, "configs")):
        for rname, rnode in _entries(tnode):
            for key, leaf in _entries(rnode):
                yield (rtype, rname, key, leaf.value()) + _change(leaf)


def rows_features(session):
    for name, leaf in _entries(_dir(session, "features")):
        yield (name, leaf.value()) + _change(leaf)


def rows_client_quotas(session):
    yield from _quota_rows(_dir(session, "clientQuotas"), ())


def _quota_rows(node, entity: tuple):
    for name, child in _entries(node):
        if not child.is_dir:
            yield (list(entity), name, child.value()) + _change(child)
            continue
        for ename, enode in _entries(child):
            yield from _quota_rows(enode, entity + ((name, None if ename == DEFAULT_NAME
                                                     else ename),))


# -- ACLs, SCRAM, tokens, producer ids, quorum ---------------------------------------------

def rows_acls(session):
    for acl_id, leaf in _entries(_dir(session, "acls")):
        v = leaf.value()
        yield (acl_id, v["resourceType"], v["resourceName"], v["patternType"], v["principal"],
               v["host"], v["operation"], v["permissionType"]) + _change(leaf)


def rows_scram_users(session):
    # only the mechanism, the user and the iterations: never a salt or a key
    for mech, mnode in _entries(_dir(session, "scram")):
        for user, leaf in _entries(mnode):
            yield (mech, user, leaf.value()["iterations"]) + _change(leaf)


def rows_delegation_tokens(session):
    for token_id, leaf in _entries(_dir(session, "delegationTokens")):
        v = leaf.value()
        yield (token_id, v["owner"], v["requester"], v["renewers"], v["issueTimestamp"],
               v["maxTimestamp"], v["expirationTimestamp"]) + _change(leaf)


def rows_producer_ids(session):
    node = _dir(session, "producerIds")
    yield (_value(node, "nextProducerId"), _value(node, "lastBrokerId"),
           _value(node, "lastBrokerEpoch")) + _change(node)


def rows_quorum(session):
    node = _dir(session, "metadataQuorum")
    # a voter known only from a LeaderChangeMessage or quorum-state has no details
    voters = [{"voter_id": int(vid), "directory_id": v.get("directoryId"),
               "endpoints": v.get("endpoints"), "kraft_version": v.get("kraftVersion")}
              for vid, v in _value(node, "voters").items()]
    yield (_value(node, "leaderId"), _value(node, "leaderEpoch"), _value(node, "offset"),
           iso_micros(_value(node, "time")), _value(node, "kraftVersion"), voters) + _change(node)


ROWS = {name[5:]: fn for name, fn in globals().items() if name.startswith("rows_")}
