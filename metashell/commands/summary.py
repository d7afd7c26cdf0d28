"""summary: the cluster at a glance."""

from __future__ import annotations

from metashell.commands.base import OK, Command
from metashell.render import json_text, summary_lines


class Summary(Command):
    name = "summary"
    description = "Summarize the cluster: brokers, topics, partition health, features."
    path_args = None
    needs_session = True
    details = """\
Counts of brokers, controllers, topics and partitions; under-replicated,
offline and under-min-ISR partitions; metadata.version and the other
features; the last applied offset and time; records skipped while loading.
With -C (a live quorum) the quorum group also has the observer's state
(following, catching up, quorum lost, stopped), the quorum's high
watermark, the committed offset applied and the leader's endpoint.
Text: aligned 'key: value' lines, nested groups indented.

--output json: one JSON object with the same keys."""

    def run(self, ctx, args) -> int:
        data = ctx.session.summary()
        if ctx.json:
            ctx.write(json_text(data))
        else:
            ctx.write_lines(summary_lines(data))
        return OK
