"""The Raft quorum (what Kafka's 3.5+ shell dropped): its leader and epoch
from LeaderChangeMessages, its voters from VotersRecords (else the
LeaderChangeMessage's), kraft.version from KRaftVersionRecords. These are
control records: the batch loader hands them here with their batch's
header."""

from __future__ import annotations

from ...kraft.records import Record


def leader_change(q, d: dict, header) -> None:
    q.leader_id = d["leaderId"]
    if header is not None:
        q.leader_epoch = header.epoch
    if q.voters_from != "VotersRecord":
        q.voters = {v["voterId"]: {} for v in d.get("voters", ())}
        q.voters_from = "LeaderChangeMessage"


def kraft_version(q, d: dict, header) -> None:
    q.kraft_version = d["kRaftVersion"]


def voters(q, d: dict, header) -> None:
    q.voters = {v["voterId"]: {
        "directoryId": v["voterDirectoryId"],
        "endpoints": [{"name": e["name"], "host": e["host"], "port": e["port"]}
                      for e in v["endpoints"]],
        "kraftVersion": {"min": v["kRaftVersionFeature"]["minSupportedVersion"],
                         "max": v["kRaftVersionFeature"]["maxSupportedVersion"]},
    } for v in d["voters"]}
    q.voters_from = "VotersRecord"


#: control record name -> ``rule(quorum state, fields, batch header)``
REPLAY = {
    "LeaderChangeMessage": leader_change,
    "KRaftVersionRecord": kraft_version,
    "VotersRecord": voters,
}


def replay_control(delta, rec: Record, header) -> None:
    """A control record's effect on the quorum (others change nothing
    here; a snapshot's header and footer are the batch loader's)."""
    d = rec.data
    if d is None:
        delta.tally.problem(rec.offset, f"undecodable {rec.name}: {rec.error}")
        return
    rule = REPLAY.get(rec.name)
    if rule is None:
        return
    q = delta.image.quorum
    rule(q, d, header)
    q.change = (rec.offset, rec.timestamp)
    delta.history(("quorum",), rec)
