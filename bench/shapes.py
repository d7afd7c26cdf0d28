"""Loading the files Kafka writes, shape by shape, against kafka-python's bare walk.

Kafka's controller does not write the layout one bench happens to like:
a snapshot fills its batches up to 8 MiB (about 100,000 partition records
each), a CreateTopics of thousands of partitions is one batch in the log,
older clusters write PartitionRecord v0 and v1, and a controller's log is
mostly tiny batches (a NoOpRecord every half second, a few partition
changes at a time). Each row of the table is one such shape, written with
the project's writer (``_util``) and cached under ``bench/out/``:

``snap-8mib-v2``   snapshot, batches filled to 8 MiB, PartitionRecord v2
``snap-small-v2``  the same records, 1,000 to a batch
``snap-8mib-v1``   snapshot, 8 MiB batches, PartitionRecord v1 (3.7: directories)
``snap-8mib-v0``   snapshot, 8 MiB batches, PartitionRecord v0 (3.0-3.6)
``logdir``         a partition dir: the ``snap-8mib-v2`` snapshot plus a segment of
                   500,000 PartitionChangeRecords (ISR shrinks and expands, leader
                   moves; 1 to 200 per batch) and 200,000 NoOpRecords (one per batch)
``create-topics``  a segment and no snapshot: registrations, then CreateTopics
                   batches of 5,000 partitions (500 topics x 10) each
``snap-mixed``     snapshot, 8 MiB batches, PartitionRecord v2, topics as a real
                   cluster has them: 1 to 100 partitions, replication 1 to 3, each
                   partition's replicas drawn anew, names of many lengths, a few
                   lagging or offline partitions (``_util.mixed_topics``)
``logdir-mixed``   the ``logdir`` log on the ``snap-mixed`` snapshot
``snap-configs``   ``snap-8mib-v2`` with three config overrides on every topic
                   (``retention.ms``, ``cleanup.policy``, ``min.insync.replicas``), as
                   clusters whose topics are made by tools that set them have
``snap-acls``      ``snap-8mib-v2`` with two ACLs on every topic (a service principal
                   allowed to read and to write it)
``log-mixed``      a segment as a controller writes it (the ``log`` table's default):
                   one batch per CreateTopics of one topic (its 10 PartitionRecords),
                   two config overrides per topic a batch each, then 300,000
                   PartitionChangeRecords (1 to 200 per batch) among 50,000 NoOpRecords
                   (one per batch): 1 M records in all
``ctrl-log``       a segment as a controller writes it, batch by batch: the
                   registrations, then 100,000 topics created one per batch (a
                   TopicRecord and its 10 PartitionRecords), then 150,000 partition
                   changes one per batch, with 100,000 NoOpRecords (one per batch)
                   among them all: 350,000 batches
``logdir-ctrl``    the ``ctrl-log`` segment behind a snapshot of the registrations
                   (a partition dir)

(sizes for the default ``--partitions 1000000``; every count scales with it).

Each row times, in fresh processes (best of ``--rounds``, default 3):

``walk``     kafka-python's bare walk of the same files (``MemoryRecords``,
             every batch's CRC checked, every record framed, nothing decoded):
             the yardstick. Ratios against it hold on a noisy machine where
             seconds do not;
``ls``       ``open_session`` until ``ls /topics`` answers (target <= 0.2 x walk);
``summary``  the same load plus the ``summary`` command, which folds every
             partition (target <= 0.4 x walk);
``cat``      ``cat`` of one partition after the load (target <= 10 ms);
``until``    (log dirs, ``ctrl-log``) ``--until-offset`` in the middle of the log, until
             ``ls /topics`` answers (target <= 0.3 x walk);
``find``     (``--find`` rows, default ``snap-8mib-v2``) the full walk of the tree
             after the load, reading every value (target <= 15 s at 1 M partitions);

and the peak RSS of all of them (target <= 512 MiB for a 1 M-partition
snapshot, <= 768 MiB for the log dir; scaled with ``--partitions``).

A second table (``--commands`` rows, default ``snap-8mib-v2``) times the
whole-tree commands as one-shot runs do, load included, output to
``/dev/null`` (target each <= 2 x walk, peak RSS <= 768 MiB):

``tree``        ``-o json tree /topics``
``cat``         ``cat '/topics/*/*/data'`` (text: indented JSON per partition)
``find``        ``find /``
``partitions``  ``partitions --under-replicated``

and a third (``--log`` rows, default ``log-mixed``: a segment of 1 M records
at 1 M partitions) ``log`` of the segment to ``/dev/null``, text and ``-o
json``, as records per second of the one-shot run (the source opened as the
shell opens it for ``log``: its files planned, nothing replayed; target >=
200,000/s), beside the walk's records per second.
``us/rec`` is the ``ls`` time per record read; the line under the table
gives its spread across rows (target <= 1.5 x).

    python -m bench.shapes                          # every row, 1 M partitions
    python -m bench.shapes --partitions 100000      # quicker
    python -m bench.shapes --only logdir --rounds 1
    python -m bench.shapes --profile ls --only snap-8mib-v0
    python -m bench.shapes --skip-shapes --skip-commands --rounds 1   # the log table only
"""

