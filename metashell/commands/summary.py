"""summary: the cluster at a glance."""

from __future__ import annotations

from metashell.commands.base import OK, Command
from metashell.render import json_text, summary_lines
from metashell.timefmt import duration


def _start_text(row: dict, fenced: bool) -> str:
    """One broker's start in text: time, offset and how long before the
    last change it registered (not "up": a fenced broker is registered, not
    running, and says so), or why unknown."""
    at = "" if row["registeredAtOffset"] is None else f"offset {row['registeredAtOffset']}"
    state = "  fenced" if fenced else ""
    if row["registeredAt"] is None:
        return f"{at + ', ' if at else ''}time unknown: {row['note']}{state}"
    age = duration(row["ageMs"])
    return row["registeredAt"] + "".join(
        f"  {t}" for t in (at, age and f"registered {age} before lastTime") if t) + state


def text_view(data: dict) -> dict:
    """The summary as text shows it: each broker's start on one line, each
    problem on its own numbered line."""
    if data.get("problems"):
        data = {**data, "problems": {str(i): p for i, p in enumerate(data["problems"], 1)}}
    brokers = dict(data.get("brokers") or {})
    if "started" not in brokers:
        return data
    fenced = set(brokers.get("fenced") or ())
    brokers["started"] = {str(r["brokerId"]): _start_text(r, r["brokerId"] in fenced)
                          for r in brokers["started"]}
    return {**data, "brokers": brokers}


class Summary(Command):
    name = "summary"
    description = "Summarize the cluster: brokers, topics, partition health, features."
    path_args = None
    needs_session = True
    details = """\
Counts of brokers, controllers, topics and partitions; under-replicated,
offline and under-min-ISR partitions; metadata.version and the other
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
why a value is null, else null)."""

    def run(self, ctx, args) -> int:
        data = ctx.session.summary()
        if ctx.json:
            ctx.write(json_text(data))
        else:
            ctx.write_lines(summary_lines(text_view(data)))
        return OK
