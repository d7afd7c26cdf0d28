"""summary: the cluster at a glance."""

from __future__ import annotations

import re

from metashell.commands.base import OK, Command
from metashell.commands.min_isr_options import HELP as MIN_ISR_HELP, add_min_isr_options
from metashell.queries.min_isr import assumed_note, static_value
from metashell.render import json_text, summary_lines
from metashell.timefmt import duration


def _start_cells(row: dict, state: str, notes: dict) -> list[str]:
    """One broker's start in text, as cells: time (or why it is unknown, by
    the number of its note), offset, how long before the last change it
    registered (not "up": a fenced broker is registered, not running, and
    says so), and its state when not running."""
    offset = row["registeredAtOffset"]
    if row["registeredAt"] is None:
        why = _UNKNOWN_OFFSET.sub("", row["note"] or "unknown")
        when = f"time unknown [{notes.setdefault(why, len(notes) + 1)}]"
    else:
        when = row["registeredAt"]
    age = duration(row["ageMs"])
    return [when, "" if offset is None else str(offset),
            f"registered {age} before lastTime" if age else "", state]


#: how a note on an unknown time names the row's own offset (the row shows it)
_UNKNOWN_OFFSET = re.compile(r"^offset \d+ is ")


def _aligned(rows: list[list[str]]) -> list[str]:
    """The cells of each row in columns (offsets right-aligned after
    'offset'), empty cells left out where every row has none."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for when, offset, age, state in rows:
        cells = [when.ljust(widths[0])]
        if widths[1]:
            cells.append(f"offset {offset.rjust(widths[1])}" if offset else " " * (widths[1] + 7))
        if widths[2]:
            cells.append(age.ljust(widths[2]))
        cells.append(state)
        lines.append("  ".join(cells).rstrip())
    return lines


def text_view(data: dict) -> dict:
    """The summary as text shows it: each broker's start on one line, in
    columns, a broker not running marked, why a time is unknown said once
    below them; each problem on its own numbered line."""
    if data.get("problems"):
        data = {**data, "problems": {str(i): p for i, p in enumerate(data["problems"], 1)}}
    brokers = dict(data.get("brokers") or {})
    if not brokers.get("started"):
        return data
    fenced = set(brokers.get("fenced") or ())
    stopping = set(brokers.get("inControlledShutdown") or ())
    notes: dict[str, int] = {}
    rows = [_start_cells(r, "fenced" if r["brokerId"] in fenced else
                         "in controlled shutdown" if r["brokerId"] in stopping else "", notes)
            for r in brokers["started"]]
    brokers["started"] = {str(r["brokerId"]): line
                          for r, line in zip(brokers["started"], _aligned(rows))}
    if notes:
        brokers["timeUnknown"] = {f"[{n}]": why for why, n in notes.items()}
    return {**data, "brokers": brokers}


def _local(ctx) -> dict:
    """What the tree's /local says of the source: its cluster id, and the
    node id of a broker's or controller's metadata dir."""
    local = ctx.root.child("local") if ctx.root is not None else None
    head = {"clusterId": None}
    for name in ("clusterId", "nodeId"):
        node = local.child(name) if local is not None else None
        if node is not None:
            head[name] = node.value()
    return head


class Summary(Command):
    name = "summary"
    description = "Summarize the cluster: brokers, topics, partition health, features."
    path_args = None
    needs_session = True
    details = """\
Counts of brokers, controllers, topics and partitions; under-replicated,
offline and under-min-ISR partitions (as 'partitions' finds them, Kafka's
definitions: see 'man partitions'), and where the min.insync.replicas
they were judged by came from (minIsr: the value below the topics' and
brokers' own, its source, the topics and brokers with their own, and for
how many topics it was assumed); metadata.version and the other
features; the last applied offset and time; what the records did; and
the problems of the load, one line each.
With -C (a live quorum) the quorum group also has the observer's state
(following, catching up, quorum lost, stopped), the quorum's high
watermark, the committed offset applied and the leader's endpoint.
Text: aligned 'key: value' lines, nested groups indented.

brokers.started lists each broker's start, newest first (by registration
offset, the log's order): when it registered its current incarnation
(/brokers/<id>/registeredAt), at which offset (registeredAtOffset, the
broker epoch) and its age, how long before lastTime (the last applied
batch; on a running cluster's directory that is about now, as the active
controller appends a record every 500 ms). Text: one line per broker,
'<id>: <time>  offset <n>  registered <age> before lastTime', and
'fenced' for a fenced broker; where the time is unknown, why (see
'man ls': the segments holding the offset are gone, or the epoch is not an
offset).

records: recordsApplied counts the metadata records replayed into the
image (those before a time-travel limit; a snapshot's count as applied);
recordsSkipped those that could not be decoded or applied (each also a
problem); recordsDropped those of metadata transactions that were aborted
or never ended (as Kafka drops them); byType, recordsApplied by record type.
Records in a damaged batch that was skipped are in none of these counts
(their number cannot be trusted): the batch is a problem instead.
recordsSkippedWithErrors is the same number as records.recordsSkipped.

problems: every problem of the load and since (a damaged batch skipped, a
record not applied, an incomplete or unusable snapshot and the fallback
from it, a gap in the log, a snapshot past the end of the log, time travel
past the data): the warnings that --strict fails on. Notes, such as a torn
last batch of the newest segment, are not problems. Text: '-' or one
numbered line each; JSON: a list of strings, [] when the load was clean.

--output json: one JSON object with the same keys; brokers.started is an
array of {brokerId, registeredAt, registeredAtOffset, ageMs, note} (note:
why a value is null, else null).

""" + MIN_ISR_HELP

    def add_arguments(self, parser):
        add_min_isr_options(parser)

    def run(self, ctx, args) -> int:
        data = {**_local(ctx), **ctx.session.summary(
            static_value(args.min_isr, args.broker_config))}
        min_isr = data.get("minIsr")
        if min_isr and min_isr["topicsAssumed"]:
            ctx.warn(assumed_note(min_isr["topicsAssumed"]), problem=False)
        if ctx.json:
            ctx.write(json_text(data))
        else:
            ctx.write_lines(summary_lines(text_view(data)))
        return OK
