"""``diff`` on million-partition images, against loading one image alone.

Two cases, each timed against its baseline in the same run (the machine is
shared and its speed varies; the ratios are what the targets are about):

(a) ``offsets``   a metadata log dir (a ``--topics`` x ``--partitions``
                  snapshot in Kafka's 8 MiB batches, then a segment of small
                  batches in which ``--changes`` partitions change), loaded
                  whole and diffed ``--from-offset`` the point before those
                  changes; baseline ``load-logdir``: loading the log dir alone.
                  Target: <= 1.5 x.
(b) ``snapshots`` two such snapshots, the second with ``--changes``
                  partitions' ISR shrunk: one loaded, diffed ``--against``
                  the other; baseline ``load-snapshot``: loading one alone.
                  Target: <= 3 x.

Each measurement runs the shell's own code (``open_session``, then the
``diff`` command writing its lines to memory) in a fresh process, ``--rounds``
times, the rounds alternating between the scenarios; the best wall and CPU
(user + system) times count, the slowest wall time is shown beside them, and
peak RSS is the highest of all rounds. The targets are checked on CPU time:
on this shared machine other processes stretch wall time several-fold. Fixtures are made with the project's writer
and cached under ``bench/out/``.

    python -m bench.diff                      # 100,000 topics x 10 partitions, 1,000 changes
    python -m bench.diff --topics 2000        # quicker
    python -m bench.diff --profile offsets    # cProfile one scenario here
"""

from __future__ import annotations

import argparse
import io
import sys
import time

from bench._util import (Timer, changing_log_dir, human_bytes, kafka_snapshot, peak_rss_bytes,
                         print_table, report_child, run_fresh)

TARGETS = {"offsets": 1.5, "snapshots": 3.0}
BASELINES = {"offsets": "load-logdir", "snapshots": "load-snapshot"}
SCENARIOS = ("load-logdir", "offsets", "load-snapshot", "snapshots")


def _load(path: str):
    from metashell.session.files import open_session
    session = open_session(path)
    session.root.child("topics").children()   # the first answer, as bench/load.py times it
    return session


def _diff(session, words: list[str]) -> tuple[int, int]:
    """Run ``diff`` as the shell does; (exit status, lines printed)."""
    from metashell.commands import Context, run_words
    out, err = io.StringIO(), io.StringIO()
    status = run_words(Context.for_session(session, out=out, err=err), ["diff", *words])
    if status not in (0, 1):
        raise RuntimeError(f"diff failed ({status}): {err.getvalue().strip()}")
    return status, out.getvalue().count("\n")


def scenario(what: str, args: list[str]) -> dict:
    cpu = time.process_time()
    with Timer() as t:
        session = _load(args[0])
        lines = None
        if what == "offsets":
            _, lines = _diff(session, ["--from-offset", args[1]])
        elif what == "snapshots":
            _, lines = _diff(session, ["--against", args[1]])
    return {"seconds": t.seconds, "cpu": time.process_time() - cpu, "lines": lines}


def child(what: str, args: list[str]) -> None:
    import metashell.session.baseline  # noqa: F401  (imports are not timed)
    import metashell.commands  # noqa: F401
    result = scenario(what, args)
    result.update(what=what, peak_rss=peak_rss_bytes())
    report_child(result)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3,
                    help="fresh processes per scenario, alternating; the best counts (default 3)")
    ap.add_argument("--profile", choices=("offsets", "snapshots"),
                    help="cProfile one scenario in this process and print the top entries")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1:])
        return 0

    logdir, middle = changing_log_dir(args.topics, args.partitions, args.changes)
    total = args.topics * args.partitions
    older = kafka_snapshot(args.topics, args.partitions)
    newer = kafka_snapshot(args.topics, args.partitions,
                           shrunk_every=max(1, total // args.changes))
    inputs = {"load-logdir": [str(logdir)], "offsets": [str(logdir), str(middle)],
              "load-snapshot": [str(newer)], "snapshots": [str(newer), str(older)]}
    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        print(prof.runcall(scenario, args.profile, inputs[args.profile]))
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return 0

    print(f"{args.topics:,} topics x {args.partitions} partitions, {args.changes:,} changed; "
          f"log dir {logdir.name} (diff from offset {middle}), snapshots {older.name} / "
          f"{newer.name} ({human_bytes(newer.stat().st_size)})", flush=True)
    # rounds alternate between the scenarios, so a busy spell of the machine hits them alike
    runs = {what: [] for what in SCENARIOS}
    for _ in range(args.rounds):
        for what in SCENARIOS:
            runs[what].append(run_fresh(__file__, ["--child", what, *inputs[what]]))
    rows, ok = [], True
    for what in SCENARIOS:
        best = {key: min(r[key] for r in runs[what]) for key in ("seconds", "cpu")}
        ratio = cpu_ratio = target = met = "-"
        if what in TARGETS:
            base = {key: min(r[key] for r in runs[BASELINES[what]]) for key in ("seconds", "cpu")}
            ratio = f"{best['seconds'] / base['seconds']:.2f}x"
            cpu_ratio = f"{best['cpu'] / base['cpu']:.2f}x"
            target = f"{TARGETS[what]:g}x"
            good = best["cpu"] <= TARGETS[what] * base["cpu"]
            ok &= good
            met = "yes" if good else "NO"
        rows.append([what, f"{best['seconds']:.2f}", f"{max(r['seconds'] for r in runs[what]):.2f}",
                     f"{best['cpu']:.2f}", ratio, cpu_ratio, target, met,
                     "-" if runs[what][0]["lines"] is None else f"{runs[what][0]['lines']:,}",
                     human_bytes(max(r["peak_rss"] for r in runs[what]))])
    print()
    print_table(["scenario", "wall s", "slowest", "cpu s", "wall ratio", "cpu ratio", "target",
                 "met", "diff lines", "peak RSS"], rows)
    print("\nratios: the best diff (load included) over the best load of its baseline, same run; "
          "the target is checked on CPU time\n(user + system of the process), which other work "
          "on this shared machine disturbs far less than wall time")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
