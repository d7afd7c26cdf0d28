"""changes: the records that changed an entity."""

from __future__ import annotations

from metashell.commands.base import (FAILED, NOT_FOUND, OK, Command, expand, has_glob,
                                     shown)
from metashell.fs import paths
from metashell.render import json_text, table_lines

#: after the summary of a snapshot's stand-in for an entity's earlier records
SNAPSHOT_MARK = "  [from snapshot]"


class Changes(Command):
    name = "changes"
    description = "Show the records that changed an entity (broker, topic, partition, ...)."
    needs_session = True
    details = """\
One line per record, oldest first: offset, ISO-8601 UTC time, record type
and a one-line summary of what it changed. PATH names an entity such as
/brokers/1, /topics/foo, /topics/foo/0 or a config resource, or a file
inside one; it may be a glob, and each match is listed under a 'PATH:'
header when there are several.

A topic's history holds its partitions': /topics/foo lists its
TopicRecord, every record of each of its partitions and its
RemoveTopicRecord (its configs are /configs/topic/foo); /topics/foo/0
lists that partition's. 'log --entity PATH' keeps the same records.

An entity removed since the loaded snapshot (a deleted topic, an
unregistered broker, a removed config, ACL, ...) is no longer in the
tree, but its history is: name it by its old path (/topics/foo: every
topic deleted under that name, in offset order; /topicIds/ID: that one),
and its records are listed up to its removal.

A snapshot holds an entity as one record, stamped with the snapshot's last
offset and time. When the segments before the snapshot are still in the
log dir, the entity's own records are read from them instead (with their
offsets and times); where the log does not reach back, the snapshot's
record is listed, marked '[from snapshot]': the entity was so at that
offset, created or changed at some time before it.

--output json: a JSON array of {offset, time, type, summary, fromSnapshot};
with several PATHs or a glob, an object mapping each matched path to its
array.

Errors: 'changes: PATH: no such file or directory', 'changes: PATH: no
change history (not an entity)'; the exit status is then 1."""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="+", metavar="PATH", help="entities to show")

    def run(self, ctx, args) -> int:
        status = OK
        results = []
        for target in args.targets:
            matches = expand(ctx, target)
            if not matches:
                rows = None if has_glob(target) else _removed(ctx, target)
                if rows is None:
                    ctx.error(f"changes: {target}: {NOT_FOUND}")
                    status = FAILED
                else:
                    results.append((target, rows))
                continue
            for match in matches:
                label = shown(target, match)
                try:
                    rows = ctx.session.changes(match.path)
                except KeyError:
                    ctx.error(f"changes: {label}: no change history (not an entity)")
                    status = FAILED
                    continue
                results.append((label, rows))
        several = len(args.targets) > 1 or any(has_glob(t) for t in args.targets)
        if ctx.json:
            if several:
                ctx.write(json_text({label: rows for label, rows in results}))
            elif results:
                ctx.write(json_text(results[0][1]))
            return status
        for i, (label, rows) in enumerate(results):
            if several or len(results) > 1:
                if i:
                    ctx.write()
                ctx.write(f"{label}:")
            ctx.write_lines(table_lines(
                [[str(r.get("offset", "-")), str(r.get("time", "-")), str(r.get("type", "")),
                  str(r.get("summary", "")) + (SNAPSHOT_MARK if r.get("fromSnapshot") else "")]
                 for r in rows], right=(0,)))
        return status


def _removed(ctx, target: str) -> "list | None":
    """The history of an entity no longer in the tree (removed), or None
    when there is none."""
    try:
        return ctx.session.changes(paths.to_text(paths.resolve(ctx.cwd, target)))
    except KeyError:
        return None