from __future__ import annotations

import argparse
import json
import mmap
import random
import sys
from pathlib import Path

from bench._util import (OUT_DIR, Timer, batched, best_of_fresh, cat_one, cluster_records, human_bytes,
                         peak_rss_bytes, print_table, report_child, write_snapshot)

from metashell.kraft.writer import MAX_BATCH_BYTES, LogWriter, record, segment_name, snapshot_name

SHAPES = ("snap-8mib-v2", "snap-small-v2", "snap-8mib-v1", "snap-8mib-v0", "logdir",
          "create-topics", "snap-mixed", "logdir-mixed", "snap-configs", "snap-acls", "log-mixed",
          "ctrl-log", "logdir-ctrl")
GENERATOR_VERSION = 1
PARTITIONS_PER_TOPIC = 10
CREATE_TOPICS_BATCH = 5_000     # partitions per CreateTopics batch
EPOCH = 7
TIMESTAMP = 1_700_000_000_000

# targets (ratios of the bare walk; seconds; bytes at 1 M partitions)
LS_RATIO, SUMMARY_RATIO, UNTIL_RATIO = 0.2, 0.4, 0.3
COMMAND_RATIO, RSS_COMMANDS, LOG_RATE = 2.0, 768 << 20, 200_000
CAT_SECONDS, FIND_SECONDS = 0.010, 15.0
RSS_SNAPSHOT, RSS_LOGDIR = 512 << 20, 768 << 20
SPREAD = 1.5


# --------------------------------------------------------------------------- generating

def _snapshot(path: Path, partitions: int, version: int, per_batch, max_bytes,
              mixed: bool = False, overrides: int = 0, acls: int = 0) -> dict:
    n = write_snapshot(path, cluster_records(partitions // PARTITIONS_PER_TOPIC, PARTITIONS_PER_TOPIC,
                                             partition_version=version, mixed=mixed,
                                             overrides=overrides, acls=acls),
                       epoch=EPOCH, timestamp=TIMESTAMP, per_batch=per_batch, max_bytes=max_bytes)
    return {"records": n}


