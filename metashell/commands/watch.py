"""watch: print committed changes of a live quorum as they are applied."""

from __future__ import annotations

import argparse
import json
import queue

from metashell.commands.base import OK, Command
from metashell.fs import glob, paths
from metashell.fs.image_view import image_parts

POLL = 0.2   # seconds between checks for Ctrl-C while no change comes


class Watch(Command):
    name = "watch"
    description = "Print each committed change under PATH as it is applied (live quorum, -C)."
    holds_image = False     # the follower must go on applying while this waits
    details = """\
After catching up with the quorum, one line per record applied from then
on whose entity is under (or contains) one of the PATHs (default /):
offset, ISO-8601 UTC time, record type, the entity's path, and the same
one-line summary as 'changes'. PATH may be a glob (quote it in your shell).
In one-shot mode, or as the first line of a script, it starts right
after catch-up (nothing is missed in between); later, from when it runs.
Stops after --count changes, when --until-offset or --until-time is
reached, or on Ctrl-C (exit status 0 in each case). Changes that come as
a new snapshot (the shell fell too far behind) are not listed one by one.

With -s (files) there is nothing to wait for: it prints nothing and
returns 0.

--output json: one object per line, flushed at once, with keys offset,
time, type, path and summary (for jq --unbuffered, or a script reading a
pipe).

Examples:
  kafka-metadata-shell -C 1@ctl1:9093 watch /brokers
  kafka-metadata-shell -C 1@ctl1:9093 -o json watch '/topics/orders/*' --count 10"""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="*", metavar="PATH",
                            help="only changes of entities under these paths (default /)")
        parser.add_argument("--count", type=_positive, metavar="N",
                            help="stop after N changes")

    def run(self, ctx, args) -> int:
        session = ctx.session
        if getattr(session, "subscribe", None) is None:
            return OK                      # files do not grow
        patterns = [_steps(ctx.cwd, t) for t in args.targets or ["/"]]
        changes = session.subscribe(backlog=not ctx.interactive)
        shown = 0
        try:
            while args.count is None or shown < args.count:
                try:
                    change = changes.get(timeout=POLL)
                except queue.Empty:
                    continue
                if change is None:         # following stopped
                    break
                if not any(_watched(p, paths.split(change["path"])) for p in patterns):
                    continue
                ctx.write(_line(change, ctx.json))
                ctx.out.flush()
                shown += 1
        except KeyboardInterrupt:
            pass
        finally:
            session.unsubscribe(changes)
        return OK


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"invalid count '{text}' (a positive integer)")
    return n


def _steps(cwd: str, target: str) -> list:
    """The absolute components of ``target``, each a compiled glob or a name."""
    return [glob.compile_component(c) or glob.literal_name(c) for c in paths.resolve(cwd, target)]


def _watched(pattern: list, parts: list[str]) -> bool:
    """Whether ``pattern`` watches the entity at ``parts`` (a native path),
    which shows at another path under ``/image``."""
    if pattern and pattern[0] == "image":
        return _related(pattern, image_parts(parts)) if parts else not pattern
    return _related(pattern, parts)


def _related(pattern: list, parts: list[str]) -> bool:
    """Whether a change of the entity at ``parts`` shows under the watched
    path: one is a prefix of the other (a partition change shows under
    /topics; a broker's change shows in /brokers/1/registration). A change
    of an entity the tree does not place (``/``) matches only ``/``."""
    if not parts:
        return not pattern
    for step, name in zip(pattern, parts):
        if isinstance(step, str):
            if step != name:
                return False
        elif not step.fullmatch(name):
            return False
    return True


def _line(change: dict, as_json: bool) -> str:
    if as_json:
        return json.dumps(change, ensure_ascii=False)
    return (f"{change['offset']} {change['time']} {change['type']} {change['path']} "
            f"{change['summary']}")
