"""diff: what changed between two points of a cluster's metadata, or two clusters."""

from __future__ import annotations

import argparse
import os

from metashell.commands.base import USAGE, Command
from metashell.errors import MetashellError
from metashell.fs import paths
from metashell.fs.compare import ADD, MODIFY, REMOVE, compare, subtree_value
from metashell.fs.node import lookup
from metashell.fs.root import build_root
from metashell.render import json_text, parse_time, scalar_text, style, table_lines

SAME, DIFFERENT = 0, 1
SIGNS = {ADD: "+", REMOVE: "-", MODIFY: "~"}
ARROW = "→"
#: left out of a diff of "/": /local describes the loading, /topicIds repeats /topics,
#: /image shows the whole image again the way Kafka's shell does
ALWAYS_LEFT_OUT = ("local",)
MIRRORS = (("topicIds",), ("image",))
QUORUM = ("metadataQuorum",)


def _time(text: str) -> int:
    try:
        return parse_time(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


#: the colour of a change's line on a terminal
_OP_STYLES = {ADD: "green", REMOVE: "red"}


class Diff(Command):
    name = "diff"
    description = "Show what changed between this image and an earlier point or another source."
    needs_session = True
    details = """\
Compares the loaded image (the "to" side: what -s loaded, up to
--until-offset/--until-time if given) with another one (the "from" side):

  --from-offset N   the same source replayed up to offset N
  --from-time T     the same source replayed up to time T (ISO-8601 or epoch ms)
  --against SOURCE  another snapshot, segment or metadata log dir

One line per changed node under each PATH (default /; not a glob), in tree
order:
  + PATH  [value]                  added (a directory: its path only)
  - PATH  [value]                  removed
  ~ PATH  old → new                a file whose value changed
  ~ PATH  field old → new  ...     an object: only the fields that changed
Secrets stay redacted on both sides: a changed one shows as
'[redacted] → [redacted]' (--show-secrets prints them). /local is left out,
/topicIds (the same topics as /topics) unless named, and /metadataQuorum
(whose offset and time always move) unless --include-quorum or named.
Topics are matched by name; with --by-id by topic id, so a topic deleted
and re-created under the same name shows as replaced ('-' then '+'). A
broker's registeredAt that one side cannot know (null: it was loaded from a
snapshot) is not a change.

--stat prints, instead, the number of nodes added, removed and modified
under each top-level directory.

--output json: one JSON object per line and change: {path, op ("add",
"remove" or "modify"), old, new}, with "fields" ({field: {old, new}}) when
an object changed; a directory's value is its subtree as 'tree' prints it.
With --stat, one object {directory: {added, removed, modified}}.

Exit status (as diff(1)): 0 the images are equal, 1 they differ, 2 a usage
error, a PATH in neither image, or the other side could not be loaded (one
line on stderr says why); a --from-offset or --from-time past the end of
the data is such an error, as the data has no image there. In script mode, as any status but 0, a diff
that finds changes makes the run's status 1."""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="*", metavar="PATH",
                            help="subtrees to compare (default: /)")
        side = parser.add_mutually_exclusive_group(required=True)
        side.add_argument("--from-offset", metavar="N", type=int,
                          help="compare with the same source replayed up to offset N")
        side.add_argument("--from-time", metavar="T", type=_time,
                          help="compare with the same source replayed up to time T")
        side.add_argument("--against", metavar="SOURCE",
                          help="compare with another snapshot, segment or log dir")
        parser.add_argument("--stat", action="store_true",
                            help="counts per top-level directory instead of one line per change")
        parser.add_argument("--by-id", action="store_true",
                            help="match topics by topic id instead of by name")
        parser.add_argument("--include-quorum", action="store_true",
                            help="compare /metadataQuorum too")

    def problem(self, args) -> str | None:
        if args.from_offset is not None and args.from_offset < 0:
            return "--from-offset: must be 0 or more"
        return None

    def run(self, ctx, args) -> int:
        session = ctx.session
        targets = [tuple(paths.resolve(ctx.cwd, t)) for t in (args.targets or ["/"])]
        skips = [_left_out(parts, args.include_quorum) for parts in targets]
        # a rewound image has no quorum of its own
        quorum = any(QUORUM not in skip for skip in skips)
        try:
            old_image, findings = session.baseline(from_offset=args.from_offset,
                                                   from_time=args.from_time,
                                                   against=args.against, rewinding=not quorum)
        except MetashellError as e:
            ctx.error(f"diff: {e}")
            return USAGE
        except OSError as e:
            ctx.error(f"diff: {e.filename or args.against}: {e.strerror or e}")
            return USAGE
        problems = set(findings.problems)
        for line in findings.lines:
            ctx.warn(line, problem=line in problems)
        try:
            return self._compare(ctx, args, old_image, targets, skips)
        except MetashellError as e:   # a file changed under us while records were read again
            ctx.error(f"diff: {e}")
            return USAGE

    def _compare(self, ctx, args, old_image, targets, skips) -> int:
        session = ctx.session
        secrets = getattr(session, "show_secrets", False)
        # brokers' start times from the source's batch headers, on both sides when it
        # is the same source (a broker of a snapshot has no other): as the tree shows
        times = getattr(session, "times", None)
        sides = _Sides(old_image, session.image, secrets, times,
                       times if args.against is None else None)
        for parts in targets:
            if parts[:1] != ALWAYS_LEFT_OUT and (lookup(sides.old, parts) is None
                                                 and lookup(sides.new, parts) is None):
                ctx.error(f"diff: {paths.to_text(parts)}: no such file or directory in either image")
                return USAGE
        changes, seen = [], set()
        for parts, skip in zip(targets, skips):
            for change in compare(lookup(sides.old, parts), lookup(sides.new, parts), parts,
                                  by_id=args.by_id, skip=skip):
                key = (change.parts, change.op)
                if key not in seen:
                    seen.add(key)
                    changes.append(change)
        if args.stat:
            _write_stat(ctx, changes)
        else:
            for change in changes:
                if ctx.json:
                    ctx.write(json_text(sides.json(change)))
                else:   # on a terminal: additions green, removals red
                    ctx.write(style(sides.line(change), _OP_STYLES.get(change.op, ""), ctx.color))
        return DIFFERENT if changes else SAME

    def complete(self, ctx, words):
        if len(words) >= 2 and words[-2] == "--against":
            return _local_paths(words[-1])
        return super().complete(ctx, words)


