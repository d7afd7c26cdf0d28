"""ls: list metadata nodes."""

from __future__ import annotations

from metashell.commands.base import (FAILED, NOT_FOUND, OK, Command, basename, expand,
                                     has_glob, shown)
from metashell.render import (column_lines, iso_time, json_text, style, table_lines,
                              value_text)

DIR_STYLE = "bold blue"
#: the header line of ``ls -l``
_LONG_HEADER = ["T", "SIZE", "OFFSET", "LAST CHANGE", "NAME"]

#: colouring needs every child's node; above this many names ls prints plain
COLOR_LIMIT = 10000


def _json_entry(name: str, node) -> dict:
    """What ``ls -l -o json`` shows of one node: its remark as fields where
    the node gives them (a broker's start), else as text."""
    entry = _entry(name, node)
    fields = node.note_fields()
    if fields:
        entry.pop("note", None)
        entry.update(fields)
    return entry


def _entry(name: str, node) -> dict:
    """What ``ls -l`` shows of one node."""
    if node.is_dir:
        size = len(node.children())
    else:
        size = len(value_text(node.value()))
    change = node.last_change()
    offset, ms = change if change is not None else (None, None)
    entry = {"name": name, "type": "dir" if node.is_dir else "file", "size": size,
             "offset": offset, "time": iso_time(ms) if ms is not None else None}
    note = node.note()
    if note:
        entry["note"] = note
    return entry


def _children(node):
    for name in node.children():
        child = node.child(name)
        if child is not None:
            yield name, child


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

--output json: a JSON array of names; with several PATHs or a glob, an
object mapping each matched path to its array. With -l the names become
objects {name, type, size, offset, time}; where text shows a note, the
fields it is made of instead: a broker's registeredAt, registeredAtOffset
and why (why a value is null, else null); registeredAt and
registeredAtOffset files: why.

Errors: 'ls: PATH: no such file or directory' (exit status 1)."""

    def add_arguments(self, parser):
        parser.add_argument("-l", "--long", action="store_true",
                            help="long listing: type, size, last change offset and time")
        parser.add_argument("targets", nargs="*", metavar="PATH",
                            help="directories or files to list (default: .)")

    def run(self, ctx, args) -> int:
        targets = args.targets or ["."]
        status = OK
        files: list[tuple[str, str, object]] = []      # (label, name, node)
        dirs: list[tuple[str, object]] = []            # (label, node)
        for target in targets:
            matches = expand(ctx, target)
            if not matches:
                ctx.error(f"ls: {target}: {NOT_FOUND}")
                status = FAILED
                continue
            for match in matches:
                label = shown(target, match)
                if match.node.is_dir:
                    dirs.append((label, match.node))
                else:
                    files.append((label, basename(match.path), match.node))
        several = len(targets) > 1 or any(has_glob(t) for t in targets)
        if ctx.json:
            self._json(ctx, args.long, files, dirs, several)
        else:
            self._text(ctx, args.long, files, dirs)
        return status

    # ------------------------------------------------------------------ json

    def _json(self, ctx, long, files, dirs, several) -> None:
        def names(pairs):
            return [_json_entry(n, c) if long else n for n, c in pairs]

        if not several:
            if dirs:
                ctx.write(json_text(names(_children(dirs[0][1]))))
            elif files:
                ctx.write(json_text(names([(files[0][1], files[0][2])])))
            else:
                ctx.write("[]")
            return
        result = {}
        for label, name, node in files:
            result[label] = names([(name, node)])
        for label, node in dirs:
            result[label] = names(_children(node))
        ctx.write(json_text(result))

    # ------------------------------------------------------------------ text

    def _text(self, ctx, long, files, dirs) -> None:
        sections = 0
        if files:
            self._print_entries(ctx, long, [(name, node) for _, name, node in files])
            sections += 1
        need_header = bool(files) or len(dirs) > 1
        for label, node in dirs:
            if need_header:
                if sections:
                    ctx.write()
                ctx.write(f"{label}:")
            self._print_entries(ctx, long, None, node)
            sections += 1

    def _print_entries(self, ctx, long, pairs, directory=None) -> None:
        if long:
            if pairs is None:
                pairs = _children(directory)
            rows = []
            for name, node in pairs:
                e = _entry(name, node)
                shown_name = style(name, DIR_STYLE, ctx.color and node.is_dir)
                if "note" in e:
                    shown_name += f"  ({e['note']})"
                rows.append(["d" if node.is_dir else "-", str(e["size"]),
                             "-" if e["offset"] is None else str(e["offset"]),
                             e["time"] or "-", shown_name])
            if rows:
                ctx.write_lines(table_lines([_LONG_HEADER] + rows, right=(1, 2)))
            return
        if pairs is None:
            names = directory.children()
            if ctx.color and len(names) <= COLOR_LIMIT:
                is_dir = []
                for name in names:
                    child = directory.child(name)
                    is_dir.append(child is not None and child.is_dir)
            else:
                is_dir = None
        else:
            names = [n for n, _ in pairs]
            is_dir = [node.is_dir for _, node in pairs] if ctx.color else None
        if is_dir is None:
            decorate = None
        else:
            def decorate(index, text):
                return style(text, DIR_STYLE, is_dir[index])
        ctx.write_lines(column_lines(names, ctx.width, decorate))
