"""Brokers' start times: what they cost at load (nothing, they are looked up
when asked) and what the lookup costs when asked.

The log dir is Kafka-shaped (generated with the project's writer, cached
under ``bench/out/``): a long segment of small batches (one NoOp every
500 ms, as an active controller writes, with the brokers' registrations
spread through it) and its ``.index`` (an entry per 4 KiB, as Kafka writes
it); a snapshot at its end (``--topics`` x 10 partitions in 1000-record
batches) holding the brokers with those epochs; a short segment after it.
A copy without the ``.index`` (hard links) shows the header walk alone.

Scenarios, each in fresh processes (the fastest of ``--rounds`` counts):

``load``        ``open_session`` until ``ls /topics`` answers, with this
                tree's code and, given ``--baseline DIR`` (a directory
                holding an older ``metashell`` package, e.g. from
                ``git archive <commit> metashell``), with that code, in
                alternating rounds; the ratio is printed
``starts``      after the load, what ``summary`` lists as brokers.started
                (every broker's start time, looked up cold), with and
                without the ``.index``

``--callgrind`` also counts the instructions (valgrind) of a whole ``load``
process and of one that only imports, for both trees: immune to the other
work on this shared machine, and the difference is the load alone.

    git archive main metashell | (mkdir -p /tmp/base && tar -x -C /tmp/base)
    python -m bench.start_times --baseline /tmp/base --callgrind
"""

from __future__ import annotations

import argparse
import os
import re
import json
import subprocess
import sys
from pathlib import Path

from bench._util import (BENCH_DIR, OUT_DIR, Timer, cluster_records, human_bytes, peak_rss_bytes, print_table,
                         report_child, run_fresh, write_snapshot)

from metashell.kraft.writer import LogWriter, record, segment_name, snapshot_name

BROKERS = 6
TS = 1_700_000_000_000
INDEX_INTERVAL = 4096        # Kafka's index.interval.bytes


# --------------------------------------------------------------------------- the log dir

def log_dir(topics: int, batches: int) -> Path:
    """The cached log dir (and its index-less twin, ``<name>-noindex``)."""
    root = OUT_DIR / f"logdir-starts-g1-{topics}t-{batches}b"
    part = root / "__cluster_metadata-0"
    if not (root / "done").exists():
        print(f"generating {root.name} ...", file=sys.stderr, flush=True)
        part.mkdir(parents=True, exist_ok=True)
        epochs = _write_long_segment(part, batches)
        records = []
        for out in cluster_records(topics, 10, brokers=BROKERS):
            if out.spec.name == "RegisterBrokerRecord":
                out.data["brokerEpoch"] = epochs[out.data["brokerId"]]
            records.append(out)
        write_snapshot(part / snapshot_name(batches, 7), records, epoch=7,
                       timestamp=TS + 500 * (batches - 1))
        tail = LogWriter(batches, 7, TS + 500 * batches)
        for k in range(1000):
            tail.batch([record("NoOpRecord")], timestamp=TS + 500 * (batches + k))
        tail.write(part / segment_name(batches))
        twin = root.with_name(root.name + "-noindex") / "__cluster_metadata-0"
        twin.mkdir(parents=True, exist_ok=True)
        for f in part.iterdir():
            if f.suffix != ".index" and not (twin / f.name).exists():
                os.link(f, twin / f.name)
        (root / "done").write_text("")
    return root


