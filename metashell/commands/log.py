"""log: the records (or batches) of the source in log order, as in its files."""

from __future__ import annotations

from metashell.commands.base import (FAILED, NOT_FOUND, OK, USAGE, Command, UsageProblem,
                                     path_candidates)
from metashell.commands.context import WARNING_PREFIX
from metashell.commands.log_format import BatchFormat, RecordFormat
from metashell.commands.log_filter import EntityFilter, TypeFilter, type_names
from metashell.fast.door import shortcuts
from metashell.loader.log_walk import LogWalk, LogWindow, extent, log_files
from metashell.gcpause import no_cyclic_gc
from metashell.render import parse_time
from metashell.timefmt import iso_time


class Log(Command):
    name = "log"
    description = "Print the records (or batches) of the source in log order, as in its files."
    needs_session = True
    path_args = None
    details = """\
Every record of the files in file order, as written: a snapshot's offsets
are its own (from 0), as kafka-dump-log shows them; nothing is replayed,
merged or dropped. A log dir lists every segment (with --snapshots also its
bootstrap.checkpoint and every snapshot, before them); a file lists itself.
With -C (a live quorum): the batches fetched so far, in log order (with
--snapshots first the snapshot the leader sent, if it sent one), named
'log fetched from controllers ...'; the newest 256 MiB of them are kept.
With several files, text mode opens each with a '# FILE' line.

Text: one line per record, in columns: offset, ISO-8601 UTC time, type,
version (v0, v1, ...) and the one-line summary 'changes' shows (a record
with no summary of its own shows its fields, cut at 160 characters with
'...'; --full shows them whole). --output json: one
object per line, {offset, time, epoch, type, version, control, data}, data
in the tree's field names, secrets redacted unless --show-secrets.

--batches: one line per batch instead: base and last offset, record count,
epoch, producer id and epoch, append time, compression, size, byte
position, transactional and control flags and whether its CRC-32C
matches. --output json: {file, position, baseOffset, lastOffset, count,
epoch, producerId, producerEpoch, time, maxTime, compression, size,
transactional, control, crcValid}.

A damaged batch is never skipped silently: with --batches it is listed
(crcValid false, or an 'error' naming what is wrong); otherwise each is
one line on stderr with its file, byte position and offset, in order. The
exit status is then 1.

Filters (all of them apply): --from-offset/--to-offset and
--from-time/--to-time (inclusive; a time is ISO-8601 or epoch ms) select
records and batches; --type takes record type names, comma separated
(PartitionChange or PartitionChangeRecord, any case); --entity PATH keeps
the records of the entities at or under PATH (/brokers/1, /topics/orders,
/topics/orders/3, /configs/topic/orders, ...): a topic's are its own and
its partitions' ('changes PATH' lists the same records, as applied: log
shows them as written, an aborted transaction's too), also of a topic
deleted under that name. A PATH that names nothing (not in the tree, no
entity's history, no record of the files) is an error (status 1).

A window no record can be in (--from-offset after --to-offset, --from-time
after --to-time) is a usage error (status 2). A window that misses the
data (--from-offset past its last record, --to-offset before its first,
and the same of times) prints a warning naming where the data begins or
ends (a problem for --strict).

Examples:
  log --type PartitionChange --entity /topics/orders
  log --batches --from-time 2026-01-30T17:00:00Z
  -o json log --type RegisterBroker | jq -c '.data.brokerId'"""

    def add_arguments(self, parser):
        parser.add_argument("--from-offset", type=int, metavar="N", help="records at offset N or later")
        parser.add_argument("--to-offset", type=int, metavar="M", help="records up to offset M")
        parser.add_argument("--from-time", metavar="T", help="records at time T or later")
        parser.add_argument("--to-time", metavar="T", help="records up to time T")
        parser.add_argument("--type", metavar="NAME,...", help="only records of these types")
        parser.add_argument("--entity", metavar="PATH", help="only records of the entities under PATH")
        parser.add_argument("--batches", action="store_true", help="one line per batch")
        parser.add_argument("--full", action="store_true",
                            help="summaries whole (a record's fields are cut at 160 characters)")
        parser.add_argument("--snapshots", action="store_true",
                            help="a log dir's snapshots too (before its segments)")

    def problem(self, args) -> str | None:
        """A window no record can be in."""
        for option, value in (("--from-offset", args.from_offset), ("--to-offset", args.to_offset)):
            if value is not None and value < 0:
                return f"{option}: must be 0 or more"
        if (args.from_offset is not None and args.to_offset is not None
                and args.from_offset > args.to_offset):
            return (f"--from-offset {args.from_offset} is after --to-offset {args.to_offset}: "
                    "no record is in that range")
        try:
            window = _window(args)
        except UsageProblem as e:
            return str(e)
        if (window.from_time is not None and window.to_time is not None
                and window.from_time > window.to_time):
            return (f"--from-time {iso_time(window.from_time)} is after --to-time "
                    f"{iso_time(window.to_time)}: no record is in that range")
        return None

    def complete(self, ctx, words):
        """Options; after --entity a path, after --type the type names
        (the last of a comma-separated list)."""
        if len(words) >= 2 and words[-2] == "--entity":
            return path_candidates(ctx, words[-1])
        if len(words) >= 2 and words[-2] == "--type":
            done, _, typed = words[-1].rpartition(",")
            prefix = done + "," if done else ""
            return [prefix + n for n in type_names() if n.lower().startswith(typed.lower())]
        return super().complete(ctx, words)

    def run(self, ctx, args) -> int:
        plan = getattr(ctx.session, "plan", None)
        fetched = getattr(ctx.session, "fetched_log", None)
        if plan is None and fetched is None:
            ctx.error("log: not available here: no files or quorum were read")
            return FAILED
        window = _window(args)
        if args.batches and (args.type or args.entity):
            raise UsageProblem("--type and --entity select records, not --batches")
        if plan is not None:
            files = log_files(plan, snapshots=args.snapshots)
        else:   # a live quorum: what was fetched so far
            files, notes = fetched(snapshots=args.snapshots)
            for note in notes:
                ctx.error(WARNING_PREFIX + note)
        if args.batches:
            status, shown = _print_batches(ctx, files, window)
        else:
            entity = _entity_filter(ctx, args)
            if entity is not None and ctx.root is not None and ctx.root.child(entity.target[0]) is None:
                ctx.error(f"log: --entity {args.entity}: {NOT_FOUND}")
                return FAILED
            status, shown = _print_records(ctx, files, window, _record_filter(ctx, args, entity),
                                           whole=args.full)
            if entity is not None and not entity.matched and not entity.known(ctx.root):
                ctx.error(f"log: --entity {args.entity}: {NOT_FOUND}")
                return FAILED
        if not shown and not window.everything:
            _say_where_the_data_is(ctx, files, window)
        return status

    def execute(self, ctx, argv):
        try:
            return super().execute(ctx, argv)
        except UsageProblem as e:   # raised by run: the options do not fit together
            ctx.error(f"log: {e}")
            return USAGE


