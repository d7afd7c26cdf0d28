"""quorum: the quorum as ``kafka-metadata-quorum describe`` prints it (``-C``)."""

from __future__ import annotations

import json
from datetime import datetime

from metashell.commands.base import FAILED, OK, Command
from metashell.render import json_text

ZERO_UUID_TEXT = "AAAAAAAAAAAAAAAAAAAAAA"   # Kafka's text of a directory id never set
_LABEL_WIDTH = 24


class Quorum(Command):
    name = "quorum"
    description = "The quorum as kafka-metadata-quorum describe --status / --replication prints it (-C)."
    needs_session = True
    path_args = None
    details = """\
With -C only: the quorum's own view (DescribeQuorum, and the cluster id
from DescribeCluster on Kafka 3.7+ controllers), in the layout of
kafka-metadata-quorum describe --status (ClusterId, LeaderId, LeaderEpoch,
HighWatermark, MaxFollowerLag, MaxFollowerLagTimeMs, CurrentVoters,
CurrentObservers, the voters and observers in Kafka 3.9+'s JSON form), or
with --replication its table (NodeId, DirectoryId, LogEndOffset, Lag,
LastFetchTimestamp, LastCaughtUpTimestamp, Status; leader first, then
followers, then observers). -o json: /metadataQuorum/live as it is.

Examples:
  kafka-metadata-shell -C ctl1:9093 quorum
  kafka-metadata-shell -C ctl1:9093 quorum --replication"""

    def add_arguments(self, parser):
        parser.add_argument("--replication", action="store_true",
                            help="the replication table (describe --replication)")

    def run(self, ctx, args) -> int:
        ask = getattr(ctx.session, "quorum_view", None)
        if ask is None:
            ctx.error("quorum: the quorum's own view needs -C (files hold no DescribeQuorum answer)")
            return FAILED
        live = ask()
        if "error" in live:
            ctx.error(f"quorum: {live['error']}")
            return FAILED
        if ctx.json:
            ctx.out.write(json_text(live) + "\n")
        else:
            lines = replication_lines(live) if args.replication else status_lines(live)
            ctx.out.write("\n".join(lines) + "\n")
        return OK


def _endpoint_texts(voter: dict) -> "list[str]":
    return [f"{e['name']}://{e['host']}:{e['port']}" for e in voter.get("endpoints") or ()]


def _voter_json(node_id: str, voter: dict) -> dict:
    out: dict = {"id": int(node_id)}
    if voter.get("directoryId"):
        out["directoryId"] = voter["directoryId"]
    if voter.get("endpoints"):
        out["endpoints"] = _endpoint_texts(voter)
    return out


def _observer_json(observer: dict) -> dict:
    out: dict = {"id": observer["replicaId"]}
    if observer.get("directoryId"):
        out["directoryId"] = observer["directoryId"]
    return out


def status_lines(live: dict) -> "list[str]":
    """describe --status: a label padded to 24 columns, then its value."""
    fields = [("ClusterId", live.get("clusterId") or ""), ("LeaderId", live["leaderId"]),
              ("LeaderEpoch", live["leaderEpoch"]), ("HighWatermark", live["highWatermark"]),
              ("MaxFollowerLag", live.get("maxFollowerLag")),
              ("MaxFollowerLagTimeMs", live.get("maxFollowerLagTimeMs")),
              ("CurrentVoters", json.dumps([_voter_json(k, v) for k, v in live["voters"].items()])),
              ("CurrentObservers", json.dumps([_observer_json(o) for o in live["observers"]]))]
    return [f"{label + ':':<{_LABEL_WIDTH}}{'' if value is None else value}" for label, value in fields]


def _ms(iso: "str | None") -> int:
    if iso is None:
        return -1
    return int(round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000))


def replication_rows(live: dict) -> "list[list[str]]":
    """describe --replication's rows, header first."""
    leader = str(live["leaderId"])
    voters = sorted(live["voters"].items(), key=lambda kv: kv[0] != leader)
    nodes = [(int(k), v, "Leader" if k == leader else "Follower") for k, v in voters]
    nodes += [(o["replicaId"], o, "Observer") for o in live["observers"]]
    rows = [["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
             "LastCaughtUpTimestamp", "Status"]]
    for node_id, r, role in nodes:
        lag = r.get("lag")
        rows.append([str(node_id), r.get("directoryId") or ZERO_UUID_TEXT, str(r["logEndOffset"]),
                     "" if lag is None else str(lag), str(_ms(r.get("lastFetchTime"))),
                     str(_ms(r.get("lastCaughtUpTime"))), role])
    return rows


def replication_lines(live: dict) -> "list[str]":
    """describe --replication: every cell padded to its column's width and
    followed by a tab, as Kafka prints it."""
    rows = replication_rows(live)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["".join(cell.ljust(w) + "\t" for cell, w in zip(row, widths)) for row in rows]
