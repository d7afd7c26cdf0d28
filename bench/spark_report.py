"""The fleet report on one small cluster against a bare Spark session.

Issue #32's bar: ``kafka-metadata-fleet PATH`` on one small cluster (the
bundled example, 56 KB) takes at most twice the time of starting a bare
SparkSession and running one trivial job (``spark.range(1).count()``).
Both run in fresh processes, alternately, ``--rounds`` times each, the
best of each kept:

(1) ``bare``    a SparkSession as the report starts it (:func:`start_spark`,
                same master and settings), one trivial job, stopped;
(2) ``report``  ``kafka-metadata-fleet PATH --master MASTER``, the whole
                command.

Each is timed by the wall clock and by the CPU seconds of its whole process
tree (the JVM and its Python workers included: this program makes itself
their subreaper and collects them). The machine is shared: other work
stretches wall times, while CPU seconds say what the run itself costs, so
both ratios are printed.

    python -m bench.spark_report                       # local[*], 2 rounds
    python -m bench.spark_report --master local[2] --rounds 3 PATH
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench._util import again, print_table

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cluster"
FLEET = Path(sys.executable).with_name("kafka-metadata-fleet")
PR_SET_CHILD_SUBREAPER = 36
TARGET_RATIO = 2.0


def bare(master: str) -> None:
    """The child of (1)."""
    from metashell.spark.local import start_spark

    spark = start_spark(master)
    try:
        spark.range(1).count()
    finally:
        spark.stop()


def _tree_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(argv: "list[str]") -> "tuple[float, float]":
    """(wall seconds of ``argv``, CPU seconds of it and of every process it started)."""
    cpu = _tree_cpu()
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    while True:   # the JVM and the Python workers, orphaned to this process
        try:
            os.wait()
        except ChildProcessError:
            break
    return wall, _tree_cpu() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=str(EXAMPLE), help="the cluster (default: the example)")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "bare":
        bare(args.master)
        return
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    runs = {
        "bare": [*again(__file__), "--child", "bare", "--master", args.master],
        "report": [str(FLEET), args.path, "--master", args.master],
    }
    best: dict[str, list[float]] = {}
    for round_no in range(args.rounds):
        for name, argv in runs.items():
            wall, cpu = measure(argv)
            print(f"round {round_no + 1}: {name:6s} {wall:6.1f} s wall, {cpu:6.1f} s CPU",
                  file=sys.stderr, flush=True)
            prev = best.setdefault(name, [wall, cpu])
            best[name] = [min(prev[0], wall), min(prev[1], cpu)]
    (bw, bc), (rw, rc) = best["bare"], best["report"]
    print(f"{args.path} on {args.master}, best of {args.rounds} rounds each "
          f"(load average now {os.getloadavg()[0]:.1f}):")
    print_table(["run", "wall s", "CPU s"], [
        ["bare session + spark.range(1).count()", f"{bw:.1f}", f"{bc:.1f}"],
        ["kafka-metadata-fleet PATH", f"{rw:.1f}", f"{rc:.1f}"],
        [f"ratio (target <= {TARGET_RATIO:.1f})", f"{rw / bw:.2f}", f"{rc / bc:.2f}"],
    ])


if __name__ == "__main__":
    main()