def _write_long_segment(part: Path, batches: int) -> dict:
    """Segment 0: a NoOp batch every 500 ms, broker b registering at
    ``b / (BROKERS + 1)`` of the way; its ``.index``. Returns the epochs."""
    w = LogWriter(0, 7, TS)
    at = {batches * b // (BROKERS + 1): b for b in range(1, BROKERS + 1)}
    epochs = {}
    index = bytearray()
    pos = last_indexed = 0
    for k in range(batches):
        b = at.get(k)
        if b is None:
            w.batch([record("NoOpRecord")], timestamp=TS + 500 * k)
        else:
            epochs[b] = w.next_offset
            w.batch([record("RegisterBrokerRecord", brokerId=b, brokerEpoch=w.next_offset,
                            incarnationId="AAAAAAAAAAAAAAAAAAAAAQ", endPoints=[], features=[],
                            rack=None, fenced=True, logDirs=[])], timestamp=TS + 500 * k)
        if pos - last_indexed >= INDEX_INTERVAL:
            index += (w.next_offset - 1).to_bytes(4, "big") + pos.to_bytes(4, "big")
            last_indexed = pos
        pos += len(w.parts[-1])
    w.write(part / segment_name(0))
    (part / segment_name(0)).with_suffix(".index").write_bytes(bytes(index))
    return epochs


# --------------------------------------------------------------------------- scenarios (children)

def scenario_load(path: Path) -> dict:
    from metashell.session.files import open_session
    with Timer() as t:
        s = open_session(path)
        n = len(s.root.child("topics").children())
    return {"seconds": t.seconds, "topics": n}


def scenario_starts(path: Path) -> dict:
    from metashell.queries.registration import started
    from metashell.session.files import open_session
    s = open_session(path)
    with Timer() as t:
        rows = started(s.image, s.times)
    known = sum(r["registeredAt"] is not None for r in rows)
    return {"seconds": t.seconds, "brokers": len(rows), "known": known}


def scenario_imports(path: Path) -> dict:
    """Nothing past the imports: callgrind subtracts this from ``load``."""
    return {"seconds": 0.0}


RUN = {"load": scenario_load, "starts": scenario_starts, "imports": scenario_imports}


def child(what: str, path: Path) -> None:
    import metashell.session.files  # noqa: F401  (imports are not timed)
    result = RUN[what](path)
    result.update(peak_rss=peak_rss_bytes())
    report_child(result)


# --------------------------------------------------------------------------- main

def _fresh(args: list[str], code: Path | None) -> dict:
    """A child with this tree's code, or the ``code`` directory's first on the path."""
    if code is None:
        return run_fresh(__file__, args)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(code), str(BENCH_DIR.parent)]))
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          env=env, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"baseline child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def _instructions(what: str, path: Path, code: Path | None) -> int:
    """Instructions of a whole ``--child what`` process under callgrind, with
    compiled modules (cached under ``bench/out/pycache``, as an installed
    package has them) and a fixed hash seed, so that runs repeat exactly."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(OUT_DIR / "pycache"), PYTHONHASHSEED="0")
    # a script with this checkout's bench (and a baseline's code before it) on the path:
    # the same start for both, so that their counts compare
    env["PYTHONPATH"] = os.pathsep.join([*([str(code)] if code is not None else []), str(BENCH_DIR.parent)])
    cmd = [sys.executable, __file__, "--child", what, str(path)]
    subprocess.run(cmd, capture_output=True, env=env, timeout=3600)   # compiles the modules
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                          capture_output=True, text=True, env=env, timeout=3600)
    m = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode != 0 or m is None:
        raise RuntimeError(f"callgrind failed:\n{proc.stderr[-2000:]}")
    return int(m.group(1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=20_000)
    ap.add_argument("--batches", type=int, default=400_000,
                    help="batches in the segment before the snapshot (one NoOp each)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="a directory holding an older metashell package")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions (valgrind)")
    ap.add_argument("--child", nargs=2, metavar=("WHAT", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0

    root = log_dir(args.topics, args.batches)
    twin = root.with_name(root.name + "-noindex")
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    print(f"log dir: {root} ({human_bytes(size)}: {args.batches:,} batches before a snapshot of "
          f"{args.topics:,} topics x 10 partitions)", flush=True)

    trees = [("this tree", None)] + ([("baseline", args.baseline)] if args.baseline else [])
    best = {name: float("inf") for name, _ in trees}
    for _ in range(args.rounds):            # alternating, so both see the same machine
        for name, code in trees:
            best[name] = min(best[name], _fresh(["--child", "load", str(root)], code)["seconds"])
    rows = [["load", name, f"{best[name]:.3f}", "-"] for name, _ in trees]
    if args.baseline:
        rows.append(["load", "ratio this/baseline", f"{best['this tree'] / best['baseline']:.3f}",
                     "-"])
    for label, path in (("with .index", root), ("without .index", twin)):
        runs = [run_fresh(__file__, ["--child", "starts", str(path)]) for _ in range(args.rounds)]
        r = min(runs, key=lambda r: r["seconds"])
        rows.append([f"starts ({r['known']}/{r['brokers']} known)", label, f"{r['seconds']:.4f}",
                     f"{r['seconds'] / r['brokers'] * 1000:.2f}"])
    print()
    print_table(["scenario", "code / source", "seconds (best)", "ms per broker"], rows)
    if args.callgrind:
        rows = []
        for name, code in trees:
            load, imports = (_instructions(what, root, code) for what in ("load", "imports"))
            rows.append([name, f"{load:,}", f"{imports:,}", f"{load - imports:,}"])
        if args.baseline:
            rows.append(["ratio this/baseline"] + [
                f"{int(a.replace(',', '')) / int(b.replace(',', '')):.4f}"
                for a, b in zip(rows[0][1:], rows[1][1:])])
        print()
        print_table(["callgrind instructions", "load process", "imports only",
                     "load - imports"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