def _left_out(target: tuple, include_quorum: bool) -> frozenset:
    """What a diff of ``target`` leaves out; a path named is always compared,
    except /local."""
    out = {ALWAYS_LEFT_OUT, *MIRRORS}
    if not include_quorum:
        out.add(QUORUM)
    return frozenset(p for p in out if p == ALWAYS_LEFT_OUT or target[:len(p)] != p)


class _Sides:
    """The two images, as compared (secrets shown: a changed secret must be
    seen to change) and as printed (secrets as the session shows them)."""

    def __init__(self, old_image, new_image, show_secrets: bool, new_times=None, old_times=None):
        self.old = build_root(old_image, show_secrets=True, times=old_times)
        self.new = build_root(new_image, show_secrets=True, times=new_times)
        self.old_shown = build_root(old_image, show_secrets=show_secrets, times=old_times)
        self.new_shown = build_root(new_image, show_secrets=show_secrets, times=new_times)

    def values(self, change, text: bool = False) -> tuple:
        """The old and new values (``text``: as text output shows them)."""
        old = lookup(self.old_shown, change.parts) if change.op != ADD else None
        new = lookup(self.new_shown, change.parts) if change.op != REMOVE else None
        return (subtree_value(old, text) if old is not None else None,
                subtree_value(new, text) if new is not None else None)

    def line(self, change) -> str:
        old, new = self.values(change, text=True)
        head = f"{SIGNS[change.op]} {change.path}"
        if change.op == MODIFY:
            if change.fields:
                return head + "".join(f"  {f} {_text(old.get(f))} {ARROW} {_text(new.get(f))}"
                                      for f in change.fields)
            return f"{head}  {_text(old)} {ARROW} {_text(new)}"
        node = lookup(self.old_shown if change.op == REMOVE else self.new_shown, change.parts)
        if node is None or node.is_dir:
            return head
        return f"{head}  {_text(old if change.op == REMOVE else new)}"

    def json(self, change) -> dict:
        old, new = self.values(change)
        out = {"path": change.path, "op": change.op, "old": old, "new": new}
        if change.fields:
            out["fields"] = {f: {"old": old.get(f), "new": new.get(f)} for f in change.fields}
        return out


def _text(value) -> str:
    """A value on a diff line: scalars as cat prints them, the rest as compact JSON."""
    return json_text(value) if isinstance(value, (dict, list)) else scalar_text(value)


def _write_stat(ctx, changes) -> None:
    counts: dict[str, dict[str, int]] = {}
    for change in changes:
        top = change.parts[0] if change.parts else "/"
        by_op = counts.setdefault(top, {"added": 0, "removed": 0, "modified": 0})
        by_op[{ADD: "added", REMOVE: "removed", MODIFY: "modified"}[change.op]] += 1
    if ctx.json:
        ctx.write(json_text(dict(sorted(counts.items()))))
        return
    rows = [[top, f"+{c['added']}", f"-{c['removed']}", f"~{c['modified']}"]
            for top, c in sorted(counts.items())]
    ctx.write_lines(table_lines(rows, right=(1, 2, 3)))
    total = {k: sum(c[k] for c in counts.values()) for k in ("added", "removed", "modified")}
    ctx.write(f"{len(changes)} change{'' if len(changes) == 1 else 's'}: {total['added']} added, "
              f"{total['removed']} removed, {total['modified']} modified")


def _local_paths(typed: str) -> list[str]:
    """Completions of a path on the local file system (for --against)."""
    directory, _, prefix = typed.rpartition("/")
    base = directory + "/" if directory or typed.startswith("/") else ""
    try:
        names = sorted(os.listdir(os.path.expanduser(base) or "."))
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith(prefix) and (prefix.startswith(".") or not name.startswith(".")):
            full = base + name
            out.append(full + "/" if os.path.isdir(os.path.expanduser(full)) else full)
    return out