def _controller_log(partition_records: list, base: int, changes: int, noops: int,
                    seed: int = 7, timestamp: int = TIMESTAMP):
    """Batches as a controller writes them after the snapshot: partition
    changes a few at a time (1 to 200: an AlterPartition or an election's
    worth) and a NoOpRecord alone every so often, in random order."""
    rng = random.Random(seed)
    w = LogWriter(base, EPOCH, timestamp)
    state = {}   # partition -> (isr shrunk?, leader index)
    sizes = (1, 1, 1, 2, 3, 5, 10, 20, 50, 200)
    while changes or noops:
        if noops and rng.random() < noops / (noops + changes / 25):
            w.batch([record("NoOpRecord")], timestamp=w.timestamp)
            noops -= 1
        else:
            chunk = []
            for _ in range(min(changes, rng.choice(sizes))):
                i = rng.randrange(len(partition_records))
                tid, pid, replicas = partition_records[i]
                shrunk, leader = state.get(i, (False, 0))
                op = rng.randrange(3)
                if op == 0 and not shrunk:       # a follower falls out of the ISR
                    shrunk = True
                    chunk.append(record("PartitionChangeRecord", 0, partitionId=pid, topicId=tid,
                                        isr=[replicas[leader], replicas[1 - leader]]))
                elif op == 1 and shrunk:         # it catches up
                    shrunk = False
                    chunk.append(record("PartitionChangeRecord", 0, partitionId=pid, topicId=tid,
                                        isr=list(replicas)))
                else:                            # the leader moves between the first two
                    leader = 1 - leader
                    chunk.append(record("PartitionChangeRecord", 0, partitionId=pid, topicId=tid,
                                        leader=replicas[leader]))
                state[i] = (shrunk, leader)
            changes -= len(chunk)
            w.batch(chunk, timestamp=w.timestamp)
        w.timestamp += 100
        if len(w.parts) >= 1024:
            yield b"".join(w.parts)
            w.parts.clear()
    yield b"".join(w.parts)


