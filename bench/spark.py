"""The Spark ``partitions`` table against the shell's one-shot loop.

A fleet of ``--clusters`` generated clusters of ``--partitions`` partitions
each (default 8 x 1,000,000), each a metadata log dir as Kafka leaves it
(``--shape``, one of ``bench/shapes.py``'s, default ``logdir``: a snapshot
in 8 MiB batches and a log of partition changes and heartbeats after it;
generated once by ``shapes.shape_path`` and cached in ``bench/out``; the
fleet's clusters are hard links to that one cluster's files, so both sides
read the same bytes from the page cache), then the shared corpus fleet
(``../shared/corpora``, every cluster in it). For each fleet, in one run:

(0) ``spin``    how many cores' worth of work two CPU-bound processes get done
                right now (the machine is shared: other work takes its share);
(1) ``loop``    ``kafka-metadata-shell -s CLUSTER cat '/topics/*/*/data'``,
                cluster after cluster, one process at a time (one core), its
                output read and dropped: wall and CPU seconds;
(2) ``spark``   one SparkSession on ``--master`` (default ``local[2]``):
                the ``partitions`` table of the whole fleet counted (every
                row made and handed to the JVM as Arrow), wall seconds, after
                the session has started (its start-up is printed apart), and
                the CPU seconds of the JVM and its workers;
                then the peak RSS (VmHWM) of each Python worker process,
                read from /proc (workers are reused: the corpus fleet is
                read first, so that the generated fleet's peak is its own).

The target (issue #32): spark <= 0.6 x the loop on 2 cores, worker peak RSS
<= 1 GiB. Both sides run in the same invocation, one after the other, so
that the ratio holds when the machine is busy.

    python -m bench.spark                                   # 8 x 1,000,000
    python -m bench.spark --clusters 4 --partitions 250000  # quicker
    python -m bench.spark --shape snap-8mib-v2 --no-corpus
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench import shapes
from bench._util import OUT_DIR, again, human_bytes, print_table, report_child, run_fresh

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
TARGET_RATIO, TARGET_RSS = 0.6, 1 << 30


def make_fleet(shape: str, partitions: int, clusters: int) -> Path:
    """A folder of ``clusters`` clusters, each the one cluster of ``shape``
    generated (once) at ``partitions`` partitions, its files hard-linked (a
    folder per cluster: the source takes links to one folder for one cluster)."""
    path, _ = shapes.shape_path(shape, partitions)
    fleet = OUT_DIR / f"spark-fleet-{path.name}-x{clusters}"
    files = [f for f in path.rglob("*") if f.is_file()] if path.is_dir() else [path]
    for i in range(clusters):
        cluster = fleet / f"cluster-{i:02d}"
        for f in files:
            # a generated file alone is a cluster folder holding it under its Kafka name
            link = cluster / (f.relative_to(path) if path.is_dir() else kafka_name(f))
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                os.link(f, link)
    return fleet


def kafka_name(path: Path) -> str:
    """The name a generated file takes in a cluster folder: a snapshot's or a
    segment's as Kafka names them (the cached file's name says the shape)."""
    return ("00000000000000002000-0000000007.checkpoint" if path.suffix == ".checkpoint"
            else "00000000000000000000.log")


def fleet_clusters(fleet: Path) -> list[str]:
    """The clusters Spark reads in ``fleet`` (the source's own discovery)."""
    from metashell.spark import discover
    return discover.clusters(str(fleet))


# --------------------------------------------------------------------------- children

def child_spin() -> dict:
    start = time.perf_counter()
    x = 0
    for i in range(20_000_000):
        x += i
    return {"seconds": time.perf_counter() - start}


def parallel_capacity() -> float:
    """How many cores' worth of work two processes get done right now: 2.0 on
    two free cores, 1.0 when the machine can give only one (other work)."""
    alone = run_fresh(__file__, ["--child", "spin"])["seconds"]
    procs = [subprocess.Popen([*again(__file__), "--child", "spin"], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT) for _ in range(2)]
    together = max(json.loads(p.communicate()[0].splitlines()[-1])["seconds"] for p in procs)
    return 2 * alone / together


def shell_loop(clusters: list[str]) -> dict:
    """The shell's one-shot ``cat`` of every partition, cluster after cluster:
    wall seconds, CPU seconds (user + system), output bytes, failures."""
    argv = [sys.executable, "-m", "metashell.cli", "-s", "", "cat", "/topics/*/*/data"]
    wall = cpu = 0.0
    out_bytes = failed = 0
    for cluster in clusters:
        argv[4] = cluster
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        while chunk := proc.stdout.read(1 << 20):
            out_bytes += len(chunk)
        _, status, usage = os.wait4(proc.pid, 0)
        wall += time.perf_counter() - start
        cpu += usage.ru_utime + usage.ru_stime
        failed += status != 0
    return {"seconds": wall, "cpu": cpu, "bytes": out_bytes, "failed": failed}


def child_spark(master: str, fleets: list[str]) -> dict:
    """The ``partitions`` table of each fleet on one SparkSession."""
    from metashell.spark import register
    from metashell.spark.local import start_spark

    start = time.perf_counter()
    spark = start_spark(master, app_name="bench-spark")
    register(spark)
    out = {"startup": time.perf_counter() - start, "fleets": []}
    jvm = spark.sparkContext._gateway.proc.pid
    for fleet in fleets:
        start, cpu = time.perf_counter(), tree_cpu(jvm)
        rows = spark.read.format("kraft-metadata").option("table", "partitions") \
            .load(fleet).count()
        seconds = time.perf_counter() - start
        out["fleets"].append({"seconds": seconds, "cpu": tree_cpu(jvm) - cpu, "rows": rows,
                              "worker_peaks": _worker_peaks(jvm)})
    spark.stop()
    return out


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) of process ``root`` and every process
    below it, those that ended included (their parent's waited-for
    children's times): the JVM and its Python workers."""
    parents, ticks = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(pid)] = int(fields[1])
        ticks[int(pid)] = sum(int(v) for v in fields[11:15])   # utime stime cutime cstime

    def below(pid: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parents.get(pid, 0)
        return False

    return sum(t for pid, t in ticks.items() if below(pid)) / os.sysconf("SC_CLK_TCK")


def _worker_peaks(jvm_pid: int) -> list[int]:
    """VmHWM (peak RSS) of every live Python worker process under our JVM
    (other Spark applications may run on this machine)."""
    parents, status = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
            parents[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
            if "pyspark.daemon" in cmd or "pyspark.worker" in cmd:
                status[int(pid)] = open(f"/proc/{pid}/status").read()
        except OSError:
            continue

    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == jvm_pid:
                return True
            pid = parents.get(pid, 0)
        return False

    return [int(line.split()[1]) * 1024 for pid, text in status.items() if ours(pid)
            for line in text.splitlines() if line.startswith("VmHWM:")]


# --------------------------------------------------------------------------- main

def verdict(ratio: float, rss: int) -> str:
    time_ok = "meets" if ratio <= TARGET_RATIO else "misses"
    rss_ok = "meets" if rss <= TARGET_RSS else "misses"
    return f"time {time_ok} <= {TARGET_RATIO} x, RSS {rss_ok} <= {human_bytes(TARGET_RSS)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", type=int, default=8)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--shape", default="logdir", choices=shapes.SHAPES)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--no-corpus", action="store_true", help="leave out the corpus fleet")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.child[0] == "spin":
            report_child(child_spin())
        else:
            report_child(child_spark(args.child[1], args.child[2:]))
        return

    fleets = [] if args.no_corpus or not CORPORA.is_dir() else [("corpus fleet", str(CORPORA))]
    fleets.append((f"{args.clusters} x {args.partitions:,} ({args.shape})",
                   str(make_fleet(args.shape, args.partitions, args.clusters))))
    print(f"machine: two CPU-bound processes get {parallel_capacity():.2f} cores' worth of work "
          "done (2.00 = two free cores)", flush=True)
    loops = []
    for name, fleet in fleets:
        clusters = fleet_clusters(Path(fleet))
        loop = shell_loop(clusters)
        loops.append(loop)
        print(f"loop {name}: {len(clusters)} clusters, {loop['seconds']:.1f} s wall, "
              f"{loop['cpu']:.1f} s CPU, {human_bytes(loop['bytes'])} of output"
              + (f", {loop['failed']} exited non-zero" if loop["failed"] else ""), flush=True)
    res = run_fresh(__file__, ["--child", "spark", args.master] + [f for _, f in fleets],
                    timeout=7200)
    print(f"spark {args.master}: session started in {res['startup']:.1f} s", flush=True)
    rows = []
    for (name, _), loop, got in zip(fleets, loops, res["fleets"]):
        ratio = got["seconds"] / loop["seconds"]
        rss = max(got["worker_peaks"] or [0])
        rows.append([name, f"{got['rows']:,}", f"{loop['seconds']:.1f}", f"{got['seconds']:.1f}",
                     f"{ratio:.2f}", f"{loop['cpu']:.1f}", f"{got['cpu']:.1f}",
                     f"{got['cpu'] / loop['cpu']:.2f}", human_bytes(rss),
                     len(got["worker_peaks"]), verdict(ratio, rss)])
    # CPU seconds say what the work costs when the machine gives less than its
    # cores (other work): Spark's are the JVM's and its Python workers'
    print_table(["fleet", "rows", "loop s", "spark s", "ratio", "loop CPU s", "spark CPU s",
                 "CPU ratio", "worker RSS", "workers", "target"], rows)


if __name__ == "__main__":
    main()
