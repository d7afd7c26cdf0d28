"""ls: list metadata nodes."""

from __future__ import annotations

import re

from metashell.commands.base import (FAILED, NOT_FOUND, OK, Command, basename, expand,
                                     has_glob, shown)
from metashell.fs import bulk, paths
from metashell.render import (column_lines, iso_time, json_text, style, table_lines,
                              value_text)

DIR_STYLE = "bold blue"
#: a node in a state to notice (a fenced broker: ``Node.attention``)
ATTENTION_STYLE = "bold red"
#: the header line of ``ls -l``
_LONG_HEADER = ["T", "SIZE", "OFFSET", "LAST CHANGE", "NAME"]

#: colouring needs every child's node; above this many names ls prints plain
COLOR_LIMIT = 10000


#: before the offset and time of a last change that is the snapshot's stamp
SNAPSHOT_MARK = "\u2264"


def _style(node) -> str:
    """How ``ls`` colours a name ("": not at all): a node to notice (a
    fenced broker) in red, a directory in blue."""
    if node is None:
        return ""
    if node.attention():
        return ATTENTION_STYLE
    return DIR_STYLE if node.is_dir else ""


def _json_entry(ctx, name: str, node, path: str) -> dict:
    """What ``ls -l -o json`` shows of one node: its remark as fields where
    the node gives them (a broker's start), else as text."""
    entry = _entry(ctx, name, node, path)
    fields = node.note_fields()
    if fields:
        entry.pop("note", None)
        entry.update(fields)
    return entry


def _entry(ctx, name: str, node, path: str) -> dict:
    """What ``ls -l`` shows of the node at ``path``. Its last change, where
    it is a snapshot's stamp, is read from the log before the snapshot when
    the log dir holds it (``Session.last_change``); ``fromSnapshot``: it
    still is one (the entity was so there, changed at or before it)."""
    if node.is_dir:
        size = len(node.children())
    else:
        size = len(value_text(node.value()))
    change, from_snapshot = node.last_change(), False
    honest = getattr(ctx.session, "last_change", None)
    if honest is not None and change is not None:
        change, from_snapshot = honest(paths.split(path), change)
    offset, ms = change if change is not None else (None, None)
    entry = {"name": name, "type": "dir" if node.is_dir else "file", "size": size,
             "offset": offset, "time": iso_time(ms) if ms is not None else None,
             "fromSnapshot": from_snapshot}
    note = node.note()
    if note:
        entry["note"] = note
    return entry


#: how a reason for an unknown time names the row's own offset (the row shows it)
_UNKNOWN_OFFSET = re.compile(r"^offset \d+ is ")


def _row_note(node, entry: dict, reasons: dict) -> "str | None":
    """The note of a row of ``ls -l``: a broker's start whose time is unknown
    names its reason by number, and ``reasons`` (reason -> number) collects
    them to be said once under the table, not once per broker."""
    fields = node.note_fields() if node.is_dir else None
    if not fields or fields.get("registeredAt") is not None or not fields.get("why"):
        return entry.get("note")
    why = _UNKNOWN_OFFSET.sub("", fields["why"])
    offset = fields.get("registeredAtOffset")
    at = "" if offset is None else f" at offset {offset}"
    return f"registered{at}, time unknown [{reasons.setdefault(why, len(reasons) + 1)}]"


def _under(path: str, pairs) -> list[tuple]:
    """``(name, node, path)`` of ``pairs`` of names and nodes in directory ``path``."""
    return [(name, node, paths.child_path(path, name)) for name, node in pairs]


