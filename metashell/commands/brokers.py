"""brokers: each broker's state and load at a glance."""

from __future__ import annotations

from metashell.commands.base import OK, Command
from metashell.render import json_text, style, table_lines
from metashell.queries.partition_states import broker_load, topics_by_name


class Brokers(Command):
    name = "brokers"
    description = "Show each broker's state and load: partitions led and held, leader skew."
    needs_session = True
    path_args = None
    details = """\
One line per broker (registered ones, and any other a partition names),
under a header: id, state (running, fenced, in controlled shutdown, or
not registered), the partitions it leads, the partitions it holds a
replica of, the partitions it would lead if every partition's preferred
(first) replica led it, and the skew: leaders minus preferred (positive:
it leads more than its share; a preferred leader election would move
that many away). Fenced brokers print in red on a terminal.

--output json: an array of {brokerId, state, leaderCount, replicaCount,
preferredLeaderCount, skew}."""

    def run(self, ctx, args) -> int:
        image = ctx.session.image
        load = broker_load(topics_by_name(image), image.brokers)
        rows = [{"brokerId": b, "state": _state(image.brokers.get(b)), "leaderCount": entry.leaders,
                 "replicaCount": entry.replicas, "preferredLeaderCount": entry.preferred,
                 "skew": entry.skew} for b, entry in load.items()]
        if ctx.json:
            ctx.write(json_text(rows))
            return OK
        header = ["BROKER", "STATE", "LEADERS", "REPLICAS", "PREFERRED", "SKEW"]
        lines = table_lines([header] + [[str(r["brokerId"]), r["state"], str(r["leaderCount"]),
                                         str(r["replicaCount"]), str(r["preferredLeaderCount"]),
                                         f"{r['skew']:+d}" if r["skew"] else "0"] for r in rows],
                            right=(0, 2, 3, 4, 5))
        ctx.write(lines[0])
        for line, row in zip(lines[1:], rows):
            ctx.write(style(line, "red", ctx.color and row["state"] != "running"))
        return OK


def _state(broker) -> str:
    if broker is None:
        return "not registered"
    if broker.fenced:
        return "fenced"
    if broker.in_controlled_shutdown:
        return "in controlled shutdown"
    return "running"
