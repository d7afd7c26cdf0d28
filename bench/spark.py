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
(2) ``spark``   one SparkSession on ``--master`` (default ``local[2]``) and,
                with ``--standalone``, one on a standalone cluster started
                for the run (a master and two workers of one core each,
                separate JVMs from PySpark's distribution, as the tests
                start it: ``tests/support/standalone.py``):
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
    python -m bench.spark --standalone                      # and on 2 workers
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


def child_spark(master: str, roots: str, fleets: list[str]) -> dict:
    """The ``partitions`` table of each fleet on one SparkSession; ``roots``:
    the PIDs (comma-separated, or "-") of the standalone workers, whose
    executors and Python workers count with the driver's."""
    from metashell.spark import register
    from metashell.spark.local import start_spark

    start = time.perf_counter()
    conf = {} if master.startswith("local") else {
        # one executor of one core per worker, this interpreter and this checkout's
        # metashell on both sides (the driver plans the source in a Python worker too)
        "spark.executor.cores": "1", "spark.cores.max": "2", "spark.executor.memory": "1g",
        "spark.executorEnv.PYTHONPATH": str(ROOT)}
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = start_spark(master, app_name="bench-spark", conf=conf)
    register(spark)
    out = {"startup": time.perf_counter() - start, "fleets": []}
    ours = {spark.sparkContext._gateway.proc.pid, *(int(p) for p in roots.split(",") if p != "-")}
    for fleet in fleets:
        start, cpu = time.perf_counter(), Processes(ours).cpu()
        rows = spark.read.format("kraft-metadata").option("table", "partitions") \
            .load(fleet).count()
        seconds = time.perf_counter() - start
        after = Processes(ours)
        out["fleets"].append({"seconds": seconds, "cpu": after.cpu() - cpu, "rows": rows,
                              "worker_peaks": after.worker_peaks()})
    log = spark.conf.get("spark.metashell.log")
    spark.stop()
    os.unlink(log)   # Spark's own output: nothing left in the temporary folder
    return out


class Processes:
    """The processes at or below ``roots`` (our driver JVM, the standalone
    workers) as /proc shows them now."""

    def __init__(self, roots: set[int]):
        parents, self.stats, self.cmds = {}, {}, {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
            except OSError:
                continue
            parents[int(pid)] = int(fields[1])
            self.stats[int(pid)], self.cmds[int(pid)] = fields, cmd

        def below(pid: int) -> bool:
            while pid > 1:
                if pid in roots:
                    return True
                pid = parents.get(pid, 0)
            return False

        self.ours = [pid for pid in self.stats if below(pid)]

    def cpu(self) -> float:
        """CPU seconds (user + system) of our processes, those that ended
        included (their parent's waited-for children's times)."""
        ticks = sum(int(v) for pid in self.ours for v in self.stats[pid][11:15])
        return ticks / os.sysconf("SC_CLK_TCK")   # utime stime cutime cstime

    def worker_peaks(self) -> list[int]:
        """VmHWM (peak RSS) of each of our live Python worker processes
        (other Spark applications may run on this machine)."""
        peaks = []
        for pid in self.ours:
            if "pyspark.daemon" in self.cmds[pid] or "pyspark.worker" in self.cmds[pid]:
                try:
                    status = open(f"/proc/{pid}/status").read()
                except OSError:
                    continue
                peaks += [int(line.split()[1]) * 1024 for line in status.splitlines()
                          if line.startswith("VmHWM:")]
        return peaks


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
    ap.add_argument("--standalone", action="store_true",
                    help="also on a standalone cluster of two 1-core workers started for the run")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.child[0] == "spin":
            report_child(child_spin())
        else:
            report_child(child_spark(args.child[1], args.child[2], args.child[3:]))
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
    rows = []
    for master in [args.master] + (["standalone"] if args.standalone else []):
        res = spark_run(master, [f for _, f in fleets])
        print(f"spark {master}: session started in {res['startup']:.1f} s", flush=True)
        for (name, _), loop, got in zip(fleets, loops, res["fleets"]):
            rows.append(result_row(name, master, loop, got))
    # CPU seconds say what the work costs when the machine gives less than its
    # cores (other work): Spark's are the driver JVM's and its Python workers'
    # (on standalone, the executors' JVMs run under the workers: not counted)
    print_table(["fleet", "master", "rows", "loop s", "spark s", "ratio", "loop CPU s",
                 "spark CPU s", "CPU ratio", "worker RSS", "workers", "target"], rows)


def spark_run(master: str, fleets: list[str]) -> dict:
    """The Spark child's answer on ``master`` ("standalone": a cluster started for it)."""
    if master != "standalone":
        return run_fresh(__file__, ["--child", "spark", master, "-", *fleets], timeout=7200)
    from tests.support.standalone import Standalone

    cluster = Standalone().start()
    print(f"standalone: master and 2 workers started in {cluster.started_s:.1f} s", flush=True)
    try:
        workers = ",".join(str(w.pid) for w in cluster.workers)
        return run_fresh(__file__, ["--child", "spark", cluster.url, workers, *fleets],
                         timeout=7200)
    finally:
        cluster.stop()


def result_row(name: str, master: str, loop: dict, got: dict) -> list:
    ratio = got["seconds"] / loop["seconds"]
    rss = max(got["worker_peaks"] or [0])
    return [name, master, f"{got['rows']:,}", f"{loop['seconds']:.1f}", f"{got['seconds']:.1f}",
            f"{ratio:.2f}", f"{loop['cpu']:.1f}", f"{got['cpu']:.1f}",
            f"{got['cpu'] / loop['cpu']:.2f}", human_bytes(rss), len(got["worker_peaks"]),
            verdict(ratio, rss)]


if __name__ == "__main__":
    main()