def _window(args) -> LogWindow:
    def when(text, option):
        if text is None:
            return None
        try:
            return parse_time(text)
        except ValueError as e:
            raise UsageProblem(f"{option}: {e}") from None
    return LogWindow(args.from_offset, args.to_offset,
                     when(args.from_time, "--from-time"), when(args.to_time, "--to-time"))


def _entity_filter(ctx, args) -> "EntityFilter | None":
    return EntityFilter(ctx.session.image, ctx.cwd, args.entity) if args.entity else None


def _record_filter(ctx, args, entity: "EntityFilter | None"):
    """One predicate on records for --type and --entity (None: keep all)."""
    tests = []
    if args.type:
        tests.append(TypeFilter.parse(args.type))
    if entity is not None:
        tests.append(entity)
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]
    return lambda rec: all(t(rec) for t in tests)


class _Chunks:
    """Lines to ``out`` in chunks of about :data:`CHUNK` characters: a
    controller's log is mostly batches of a few records, and a write per
    batch cost a tenth of ``log``'s time. Flushed before anything goes to
    stderr, so that the two stay in order."""

    __slots__ = ("out", "parts", "size")

    def __init__(self, out):
        self.out, self.parts, self.size = out, [], 0

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.out.write("".join(self.parts))
            self.parts.clear()
            self.size = 0


