"""Helpers shared by the benchmarks: peak memory, timing, fresh-process runs
and a generator of large, realistic metadata files.

Every fixture is written with the project's own writer
(:mod:`metashell.kraft.writer`); nothing here copies real Kafka files.
Generated files are cached under ``bench/out/`` (git-ignored) and reused
when their name (which encodes every parameter) already exists.

Usage from another bench (run as ``python -m bench.<name>`` from the
checkout's root)::

    from bench._util import big_snapshot, peak_rss_bytes, run_fresh

    path = big_snapshot(topics=1000, partitions=10)
    result = run_fresh(__file__, ["--child", "index", str(path)])
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

from metashell.kraft.batch import HEADER_SIZE
from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.writer import LogWriter, control, record, segment_name, snapshot_name

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"

# bump when the generated content changes, so stale cached files are not reused
GENERATOR_VERSION = 1


# --------------------------------------------------------------------------- measuring

def peak_rss_bytes() -> int:
    """High-water mark of this process's resident set size, in bytes.

    Linux: ``VmHWM`` of ``/proc/self/status``, this process's own mark
    (``ru_maxrss`` carries a parent's over ``exec``: every child of a bench
    that had grown while generating its files reported the parent's peak).
    Elsewhere ``ru_maxrss`` (macOS: in bytes). Pages of a mapped file that
    were touched count too, as they should: they are memory the process used.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024   # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds`` (wall clock, perf_counter)."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        return False


def again(script) -> list[str]:
    """The command that starts the bench ``script`` (its ``__file__``) the
    way this process was started: as a module of the bench package
    (``python -m bench.load``, from the checkout's root) or as a script."""
    if getattr(sys.modules["__main__"], "__spec__", None) is not None:
        return [sys.executable, "-m", f"bench.{Path(script).stem}"]
    return [sys.executable, str(script)]


def run_fresh(script, args: list[str], *, timeout: float = 1800) -> dict:
    """Run the bench ``script *args`` in a new interpreter (:func:`again`)
    and return the JSON object it prints as its last stdout line. A fresh
    process per measurement keeps peak-memory figures separate."""
    proc = subprocess.run([*again(script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=BENCH_DIR.parent)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return json.loads(lines[-1])


def best_of_fresh(script, args: list[str], rounds: int) -> dict:
    """:func:`run_fresh` ``rounds`` times: the result of the fastest round,
    with ``slowest`` (its seconds) beside it and ``peak_rss`` the highest of
    all rounds. This machine is shared and its speed varies for seconds at a
    time, so rounds in separate processes, spread over time, find its quiet
    moments better than repeats inside one process; memory is never averaged
    away."""
    results = [run_fresh(script, args) for _ in range(max(1, rounds))]
    best = dict(min(results, key=lambda r: r["seconds"]))
    best["slowest"] = max(r["seconds"] for r in results)
    best["peak_rss"] = max(r["peak_rss"] for r in results)
    return best


def report_child(result: dict) -> None:
    """Print a child's result as one JSON line (read back by :func:`run_fresh`)."""
    print(json.dumps(result), flush=True)


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def print_table(headers: list[str], rows: list[list], out=None) -> None:
    """A plain aligned text table (first column left-aligned, others right)."""
    out = out or sys.stdout
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    print(line(cells[0]), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in cells[1:]:
        print(line(row), file=out)


def cat_one(session) -> tuple[float, str, dict]:
    """``cat`` of one partition's data (the middle partition of the middle
    topic), timed: ``(seconds, path, value)``."""
    topics = session.root.child("topics")
    names = topics.children()
    name = names[len(names) // 2]
    with Timer() as t:
        tdir = topics.child(name)
        pids = [p for p in tdir.children() if p.isdigit()]
        value = tdir.child(pids[len(pids) // 2]).child("data").value()
    return t.seconds, f"/topics/{name}/{pids[len(pids) // 2]}/data", value


# --------------------------------------------------------------------------- fixtures

def _uuid(rng: random.Random) -> str:
    return uuid_to_str(rng.randbytes(16))


def cluster_records(topics: int, partitions: int, *, brokers: int = 6, controllers: int = 3,
                    replication: int = 3, seed: int = 42, partition_version: int = 2,
                    shrunk_every: int = 0, mixed: bool = False, overrides: int = 0, acls: int = 0):
    """The metadata records of a realistic 4.x cluster image, in the order
    ``MetadataImage.write`` uses: features, controllers and brokers, topics
    each followed by its partitions (PartitionRecord v``partition_version``,
    ``replication`` replicas (with one log directory each from v1), full
    ISR, leader = first replica), configs, producer ids. Yields writer
    ``Out`` objects lazily.
    ``shrunk_every``: every so many partitions has lost its last replica from
    the ISR (the same cluster a little later, for ``diff``).
    ``mixed``: topics as a real cluster has them instead (:func:`mixed_topics`),
    ``topics`` x ``partitions`` partitions in all.
    ``overrides``: so many config overrides on every topic (of
    :data:`TOPIC_OVERRIDES`), not one on a tenth of them. ``acls``: so many
    ACLs on every topic (a service principal allowed to read, to write),
    after the producer ids, as ``MetadataImage.write`` orders them."""
    rng = random.Random(seed)
    replication = min(replication, brokers)
    for name, level in (("metadata.version", 29), ("eligible.leader.replicas.version", 1),
                        ("group.version", 1), ("share.version", 0), ("streams.version", 0),
                        ("transaction.version", 2)):
        yield record("FeatureLevelRecord", name=name, featureLevel=level)
    for c in range(controllers):
        cid = 3000 + c
        yield record("RegisterControllerRecord", controllerId=cid, incarnationId=_uuid(rng),
                     zkMigrationReady=False,
                     endPoints=[{"name": "CONTROLLER", "host": f"controller-{c}.kafka.svc",
                                 "port": 9093, "securityProtocol": 0}],
                     features=[{"name": "kraft.version", "minSupportedVersion": 0,
                                "maxSupportedVersion": 1},
                               {"name": "metadata.version", "minSupportedVersion": 7,
                                "maxSupportedVersion": 29}])
    log_dirs = {}
    for b in range(1, brokers + 1):
        log_dirs[b] = _uuid(rng)
        yield record("RegisterBrokerRecord", brokerId=b, isMigratingZkBroker=False,
                     incarnationId=_uuid(rng), brokerEpoch=1000 + b,
                     endPoints=[{"name": "PLAINTEXT", "host": f"broker-{b}.kafka.svc", "port": 9092,
                                 "securityProtocol": 0},
                                {"name": "SSL", "host": f"broker-{b}.kafka.svc", "port": 9094,
                                 "securityProtocol": 1}],
                     features=[{"name": "metadata.version", "minSupportedVersion": 7,
                                "maxSupportedVersion": 29},
                               {"name": "group.version", "minSupportedVersion": 0,
                                "maxSupportedVersion": 1}],
                     rack=f"rack-{b % 3}", fenced=False, inControlledShutdown=False,
                     logDirs=[log_dirs[b]])
    configs = []
    plan = (mixed_topics(topics * partitions, brokers, rng) if mixed else
            ((topic_name(t), [[((t + p + k) % brokers) + 1 for k in range(replication)]
                              for p in range(partitions)]) for t in range(topics)))
    n = 0   # partitions so far
    for t, (name, assignment) in enumerate(plan):
        tid = _uuid(rng)
        yield record("TopicRecord", name=name, topicId=tid)
        for p, replicas in enumerate(assignment):
            dirs = {"directories": [log_dirs[r] for r in replicas]} if partition_version else {}
            shrunk = shrunk_every and n % shrunk_every == 0
            n += 1
            isr, leader = (replicas[:-1] if shrunk else list(replicas)), replicas[0]
            if mixed and rng.random() < 0.02:    # lagging followers: only the leader in sync
                isr = replicas[:1]
            if mixed and rng.random() < 0.001:   # offline: the last replica in sync is down
                isr, leader = replicas[-1:], -1
            yield record("PartitionRecord", partition_version, partitionId=p, topicId=tid,
                         replicas=replicas, isr=isr, removingReplicas=[], addingReplicas=[],
                         leader=leader, leaderEpoch=rng.randrange(0, 20),
                         partitionEpoch=rng.randrange(0, 40) + (1 if shrunk else 0), **dirs)
        if overrides:
            configs += [(name, key, rng.choice(values)) for key, values in TOPIC_OVERRIDES[:overrides]]
        else:
            if t % 10 == 0:
                configs.append((name, "retention.ms", str(rng.choice((3600000, 86400000, 604800000)))))
            if t % 25 == 0:
                configs.append((name, "cleanup.policy", "compact"))
    for b in range(1, brokers + 1):
        yield record("ConfigRecord", resourceType=4, resourceName=str(b), name="log.retention.hours",
                     value="168")
    yield record("ConfigRecord", resourceType=4, resourceName="", name="min.insync.replicas",
                 value="2")
    for name, key, value in configs:
        yield record("ConfigRecord", resourceType=2, resourceName=name, name=key, value=value)
    yield record("ProducerIdsRecord", brokerId=1, brokerEpoch=1001, nextProducerId=123000)
    for t in range(topics if acls else 0):
        name = topic_name(t)
        for op in (3, 4)[:acls]:   # READ, WRITE
            yield record("AccessControlEntryRecord", id=_uuid(rng), resourceType=2, resourceName=name,
                         patternType=3, principal=f"User:svc-{t % 500}", host="*", operation=op,
                         permissionType=3)


# config overrides a topic made by a provisioning tool carries, with values to pick from
TOPIC_OVERRIDES = (("retention.ms", ("3600000", "86400000", "604800000", "-1")),
                   ("cleanup.policy", ("delete", "compact", "compact,delete")),
                   ("min.insync.replicas", ("1", "2")),
                   ("segment.bytes", ("104857600", "1073741824")))

# a real cluster's topics: many of one or a few partitions, some of dozens or more
MIXED_PARTITIONS = (1, 1, 1, 2, 3, 3, 6, 8, 12, 12, 16, 24, 32, 50, 100)
MIXED_REPLICATION = (1, 2, 3, 3, 3, 3)
MIXED_NAMES = ("orders", "payments.v2", "clickstream-raw-events", "audit", "_connect-offsets",
               "tenant-17.billing.invoices")


def mixed_topics(partitions: int, brokers: int, rng: random.Random):
    """``(name, replicas per partition)`` of topics as a real cluster has
    them, ``partitions`` in all: partition counts from 1 to 100, replication
    1 to 3 (each partition's replicas drawn anew), names of many lengths."""
    n = t = 0
    while n < partitions:
        count = min(rng.choice(MIXED_PARTITIONS), partitions - n)
        rf = min(rng.choice(MIXED_REPLICATION), brokers)
        name = f"{rng.choice(MIXED_NAMES)}-{t}" + "x" * rng.randrange(0, 30)
        yield name, [rng.sample(range(1, brokers + 1), rf) for _ in range(count)]
        n += count
        t += 1


def topic_name(t: int) -> str:
    """The name :func:`cluster_records` gives its topic number ``t``."""
    return f"tenant-{t % 97:02d}.events.topic-{t:07d}"


#: Kafka's snapshot writer fills batches up to this many bytes
KAFKA_SNAPSHOT_BATCH_BYTES = 8 << 20


# what a record adds to a batch besides its value, at most: length, attributes,
# timestamp delta, offset delta (3 bytes up to a million), null key, value
# length, header count
RECORD_FRAMING = 10


def batched(records, *, per_batch: int | None = 1000, max_bytes: int | None = None):
    """``records`` cut into lists of ``per_batch``, or (``max_bytes``) filled
    as Kafka's batch accumulator fills them: a record goes to the next batch
    when it would take the batch past ``max_bytes`` (8 MiB for a
    controller's snapshot writer). Values are encoded here, once."""
    chunk, size = [], HEADER_SIZE
    for r in records:
        if max_bytes is not None:
            r.value = r.encoded_value()
            grow = len(r.value) + RECORD_FRAMING
            if chunk and size + grow > max_bytes:
                yield chunk
                chunk, size = [], HEADER_SIZE
            size += grow
        chunk.append(r)
        if per_batch is not None and len(chunk) == per_batch:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def write_snapshot(path, records, *, epoch: int = 7, timestamp: int = 1_700_000_000_000,
                   per_batch: int | None = 1000, max_bytes: int | None = None) -> int:
    """Stream a snapshot (header batch, data batches cut by :func:`batched`,
    footer batch) to ``path`` without holding it all in memory. Returns the
    number of records written (header and footer included)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    w = LogWriter(0, epoch, timestamp)
    with open(tmp, "wb") as f:
        w.batch([control("SnapshotHeaderRecord", lastContainedLogTimestamp=timestamp)], control=True)
        for chunk in batched(records, per_batch=per_batch, max_bytes=max_bytes):
            w.batch(chunk)
            f.write(b"".join(w.parts))
            w.parts.clear()
        w.batch([control("SnapshotFooterRecord")], control=True)
        f.write(b"".join(w.parts))
    os.replace(tmp, path)
    return w.next_offset


def big_snapshot(topics: int = 100_000, partitions: int = 10, *, out_dir=None,
                 verbose: bool = True) -> Path:
    """Path of a cached snapshot of ``topics`` x ``partitions`` (see
    :func:`cluster_records`), generated on first use."""
    out_dir = Path(out_dir) if out_dir is not None else OUT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"snapshot-g{GENERATOR_VERSION}-{topics}t-{partitions}p.checkpoint"
    if not path.exists():
        _generating(path, verbose, lambda: write_snapshot(path, cluster_records(topics, partitions)))
    return path


def kafka_snapshot(topics: int, partitions: int, *, shrunk_every: int = 0, out_dir=None,
                   verbose: bool = True) -> Path:
    """Path of a cached snapshot of ``topics`` x ``partitions`` in Kafka's
    8 MiB batches (see :func:`cluster_records`, ``shrunk_every`` included)."""
    out_dir = Path(out_dir) if out_dir is not None else OUT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / (f"snapshot-g{GENERATOR_VERSION}-{topics}t-{partitions}p-8mib"
                      f"{f'-shrunk{shrunk_every}' if shrunk_every else ''}.checkpoint")
    if not path.exists():
        _generating(path, verbose, lambda: write_snapshot(
            path, cluster_records(topics, partitions, shrunk_every=shrunk_every),
            per_batch=None, max_bytes=KAFKA_SNAPSHOT_BATCH_BYTES))
    return path


def changing_log_dir(topics: int, partitions: int, changes: int, *, out_dir=None,
                     verbose: bool = True) -> tuple[Path, int]:
    """A cached metadata log dir: the :func:`kafka_snapshot` of ``topics`` x
    ``partitions`` at end offset ``SNAPSHOT_END``, then a segment of small
    batches as a controller writes them: a leader change, then ``changes``
    rounds of a NoOp batch and a one-record batch shrinking one partition's
    ISR (spread over the topics), and as many rounds again that expand it
    back. Returns the dir and the offset after the first ``changes`` rounds:
    between it and the end, ``changes`` partitions changed."""
    out_dir = Path(out_dir) if out_dir is not None else OUT_DIR
    root = out_dir / f"logdir-g{GENERATOR_VERSION}-{topics}t-{partitions}p-{changes}c"
    part = root / "__cluster_metadata-0"
    marker = root / "middle-offset"
    if not marker.exists():
        part.mkdir(parents=True, exist_ok=True)
        snap = kafka_snapshot(topics, partitions, out_dir=out_dir, verbose=verbose)
        target = part / snapshot_name(SNAPSHOT_END, 7)
        if not target.exists():
            os.link(snap, target)
        ids = _topic_ids(topics, partitions)
        w = LogWriter(SNAPSHOT_END, 8, 1_700_000_100_000)
        w.leader_change(3000, [3000, 3001, 3002])
        step = max(1, topics * partitions // changes)
        middle = None
        for rnd in range(2 * changes):
            if rnd == changes:
                middle = w.next_offset - 1
            n = (rnd % changes) * step
            t, p = divmod(n, partitions)
            first = (t + p) % 6
            replicas = [((first + k) % 6) + 1 for k in range(3)]
            isr = replicas if rnd >= changes else replicas[:-1]
            w.batch([record("NoOpRecord")], timestamp=1_700_000_100_000 + rnd * 500)
            w.batch([record("PartitionChangeRecord", partitionId=p, topicId=ids[t], isr=isr,
                            leader=-2)], timestamp=1_700_000_100_000 + rnd * 500 + 1)
        w.write(part / segment_name(SNAPSHOT_END))
        marker.write_text(str(middle))
    return root, int(marker.read_text())


#: where :func:`changing_log_dir`'s snapshot ends (its segment starts there)
SNAPSHOT_END = 5_000_000


def _topic_ids(topics: int, partitions: int) -> list[str]:
    """The topic ids :func:`cluster_records` draws (same seed, same order)."""
    ids = []
    for r in cluster_records(topics, partitions):
        if r.spec.name == "TopicRecord":
            ids.append(r.data["topicId"])
    return ids


def _generating(path: Path, verbose: bool, write) -> None:
    if verbose:
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
    with Timer() as t:
        n = write()
    if verbose:
        print(f"  {n} records, {human_bytes(path.stat().st_size)} in {t.seconds:.1f} s",
              file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- metadata log dirs

def per_batch_for(records: list, batch_bytes: int = KAFKA_SNAPSHOT_BATCH_BYTES) -> int:
    """How many records like ``records`` (a sample) fill a batch of ``batch_bytes``."""
    from metashell.kraft.writer import encode_records

    payload, count = encode_records(records)
    return max(1, batch_bytes * count // max(1, len(payload)))


def metadata_logdir(path, topics: int, partitions: int, *, log_batches: int, seed: int = 1,
                    cluster_id: str | None = None, verbose: bool = True) -> Path:
    """A metadata log dir as a running Kafka node leaves it (cached: made
    only when ``path`` is missing): ``meta.properties``, a snapshot of
    ``topics`` x ``partitions`` (:func:`cluster_records`) in 8 MiB batches,
    and the log after it as Kafka writes it, ``log_batches`` small batches
    appended every 500 ms: mostly a lone NoOpRecord, every 20th a leader
    move or an ISR change of 1-3 partitions, every 200th a broker fencing."""
    path = Path(path)
    if path.exists():
        return path
    rng = random.Random(seed)
    tmp = path.with_name(path.name + ".tmp")
    part_dir = tmp / "__cluster_metadata-0"
    part_dir.mkdir(parents=True)
    cid = cluster_id or uuid_to_str(rng.randbytes(16))
    (tmp / "meta.properties").write_text(
        f"version=1\nnode.id=3000\ncluster.id={cid}\ndirectory.id={uuid_to_str(rng.randbytes(16))}\n")
    sample = []
    records = list(islice(cluster_records(topics, partitions, seed=seed), 2000))
    per_batch = per_batch_for(records[-1000:])

    def tap():
        for r in cluster_records(topics, partitions, seed=seed):
            if r.data.get("replicas") and len(sample) < 5000 and rng.random() < 0.05:
                sample.append((r.data["topicId"], r.data["partitionId"], r.data["replicas"]))
            yield r

    start = 1_700_000_000_000
    snap_tmp = part_dir / "snapshot.tmp"
    end = write_snapshot(snap_tmp, tap(), epoch=5, timestamp=start, per_batch=per_batch)
    os.replace(snap_tmp, part_dir / f"{end:020d}-{5:010d}.checkpoint")
    w = LogWriter(end, 5, start)
    for i in range(log_batches):
        ts = start + 500 * (i + 1)
        if i % 200 == 199:
            b = rng.randrange(1, 7)
            recs = [record("BrokerRegistrationChangeRecord", brokerId=b, brokerEpoch=1000 + b,
                           fenced=int(rng.random() < 0.2), inControlledShutdown=0)]
        elif i % 20 == 19 and sample:
            recs = []
            for tid, pid, replicas in rng.sample(sample, min(len(sample), rng.randrange(1, 4))):
                if rng.random() < 0.5:
                    recs.append(record("PartitionChangeRecord", partitionId=pid, topicId=tid,
                                       leader=rng.choice(replicas)))
                else:
                    recs.append(record("PartitionChangeRecord", partitionId=pid, topicId=tid,
                                       isr=replicas[:rng.randrange(1, len(replicas) + 1)]))
        else:
            recs = [record("NoOpRecord")]
        w.batch(recs, timestamp=ts)
    (part_dir / f"{end:020d}.log").write_bytes(w.getvalue())
    (part_dir / "quorum-state").write_text(
        '{"leaderId":3000,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":[{"voterId":3000},{"voterId":3001},{"voterId":3002}],'
        '"data_version":0}')
    os.replace(tmp, path)
    if verbose:
        print(f"  generated {path.name}: {topics * partitions} partitions, snapshot end {end}, "
              f"{log_batches} log batches", file=sys.stderr, flush=True)
    return path