def _logdir(path: Path, partitions: int, mixed: bool = False) -> dict:
    part = path / "__cluster_metadata-0"
    part.mkdir(parents=True)
    parts = []

    def keep(records):
        for r in records:
            if r.spec.name == "PartitionRecord":
                # (one replica: the log's leader moves between it and itself)
                replicas = r.data["replicas"]
                parts.append((r.data["topicId"], r.data["partitionId"],
                              replicas if len(replicas) > 1 else replicas * 2))
            yield r

    tmp = part / "snapshot.tmp"
    n = write_snapshot(tmp, keep(cluster_records(partitions // PARTITIONS_PER_TOPIC,
                                                 PARTITIONS_PER_TOPIC, mixed=mixed)),
                       epoch=EPOCH, timestamp=TIMESTAMP, per_batch=None, max_bytes=MAX_BATCH_BYTES)
    end = n + 1000   # the snapshot covers the log up to here
    tmp.rename(part / snapshot_name(end, EPOCH))
    changes, noops = partitions // 2, partitions // 5
    with open(part / segment_name(end), "wb") as f:
        for chunk in _controller_log(parts, end, changes, noops):
            f.write(chunk)
    return {"records": n + changes + noops, "until": end + (changes + noops) // 2}


def _create_topics(path: Path, partitions: int) -> dict:
    """Records grouped as the controller commits them: the registrations,
    then one batch per CreateTopics request of 5,000 partitions."""
    def requests():
        chunk, in_chunk = [], 0
        for r in cluster_records(partitions // PARTITIONS_PER_TOPIC, PARTITIONS_PER_TOPIC):
            if r.spec.name == "TopicRecord" and chunk and (in_chunk >= CREATE_TOPICS_BATCH
                                                          or not in_chunk):
                yield chunk
                chunk, in_chunk = [], 0
            chunk.append(r)
            in_chunk += r.spec.name == "PartitionRecord"
        yield chunk

    w = LogWriter(0, EPOCH, TIMESTAMP)
    n = 0
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for chunk in requests():
            for part in batched(chunk, per_batch=None, max_bytes=MAX_BATCH_BYTES):
                w.batch(part, timestamp=w.timestamp)
                n += len(part)
            w.timestamp += 1000
            f.write(b"".join(w.parts))
            w.parts.clear()
    tmp.rename(path)
    return {"records": n}


def _log_mixed(path: Path, partitions: int) -> dict:
    """A segment of a controller's writes, 1 M records at 1 M partitions:
    the registrations, one batch per topic created (its TopicRecord and 10
    PartitionRecords), its two config overrides one batch each (as
    IncrementalAlterConfigs commits them), then partition changes a few at
    a time among NoOpRecords (:func:`_controller_log`)."""
    parts = []
    w = LogWriter(0, EPOCH, TIMESTAMP)
    n = 0
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        chunk = []

        def flush():
            nonlocal n
            if chunk:
                w.batch(chunk, timestamp=w.timestamp)
                n += len(chunk)
                w.timestamp += 50
                chunk.clear()
            if len(w.parts) >= 1024:
                f.write(b"".join(w.parts))
                w.parts.clear()

        for r in cluster_records(partitions // (2 * PARTITIONS_PER_TOPIC), PARTITIONS_PER_TOPIC,
                                 overrides=2):
            name = r.spec.name
            if name == "TopicRecord" or (name == "ConfigRecord" and r.data["resourceType"] == 2):
                flush()
            elif name == "PartitionRecord":
                parts.append((r.data["topicId"], r.data["partitionId"], r.data["replicas"]))
            chunk.append(r)
        flush()
        f.write(b"".join(w.parts))
        changes, noops = partitions * 3 // 10, partitions // 20
        for part in _controller_log(parts, w.next_offset, changes, noops, timestamp=w.timestamp):
            f.write(part)
    tmp.rename(path)
    return {"records": n + changes + noops}


def _ctrl_batches(w: LogWriter, partitions: int, seed: int = 11):
    """The batches of :func:`_ctrl_log` after the registrations, appended to
    ``w``; yields the bytes written so far every 1024 batches."""
    rng = random.Random(seed)
    topics = partitions // PARTITIONS_PER_TOPIC
    changes, noops = partitions * 3 // 20, partitions // 10
    created, parts, state = 0, [], {}
    # a TopicRecord and its partitions, as cluster_records writes them, one topic at a time
    records = cluster_records(topics, PARTITIONS_PER_TOPIC)
    chunk = []

    def topic_batch():
        nonlocal chunk
        for r in records:
            name = r.spec.name
            if name == "TopicRecord" and chunk:
                out, chunk = chunk, [r]
                return out
            if name == "TopicRecord" or name == "PartitionRecord":
                if name == "PartitionRecord":
                    parts.append((r.data["topicId"], r.data["partitionId"], r.data["replicas"]))
                chunk.append(r)
        out, chunk = chunk, []
        return out

    data = topics + changes
    while created < topics or changes or noops:
        if noops and rng.random() < noops / (noops + data):
            w.batch([record("NoOpRecord")], timestamp=w.timestamp)
            noops -= 1
        elif created < topics:
            w.batch(topic_batch(), timestamp=w.timestamp)
            created += 1
            data -= 1
        else:
            i = rng.randrange(len(parts))
            tid, pid, replicas = parts[i]
            shrunk, leader = state.get(i, (False, 0))
            if not shrunk and rng.random() < 0.5:      # a follower falls out of the ISR
                shrunk = True
                change = record("PartitionChangeRecord", 0, partitionId=pid, topicId=tid,
                                isr=[replicas[leader], replicas[1 - leader]])
            elif shrunk:                               # it catches up
                shrunk = False
                change = record("PartitionChangeRecord", 0, partitionId=pid, topicId=tid,
                                isr=list(replicas))
            else:                                      # the leader moves between the first two
                leader = 1 - leader
                change = record("PartitionChangeRecord", 0, partitionId=pid, topicId=tid,
                                leader=replicas[leader])
            state[i] = (shrunk, leader)
            w.batch([change], timestamp=w.timestamp)
            changes -= 1
            data -= 1
        w.timestamp += 100
        if len(w.parts) >= 1024:
            yield b"".join(w.parts)
            w.parts.clear()
    yield b"".join(w.parts)
    w.parts.clear()


def _registrations():
    """The records of a cluster with no topics: features, controllers, brokers."""
    return list(cluster_records(0, PARTITIONS_PER_TOPIC))


def _ctrl_log(path: Path, partitions: int) -> dict:
    """A controller's log as it is written (``ctrl-log``, ``logdir-ctrl``):
    the registrations (one batch in the segment, the snapshot of the log
    dir), then every topic created in a batch of its own, then partition
    changes one per batch, NoOpRecords one per batch among them all."""
    regs = _registrations()
    if path.suffix == ".log":
        part, w = None, LogWriter(0, EPOCH, TIMESTAMP)
        w.batch(regs)
        seg = path.with_name(path.name + ".tmp")
    else:
        part = path / "__cluster_metadata-0"
        part.mkdir(parents=True)
        tmp = part / "snapshot.tmp"
        end = write_snapshot(tmp, regs, epoch=EPOCH, timestamp=TIMESTAMP, per_batch=None,
                             max_bytes=MAX_BATCH_BYTES)
        tmp.rename(part / snapshot_name(end, EPOCH))
        w = LogWriter(end, EPOCH, TIMESTAMP)
        seg = part / segment_name(end)
    start = w.next_offset
    with open(seg, "wb") as f:
        for chunk in _ctrl_batches(w, partitions):
            f.write(chunk)
    if part is None:
        seg.rename(path)
    # (the snapshot's records and the segment's: as many as the log's offsets)
    return {"records": w.next_offset, "until": (start + w.next_offset) // 2}


def shape_path(shape: str, partitions: int) -> tuple[Path, dict]:
    """The cached file (or directory) of ``shape``, and what the generator
    said about it (``records``, and ``until`` for the log dir)."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    stem = f"shape-g{GENERATOR_VERSION}-{shape}-{partitions}p"
    path = OUT_DIR / (stem + shape_suffix(shape))
    about = OUT_DIR / (stem + ".json")
    if not about.exists():
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
        with Timer() as t:
            if path.is_dir():
                import shutil
                shutil.rmtree(path)
            info = generate(shape, path, partitions)
        print(f"  {info['records']:,} records, {human_bytes(_size(path))} in {t.seconds:.0f} s",
              file=sys.stderr, flush=True)
        about.write_text(json.dumps(info))
    return path, json.loads(about.read_text())


def shape_suffix(shape: str) -> str:
    """How the name of a file of ``shape`` ends (a log dir: no suffix)."""
    return ("" if shape.startswith("logdir") else ".log" if shape in ("create-topics", "log-mixed",
                                                                      "ctrl-log")
            else ".checkpoint")


def generate(shape: str, path: Path, partitions: int) -> dict:
    """Write ``shape`` at ``path`` (ending as :func:`shape_suffix` says);
    what the generator says about it (``records``, ``until`` for a log dir).
    The tests generate small ones too."""
    if shape in ("ctrl-log", "logdir-ctrl"):
        return _ctrl_log(path, partitions)
    if shape.startswith("logdir"):
        return _logdir(path, partitions, mixed=shape == "logdir-mixed")
    if shape == "create-topics":
        return _create_topics(path, partitions)
    if shape == "log-mixed":
        return _log_mixed(path, partitions)
    if shape == "snap-mixed":
        return _snapshot(path, partitions, 2, None, MAX_BATCH_BYTES, mixed=True)
    if shape == "snap-configs":
        return _snapshot(path, partitions, 2, None, MAX_BATCH_BYTES, overrides=3)
    if shape == "snap-acls":
        return _snapshot(path, partitions, 2, None, MAX_BATCH_BYTES, acls=2)
    small = shape.startswith("snap-small")
    return _snapshot(path, partitions, int(shape[-1]), 1000 if small else None,
                     None if small else MAX_BATCH_BYTES)


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(
        f.stat().st_size for f in path.rglob("*") if f.is_file())


# --------------------------------------------------------------------------- measuring

def _files(path: Path) -> list[Path]:
    from metashell.loader.inputs import plan
    return list(plan(path).files)


def measure_walk(path: Path, info: dict) -> dict:
    """kafka-python's bare walk: CRC of every batch, every record framed."""
    from kafka.record import MemoryRecords
    files = _files(path)
    n = 0
    with Timer() as t:
        for f in files:
            with open(f, "rb") as fh:
                buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            records = MemoryRecords(buf)
            while (batch := records.next_batch()) is not None:
                if not batch.validate_crc():
                    raise SystemExit(f"{f}: CRC mismatch")
                for _ in batch:
                    n += 1
    return {"seconds": t.seconds, "records": n}


def measure_ls(path: Path, info: dict) -> dict:
    """Load until ``ls /topics`` answers; then ``cat`` and ``summary`` on the
    same load (a one-shot ``summary`` costs the load plus the command)."""
    from metashell.session.files import open_session
    with Timer() as t:
        s = open_session(path)
        names = s.root.child("topics").children()
    cat, cat_path, _ = cat_one(s)
    with Timer() as summ:
        summary = s.summary()
    return {"seconds": t.seconds, "topics": len(names), "cat": cat, "cat_path": cat_path,
            "summary": t.seconds + summ.seconds, "partitions": summary["partitions"]}


def measure_until(path: Path, info: dict) -> dict:
    from metashell.session.files import open_session
    with Timer() as t:
        s = open_session(path, until_offset=info["until"])
        names = s.root.child("topics").children()
    return {"seconds": t.seconds, "topics": len(names), "last_offset": s.image.last_offset}


def measure_find(path: Path, info: dict) -> dict:
    from metashell.fs.walk import walk
    from metashell.session.files import open_session
    s = open_session(path)
    files = 0
    with Timer() as t:
        for _, node in walk(s.root, "/"):
            if not node.is_dir:
                node.value()
                files += 1
    return {"seconds": t.seconds, "files": files}


#: the whole-tree commands timed by the second table: (output, words)
COMMANDS = {"tree": ("json", ["tree", "/topics"]), "cat": ("text", ["cat", "/topics/*/*/data"]),
            "find": ("text", ["find", "/"]), "partitions": ("text", ["partitions", "--under-replicated"]),
            "log": ("text", ["log"]), "log-json": ("json", ["log"])}


def measure_command(path: Path, info: dict, what: str) -> dict:
    """A one-shot run of a command: the load, then the command, its output
    to /dev/null (streamed: nothing holds it)."""
    from metashell.commands import Context, run_words
    from metashell.session.planned import PlannedSession
    from metashell.session.files import open_session
    output, words = COMMANDS[what]
    # as the shell opens the source for a one-shot command: log plans the files, replays nothing
    opener = PlannedSession if words[0] == "log" else open_session
    with open("/dev/null", "w") as sink, Timer() as t:
        s = opener(path)
        status = run_words(Context.for_session(s, out=sink, output=output), words)
    return {"seconds": t.seconds, "status": status}


MEASURES = {"walk": measure_walk, "ls": measure_ls, "until": measure_until, "find": measure_find}
MEASURES.update({f"cmd-{name}": (lambda name: lambda p, i: measure_command(p, i, name))(name)
                 for name in COMMANDS})


def child(what: str, path: Path, info: dict) -> None:
    import kafka.record  # noqa: F401  (imports are not timed)
    import metashell.commands  # noqa: F401
    import metashell.fs.walk  # noqa: F401
    import metashell.session.files  # noqa: F401
    result = MEASURES[what](path, info)
    result.update(peak_rss=peak_rss_bytes())
    report_child(result)


# --------------------------------------------------------------------------- main

def _ratio(ours: float, base: float) -> str:
    return f"{ours:.2f} ({ours / base:.2f}x)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--only", choices=SHAPES, action="append", help="only these rows (repeatable)")
    ap.add_argument("--find", choices=SHAPES, action="append",
                    help="rows that also time the full walk (default: snap-8mib-v2)")
    ap.add_argument("--commands", choices=SHAPES, action="append",
                    help="rows of the whole-tree commands table (default: snap-8mib-v2)")
    ap.add_argument("--log", choices=SHAPES, action="append", dest="log_shapes",
                    help="rows of the log table (default: log-mixed)")
    ap.add_argument("--skip-shapes", action="store_true",
                    help="only the commands and log tables")
    ap.add_argument("--skip-commands", action="store_true",
                    help="no whole-tree commands table")
    ap.add_argument("--rounds", type=int, default=3, help="fresh processes per measurement")
    ap.add_argument("--profile", choices=sorted(MEASURES),
                    help="cProfile one measurement of the first --only row, here")
    ap.add_argument("--child", nargs=3, metavar=("WHAT", "PATH", "INFO"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        child(args.child[0], Path(args.child[1]), json.loads(args.child[2]))
        return 0
    shapes = [] if args.skip_shapes else (args.only or SHAPES)
    finds = args.find or ["snap-8mib-v2"]
    commands = [] if args.skip_commands else (args.commands or ["snap-8mib-v2"])
    logs = args.log_shapes or ["log-mixed"]
    paths = {s: shape_path(s, args.partitions) for s in (*shapes, *commands, *logs)}

    if args.profile:
        import cProfile
        import pstats
        path, info = paths[shapes[0]]
        prof = cProfile.Profile()
        print(prof.runcall(MEASURES[args.profile], path, info))
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0

    scale = args.partitions / 1_000_000
    rows, per_record, ok = [], {}, True
    for shape in shapes:
        path, info = paths[shape]

        def run(what):
            return best_of_fresh(__file__, ["--child", what, str(path), json.dumps(info)],
                                 args.rounds)

        walk, ls = run("walk"), run("ls")
        until = run("until") if "until" in info else None
        find = run("find") if shape in finds else None
        base = walk["seconds"]
        rss = max(r["peak_rss"] for r in (ls, until, find) if r is not None)
        rss_target = (RSS_LOGDIR if shape.startswith("logdir") else RSS_SNAPSHOT) * max(scale, 0.25)
        met = (ls["seconds"] <= LS_RATIO * base and ls["summary"] <= SUMMARY_RATIO * base
               and ls["cat"] <= CAT_SECONDS and rss <= rss_target
               and (until is None or until["seconds"] <= UNTIL_RATIO * base)
               and (find is None or find["seconds"] <= FIND_SECONDS * scale))
        ok &= met
        per_record[shape] = ls["seconds"] / walk["records"] * 1e6
        rows.append([shape, f"{walk['records']:,}", human_bytes(_size(path)),
                     f"{base:.2f}", _ratio(ls["seconds"], base), f"{per_record[shape]:.2f}",
                     _ratio(ls["summary"], base), f"{ls['cat'] * 1000:.1f}",
                     _ratio(until["seconds"], base) if until else "-",
                     f"{find['seconds']:.1f}" if find else "-",
                     human_bytes(rss), f"{ls['slowest']:.2f}", "yes" if met else "NO"])
        print(f"{shape}: done", file=sys.stderr, flush=True)
    if rows:
        ok &= _shape_table(rows, per_record, args, scale)
    if commands:
        ok &= _command_table(commands, paths, args, scale)
    ok &= _log_table(logs, paths, args)
    return 0 if ok else 1


def _shape_table(rows: list, per_record: dict, args, scale: float) -> bool:
    print()
    print_table(["shape", "records", "size", "walk s", "ls s (x walk)", "us/rec",
                 "summary s (x walk)", "cat ms", "until s (x walk)", "find s", "peak RSS",
                 "ls slowest", "met"], rows)
    spread = max(per_record.values()) / min(per_record.values())
    print(f"\nls time per record: {min(per_record.values()):.2f}-{max(per_record.values()):.2f} us, "
          f"spread {spread:.2f}x (target <= {SPREAD}x)")
    print(f"targets: ls <= {LS_RATIO}x walk, summary <= {SUMMARY_RATIO}x, until <= {UNTIL_RATIO}x, "
          f"cat <= {CAT_SECONDS * 1000:g} ms, find <= {FIND_SECONDS * scale:g} s, peak RSS <= "
          f"{human_bytes(RSS_SNAPSHOT * max(scale, 0.25))} (snapshot) / "
          f"{human_bytes(RSS_LOGDIR * max(scale, 0.25))} (logdir); best of {args.rounds} fresh "
          f"processes, 'walk' = kafka-python MemoryRecords, CRC checked, nothing decoded")
    return spread <= SPREAD


def _command_table(shapes: list, paths: dict, args, scale: float) -> bool:
    """The whole-tree commands against the walk of the same file."""
    rows, ok = [], True
    for shape in shapes:
        path, info = paths[shape]

        def run(what):
            return best_of_fresh(__file__, ["--child", what, str(path), json.dumps(info)],
                                 args.rounds)

        base = run("walk")["seconds"]
        got = {name: run(f"cmd-{name}") for name in ("tree", "cat", "find", "partitions")}
        rss = max(r["peak_rss"] for r in got.values())
        met = (all(r["seconds"] <= COMMAND_RATIO * base and r["status"] == 0 for r in got.values())
               and rss <= RSS_COMMANDS * max(scale, 0.25))
        ok &= met
        rows.append([shape, f"{base:.2f}", *(_ratio(r["seconds"], base) for r in got.values()),
                     human_bytes(rss), "yes" if met else "NO"])
        print(f"{shape} commands: done", file=sys.stderr, flush=True)
    print()
    print_table(["shape", "walk s", "-o json tree /topics", "cat /topics/*/*/data", "find /",
                 "partitions --under-replicated", "peak RSS", "met"], rows)
    print(f"whole-tree commands: one-shot runs, load included, output to /dev/null; target <= "
          f"{COMMAND_RATIO}x walk, peak RSS <= {human_bytes(RSS_COMMANDS * max(scale, 0.25))}")
    return ok


def _log_table(shapes: list, paths: dict, args) -> bool:
    """``log`` of a segment: records per second of the one-shot run (the
    source opened as the shell opens it for ``log``: planned, not replayed)."""
    rows, ok = [], True
    for shape in shapes:
        path, info = paths[shape]
        base = best_of_fresh(__file__, ["--child", "walk", str(path), json.dumps(info)], args.rounds)
        n = base["records"]
        got = {name: best_of_fresh(__file__, ["--child", f"cmd-{name}", str(path), json.dumps(info)],
                                   args.rounds) for name in ("log", "log-json")}
        rates = {name: n / r["seconds"] for name, r in got.items()}
        met = all(rate >= LOG_RATE for rate in rates.values())
        ok &= met
        rows.append([shape, f"{n:,}", f"{n / base['seconds']:,.0f}",
                     *(f"{rates[k]:,.0f} ({got[k]['seconds']:.2f} s)" for k in ("log", "log-json")),
                     human_bytes(max(r["peak_rss"] for r in got.values())), "yes" if met else "NO"])
    print()
    print_table(["shape", "records", "walk rec/s", "log rec/s", "-o json log rec/s", "peak RSS",
                 "met"], rows)
    print(f"log: one-shot runs (the files planned, not replayed, as the shell runs log), output to "
          f"/dev/null; 'walk' = kafka-python's bare walk of the same file; target >= {LOG_RATE:,} "
          f"records/s")
    return ok


if __name__ == "__main__":
    sys.exit(main())