CHUNK = 1 << 18


def _widths(files) -> tuple[int, int]:
    """Column widths for text, known before reading: an offset is below its
    file's base offset (its name) plus its size (every record takes bytes),
    a size or position below the size. Fetched batches (a live quorum) are
    not named by an offset: their columns take what they need."""
    offsets = sizes = 0
    for path in files:
        try:
            size = path.stat().st_size
        except (AttributeError, OSError):
            continue
        base = path.name.split("-")[0].split(".")[0]
        offsets = max(offsets, len(str((int(base) if base.isdigit() else 0) + size)))
        sizes = max(sizes, len(str(size)))
    return offsets, sizes


def _print_records(ctx, files, window: LogWindow, keep, whole: bool = False) -> int:
    """Returns the exit status and how many batches had records to show."""
    fmt = RecordFormat(json=ctx.json, show_secrets=ctx.session.show_secrets,
                       offset_width=_widths(files)[0], whole=whole)
    out = _Chunks(ctx.out)
    write = out.write
    status, shown = OK, 0
    with no_cyclic_gc():   # records are dropped a batch at a time: no cycles to find
        for path in files:
            walk = LogWalk(path, window, shortcuts=shortcuts)
            if len(files) > 1 and not ctx.json:
                write(f"# {walk.path}\n")
            for batch in walk:
                if batch.damage is not None:
                    out.flush()
                    ctx.error(f"log: {batch.damage}")
                    status = FAILED
                records = batch.records if keep is None else [r for r in batch.records if keep(r)]
                if records:
                    shown += 1
                    write(fmt.lines(batch, records))
            out.flush()
            _notes(ctx, walk)
    return status, shown


def _print_batches(ctx, files, window: LogWindow) -> int:
    """Returns the exit status and how many batches were listed."""
    offset_width, size_width = _widths(files)
    fmt = BatchFormat(json=ctx.json, offset_width=offset_width, size_width=size_width)
    out = _Chunks(ctx.out)
    write = out.write
    status, shown = OK, 0
    for path in files:
        walk = LogWalk(path, window, records=False)
        if len(files) > 1 and not ctx.json:
            write(f"# {walk.path}\n")
        for batch in walk:
            if batch.damage is not None:
                status = FAILED
            shown += 1
            write(fmt.line(batch))
        out.flush()
        _notes(ctx, walk)
    return status, shown


def _say_where_the_data_is(ctx, files, window: LogWindow) -> None:
    """A warning when ``window`` lies past the end or before the start of
    the data: an empty answer that says why."""
    found = extent(files)
    if found is None:
        return
    last = f"offset {found.last_offset} at {iso_time(found.last_time)}"
    first = f"offset {found.first_offset} at {iso_time(found.first_time)}"
    if window.from_offset is not None and window.from_offset > found.last_offset:
        ctx.warn(f"log: --from-offset {window.from_offset} is past the end of the data: "
                 f"the last record is {last}")
    elif window.from_time is not None and window.from_time > found.last_time:
        ctx.warn(f"log: --from-time {iso_time(window.from_time)} is past the end of the data: "
                 f"the last record is {last}")
    elif window.to_offset is not None and window.to_offset < found.first_offset:
        ctx.warn(f"log: --to-offset {window.to_offset} is before the start of the data: "
                 f"the first record is {first}")
    elif window.to_time is not None and window.to_time < found.first_time:
        ctx.warn(f"log: --to-time {iso_time(window.to_time)} is before the start of the data: "
                 f"the first record is {first}")


def _notes(ctx, walk: LogWalk) -> None:
    for note in walk.notes:
        ctx.error(WARNING_PREFIX + note)