class Ls(Command):
    name = "ls"
    description = "List metadata nodes."
    details = """\
With no PATH, lists the working directory. A directory is listed as its
children (sorted numerically when all names are numbers), a file by its
name; files come first, then each directory under a 'PATH:' header when
there is more than one thing to list. On a terminal names are laid out in
columns to the terminal width (column-major, like Kafka's shell);
otherwise one name per line.

-l prints a header line (T SIZE OFFSET LAST CHANGE NAME), then one line
per entry: type (d or -), size (a directory: its number
of children; a file: the length of its text as cat prints it), the offset
and ISO-8601 UTC time of the record that last changed it ('-' if unknown),
and the name, followed by a note in parentheses where there is one:

  /brokers/<id>                 when the broker registered its current
                                incarnation (started), and at which offset
  /brokers/<id>/registeredAt    why it is null: no file holds the batch at
                                the registration offset (the segments were
                                deleted after a snapshot covered them, a
                                snapshot file was loaded on its own, a live
                                session did not fetch that far back, the log
                                is damaged there)
  /brokers/<id>/registeredAtOffset
                                why it is null: the broker epoch is not an
                                offset of this log (a ZooKeeper broker being
                                migrated, whose epoch is ZooKeeper's, or an
                                epoch beyond the log's last offset)

registeredAtOffset is the broker epoch: a KRaft controller takes it from
the log offset of the write that registers the broker. registeredAt is the
append time of that write's batch: the record's own time when it was
replayed, else read from the batch headers of the segments before the
snapshot (never decoding a record; the first metadata batch from that
offset on, as a Raft control batch the controller did not count can sit at
the epoch's offset).

Where the last change of an entity is in the snapshot loaded, it is read
from the segments before the snapshot when the log dir still holds them
(as 'changes PATH' does). What no segment holds is marked '≤' (before
its offset and time): the stamp of a snapshot, the entity was so there,
changed at or before that offset.

--output json: a JSON array of names; with several PATHs or a glob, an
object mapping each matched path to its array. With -l the names become
objects {name, type, size, offset, time, fromSnapshot}; where text shows a
note, the fields it is made of instead: a broker's registeredAt,
registeredAtOffset and why (why a value is null, else null); registeredAt
and registeredAtOffset files: why.

Errors: 'ls: PATH: no such file or directory' (exit status 1)."""

    def add_arguments(self, parser):
        parser.add_argument("-l", "--long", action="store_true",
                            help="long listing: type, size, last change offset and time")
        parser.add_argument("targets", nargs="*", metavar="PATH",
                            help="directories or files to list (default: .)")

    def run(self, ctx, args) -> int:
        targets = args.targets or ["."]
        status = OK
        files: list[tuple[str, str, object, str]] = []  # (label, name, node, path)
        dirs: list[tuple[str, object, str]] = []        # (label, node, path)
        for target in targets:
            matches = expand(ctx, target)
            if not matches:
                ctx.error(f"ls: {target}: {NOT_FOUND}")
                status = FAILED
                continue
            for match in matches:
                label = shown(target, match)
                if match.node.is_dir:
                    dirs.append((label, match.node, match.path))
                else:
                    files.append((label, basename(match.path), match.node, match.path))
        several = len(targets) > 1 or any(has_glob(t) for t in targets)
        if ctx.json:
            self._json(ctx, args.long, files, dirs, several)
        else:
            self._text(ctx, args.long, files, dirs)
        return status

    # ------------------------------------------------------------------ json

    def _json(self, ctx, long, files, dirs, several) -> None:
        def names(entries):
            return [_json_entry(ctx, n, c, p) if long else n for n, c, p in entries]

        if not several:
            if dirs:
                ctx.write(json_text(names(_under(dirs[0][2], bulk.entries(dirs[0][1])))))
            elif files:
                ctx.write(json_text(names([files[0][1:]])))
            else:
                ctx.write("[]")
            return
        result = {}
        for label, name, node, path in files:
            result[label] = names([(name, node, path)])
        for label, node, path in dirs:
            result[label] = names(_under(path, bulk.entries(node)))
        ctx.write(json_text(result))

    # ------------------------------------------------------------------ text

    def _text(self, ctx, long, files, dirs) -> None:
        sections = 0
        if files:
            self._print_entries(ctx, long, [f[1:] for f in files])
            sections += 1
        need_header = bool(files) or len(dirs) > 1
        for label, node, path in dirs:
            if need_header:
                if sections:
                    ctx.write()
                ctx.write(f"{label}:")
            self._print_entries(ctx, long, None, node, path)
            sections += 1

    def _print_entries(self, ctx, long, entries, directory=None, path="/") -> None:
        """``entries`` (name, node, path), else the children of ``directory`` at ``path``."""
        if long:
            if entries is None:
                entries = _under(path, bulk.entries(directory))
            rows, reasons = [], {}
            for name, node, at in entries:
                e = _entry(ctx, name, node, at)
                spec = _style(node)
                shown_name = style(name, spec, ctx.color and bool(spec))
                note = _row_note(node, e, reasons)
                if note:
                    shown_name += f"  ({note})"
                mark = SNAPSHOT_MARK if e["fromSnapshot"] else ""
                rows.append(["d" if node.is_dir else "-", str(e["size"]),
                             "-" if e["offset"] is None else mark + str(e["offset"]),
                             mark + e["time"] if e["time"] else "-", shown_name])
            if rows:
                ctx.write_lines(table_lines([_LONG_HEADER] + rows, right=(1, 2)))
            for why, number in reasons.items():
                ctx.write(f"[{number}] time unknown: {why}")
            return
        if entries is None:
            names = directory.children()
            if ctx.color and len(names) <= COLOR_LIMIT:
                styles = [_style(directory.child(name)) for name in names]
            else:
                styles = None
        else:
            names = [n for n, _, _ in entries]
            styles = [_style(node) for _, node, _ in entries] if ctx.color else None
        if styles is None:
            decorate = None
        else:
            def decorate(index, text):
                return style(text, styles[index], bool(styles[index]))
        ctx.write_lines(column_lines(names, ctx.width, decorate))
