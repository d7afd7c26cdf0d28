"""Helpers shared by the benchmarks: peak memory, timing, fresh-process runs
and a generator of large, realistic metadata files.

Every fixture is written with the project's own writer
(:mod:`metashell.loader.writer`); nothing here copies real Kafka files.
Generated files are cached under ``bench/out/`` (git-ignored) and reused
when their name (which encodes every parameter) already exists.

Usage from another bench::

    from _util import big_snapshot, peak_rss_bytes, run_fresh

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

from metashell.loader.primitives import uuid_to_str
from metashell.loader.writer import LogWriter, control, record

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"

# bump when the generated content changes, so stale cached files are not reused
GENERATOR_VERSION = 1


# --------------------------------------------------------------------------- measuring

def peak_rss_bytes() -> int:
    """High-water mark of this process's resident set size, in bytes.

    Linux reports ``ru_maxrss`` in KiB (macOS in bytes). Pages of a mapped
    file that were touched count too, as they should: they are memory the
    process used.
    """
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


def run_fresh(script, args: list[str], *, timeout: float = 1800) -> dict:
    """Run ``python script *args`` in a new interpreter and return the JSON
    object it prints as its last stdout line. A fresh process per
    measurement keeps peak-memory figures separate."""
    proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=timeout)
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


# --------------------------------------------------------------------------- fixtures

def _uuid(rng: random.Random) -> str:
    return uuid_to_str(rng.randbytes(16))


def cluster_records(topics: int, partitions: int, *, brokers: int = 6, controllers: int = 3,
                    replication: int = 3, seed: int = 42):
    """The metadata records of a realistic 4.x cluster image, in the order
    ``MetadataImage.write`` uses: features, controllers and brokers, topics
    each followed by its partitions (PartitionRecord v2, ``replication``
    replicas with one log directory each, full ISR, leader = first replica),
    configs, producer ids. Yields writer ``Out`` objects lazily."""
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
    for t in range(topics):
        tid = _uuid(rng)
        name = f"tenant-{t % 97:02d}.events.topic-{t:07d}"
        yield record("TopicRecord", name=name, topicId=tid)
        for p in range(partitions):
            first = (t + p) % brokers
            replicas = [((first + k) % brokers) + 1 for k in range(replication)]
            yield record("PartitionRecord", 2, partitionId=p, topicId=tid, replicas=replicas,
                         isr=list(replicas), removingReplicas=[], addingReplicas=[],
                         leader=replicas[0], leaderEpoch=rng.randrange(0, 20),
                         partitionEpoch=rng.randrange(0, 40),
                         directories=[log_dirs[r] for r in replicas])
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


def write_snapshot(path, records, *, epoch: int = 7, timestamp: int = 1_700_000_000_000,
                   per_batch: int = 1000) -> int:
    """Stream a snapshot (header batch, data batches of ``per_batch``
    records, footer batch) to ``path`` without holding it all in memory.
    Returns the number of records written (header and footer included)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    w = LogWriter(0, epoch, timestamp)
    with open(tmp, "wb") as f:
        def flush():
            f.write(b"".join(w.parts))
            w.parts.clear()

        w.batch([control("SnapshotHeaderRecord", lastContainedLogTimestamp=timestamp)], control=True)
        chunk = []
        for r in records:
            chunk.append(r)
            if len(chunk) == per_batch:
                w.batch(chunk)
                chunk = []
                if len(w.parts) >= 64:
                    flush()
        if chunk:
            w.batch(chunk)
        w.batch([control("SnapshotFooterRecord")], control=True)
        flush()
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
        if verbose:
            print(f"generating {path.name} ({topics} topics x {partitions} partitions) ...",
                  file=sys.stderr, flush=True)
        with Timer() as t:
            n = write_snapshot(path, cluster_records(topics, partitions))
        if verbose:
            print(f"  {n} records, {human_bytes(path.stat().st_size)} in {t.seconds:.1f} s",
                  file=sys.stderr, flush=True)
    return path


# --------------------------------------------------------------------------- metadata log dirs

#: Kafka's snapshot writer fills batches up to 8 MiB (KafkaRaftClient's max batch size)
SNAPSHOT_BATCH_BYTES = 8 << 20


def per_batch_for(records: list, batch_bytes: int = SNAPSHOT_BATCH_BYTES) -> int:
    """How many records like ``records`` (a sample) fill a batch of ``batch_bytes``."""
    from metashell.loader.writer import encode_records

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
    sample, seen = [], []
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
