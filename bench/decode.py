"""Decoding throughput and memory on a large generated snapshot.

Writes (with the project's writer, see ``_util.cluster_records``) a snapshot
of ``--topics`` x ``--partitions`` (default 100,000 x 10: about 1.1 M
records), cached under ``bench/out/``, then measures, each in a fresh
interpreter so that peak memory figures are separate:

``decode``  full decoding: :func:`metashell.loader.reader.read_file` and
                ``record.data`` of every record, nothing retained;
    ``lazy``    (extra) the same with ``lazy=True``: framing only, no ``.data``.

and prints records/s and the peak RSS (``ru_maxrss``, which includes the
touched pages of the memory-mapped file) relative to the file size.
Each measurement runs in ``--rounds`` fresh processes (default 3) and the
fastest counts (``slowest`` is shown beside it); peak RSS is the highest of
all rounds.

    python -m bench.decode                      # the full run
    python -m bench.decode --topics 2000        # quicker
    python -m bench.decode --profile decode     # cProfile one measurement
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench._util import (Timer, best_of_fresh, big_snapshot, human_bytes, peak_rss_bytes, print_table,
                         report_child)

TARGETS = {"decode": 300_000}   # records/s on the reference 2-core machine
MEMORY_TARGET = 2.0                                 # peak RSS <= 2 x file size


def measure_decode(path: Path) -> int:
    from metashell.fast.door import shortcuts
    from metashell.loader.reader import read_file
    n = 0
    for batch in read_file(path, shortcuts=shortcuts):
        for rec in batch.records:
            rec.data
        n += len(batch.records)
    return n


def measure_lazy(path: Path) -> int:
    from metashell.loader.reader import read_file
    n = 0
    for batch in read_file(path, lazy=True):
        n += len(batch.records)
    return n


MEASURES = {"decode": measure_decode, "lazy": measure_lazy}


def child(what: str, path: Path, repeat: int) -> None:
    """Run one measurement in this (fresh) process and print it as JSON."""
    import metashell.loader.reader  # noqa: F401  (imports and catalog set-up are not timed)
    fn = MEASURES[what]
    best = None
    for _ in range(repeat):
        with Timer() as t:
            n = fn(path)
        best = t.seconds if best is None else min(best, t.seconds)
    report_child({"what": what, "records": n, "seconds": best, "peak_rss": peak_rss_bytes(),
                  "size": path.stat().st_size})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs in each process (default 3)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="fresh processes per measurement, the fastest counts (default 3)")
    ap.add_argument("--only", choices=sorted(MEASURES), action="append",
                    help="run only these measurements (repeatable)")
    ap.add_argument("--profile", choices=sorted(MEASURES),
                    help="cProfile one measurement in this process and print the top entries")
    ap.add_argument("--file", type=Path, help="measure this file instead of a generated snapshot")
    ap.add_argument("--child", nargs=2, metavar=("WHAT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        child(args.child[0], Path(args.child[1]), args.repeat)
        return 0

    path = args.file or big_snapshot(args.topics, args.partitions)
    size = path.stat().st_size

    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.runcall(MEASURES[args.profile], path)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return 0

    print(f"file: {path} ({human_bytes(size)})", flush=True)
    rows = []
    ok = True
    for what in args.only or ["decode", "lazy"]:
        r = best_of_fresh(__file__, ["--child", what, str(path), "--repeat", str(args.repeat)],
                          args.rounds)
        rate = r["records"] / r["seconds"]
        ratio = r["peak_rss"] / size
        target = TARGETS.get(what)
        met = (target is None or rate >= target) and ratio <= MEMORY_TARGET
        ok &= met
        rows.append([what, f"{r['records']:,}", f"{r['seconds']:.2f}", f"{r['slowest']:.2f}", f"{rate:,.0f}",
                     f"{target:,}" if target else "-", human_bytes(r["peak_rss"]), f"{ratio:.2f}x",
                     "yes" if met else "NO"])
    print()
    print_table(["pass", "records", "seconds", "slowest", "records/s", "target/s", "peak RSS",
                 "RSS/file", "met"], rows)
    print(f"\ntargets: decode >= {TARGETS['decode']:,}/s, "
          f"peak RSS <= {MEMORY_TARGET:g} x file size")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
