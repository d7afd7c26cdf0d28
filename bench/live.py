"""Live mode (``-C``) against files (``-s``), served by the tests' fake
controller quorum over loopback.

Prints:

1. catch-up from a Kafka-shaped snapshot (1M partitions by default,
   PartitionRecord v2, 8 MiB batches as KRaft's snapshot writer cuts them)
   downloaded with FetchSnapshot and replayed (``open_live_session``),
   against loading the same file (``open_session``): seconds, the ratio
   (target <= 1.5x) and peak RSS (target: live <= files + 25 %), each in
   fresh processes, the fastest round counting;
2. change latency from commit (the fake's high watermark advancing over a
   change the observer already holds uncommitted) to its line printed by
   ``kafka-metadata-shell -C ... -o json watch`` in another process: p50,
   p99 (target p99 <= 1 s), for a 4.1 leader (Fetch v18 wakes a long poll
   on a HWM advance) and a 3.9 one (the HWM arrives with the next answer,
   at the latest after MaxWait 500 ms, KIP-1166);
3. RSS of a live session while it follows 200,000 NoOp batches (must stay
   flat: nothing grows with the length of the log).

The fake quorum runs in this process; every client runs in its own, so its
memory is its own. The machine is shared: read the ratios, not the seconds.

Usage: ``python -m bench.live [--topics N --partitions N] [--rounds N]
[--changes N] [--noop-batches N] [--skip catchup,latency,noop]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench._util import (BENCH_DIR, OUT_DIR, Timer, again, best_of_fresh, cluster_records, human_bytes,
                               peak_rss_bytes, print_table, report_child, write_snapshot)
from metashell.kraft.writer import MAX_BATCH_BYTES, encode_records, record, snapshot_name

SNAPSHOT_EPOCH = 7


# --------------------------------------------------------------------------- the snapshot

def kafka_snapshot(topics: int, partitions: int, verbose: bool = True) -> Path:
    """A snapshot of ``topics`` x ``partitions`` (``_util.cluster_records``)
    whose data batches are as close to 8 MiB as KRaft's ``BatchAccumulator``
    makes them (``MAX_BATCH_SIZE_BYTES``); cached in ``bench/out/``. The
    records per batch come from the encoded size of a sample of them."""
    sample = list(itertools.islice(cluster_records(topics, partitions), 20_000))
    payload, count = encode_records(sample)
    per_batch = max(1, int(MAX_BATCH_BYTES * 0.99 * count / len(payload)))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    folder = OUT_DIR / f"kafka8m-{topics}t-{partitions}p"
    folder.mkdir(exist_ok=True)
    done = list(folder.glob("*.checkpoint"))
    if done:
        return done[0]
    tmp = folder / "snapshot.tmp"
    if verbose:
        print(f"generating a {topics} x {partitions} snapshot, {per_batch} records a batch ...",
              file=sys.stderr, flush=True)
    with Timer() as t:
        n = write_snapshot(tmp, cluster_records(topics, partitions), epoch=SNAPSHOT_EPOCH,
                           per_batch=per_batch)
    path = folder / snapshot_name(n, SNAPSHOT_EPOCH)
    os.replace(tmp, path)
    if verbose:
        print(f"  {n} records, {human_bytes(path.stat().st_size)} in {t.seconds:.1f} s",
              file=sys.stderr, flush=True)
    return path


def snapshot_end(path: Path) -> int:
    return int(path.name.split("-")[0])


# --------------------------------------------------------------------------- children

def child_file(path: str) -> None:
    from metashell.session.files import open_session
    with Timer() as t:
        s = open_session(path)
    report_child({"seconds": t.seconds, "peak_rss": peak_rss_bytes(),
                  "topics": len(s.image.topics)})


def child_live(bootstrap: str) -> None:
    from metashell.session.live import open_live_session
    from metashell.live import LiveConfig, parse_controllers
    with Timer() as t:
        s = open_live_session(LiveConfig(parse_controllers(bootstrap), timeout=300))
    topics = len(s.image.topics)
    s.close()
    report_child({"seconds": t.seconds, "peak_rss": peak_rss_bytes(), "topics": topics})


def current_rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child_follow(bootstrap: str, start: int, total: int, step: int) -> None:
    """Follow while the parent appends ``total`` NoOp batches after offset
    ``start``; print the RSS each time ``step`` more were applied."""
    import gc
    from metashell.session.live import open_live_session
    from metashell.live import LiveConfig, parse_controllers
    s = open_live_session(LiveConfig(parse_controllers(bootstrap), timeout=60))
    print(json.dumps({"ready": True, "rss": current_rss()}), flush=True)
    deadline = time.monotonic() + 600
    for target in range(step, total + 1, step):
        while s.image.last_offset < start + target - 1:
            if time.monotonic() > deadline:
                raise SystemExit("timed out following the NoOp batches")
            time.sleep(0.01)
        gc.collect()
        print(json.dumps({"applied": target, "rss": current_rss()}), flush=True)
    s.close()
    report_child({"peak_rss": peak_rss_bytes()})


# --------------------------------------------------------------------------- parts

def catch_up(args) -> None:
    from tests.support.fake_kraft import FakeQuorum
    path = kafka_snapshot(args.topics, args.partitions)
    data = path.read_bytes()
    q = FakeQuorum(1, profile="4.1", epoch=SNAPSHOT_EPOCH)
    q.truncate_to_snapshot(data, snapshot_end(path), SNAPSHOT_EPOCH)
    q.commit()
    with q:
        print(f"\n1. catch-up: {path.name} ({human_bytes(len(data))}, "
              f"{args.topics * args.partitions:,} partitions), best of {args.rounds} fresh processes")
        files = best_of_fresh(__file__, ["--child", "file", str(path)], args.rounds)
        live = best_of_fresh(__file__, ["--child", "live", q.bootstrap()], args.rounds)
    assert files["topics"] == live["topics"] == args.topics, (files, live)
    print_table(["source", "seconds", "slowest", "peak RSS"], [
        ["-s (open_session)", f"{files['seconds']:.2f}", f"{files['slowest']:.2f}",
         human_bytes(files["peak_rss"])],
        ["-C (fake quorum, loopback)", f"{live['seconds']:.2f}", f"{live['slowest']:.2f}",
         human_bytes(live["peak_rss"])]])
    ratio = live["seconds"] / files["seconds"]
    rss = live["peak_rss"] / files["peak_rss"]
    print(f"live / files: time {ratio:.2f}x (target <= 1.5x: {'met' if ratio <= 1.5 else 'MISSED'}), "
          f"peak RSS {rss:.2f}x (target <= 1.25x: {'met' if rss <= 1.25 else 'MISSED'})")


def _lines(proc, out: queue.Queue) -> None:
    for line in proc.stdout:
        out.put((time.perf_counter(), line))
    out.put((time.perf_counter(), None))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def watch_latency(profile: str, changes: int) -> list[float]:
    """Seconds from commit to the change's ``watch`` line, ``changes`` times."""
    from tests.support.fake_kraft import FakeQuorum
    q = FakeQuorum(3, profile=profile)
    q.append([record("FeatureLevelRecord", name="metadata.version", featureLevel=20)], commit=True)
    with q:
        cmd = [sys.executable, "-c", "import sys; from metashell.cli import main; sys.exit(main())",
               "-C", q.bootstrap(), "-o", "json", "watch", "/topics", "--count", str(changes + 1)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=BENCH_DIR.parent)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(proc, lines), daemon=True).start()
        latencies = []
        try:
            # warm-up: once a change shows, watch is past catch-up and following
            deadline = time.monotonic() + 60
            i = 0
            while True:
                q.append([_topic(f"warm-{i}", i)], commit=True)
                i += 1
                try:
                    _t, line = lines.get(timeout=1.0)
                    break
                except queue.Empty:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError(f"watch did not start: {proc.stderr.read()}")
            while not lines.empty():
                lines.get()
            for n in range(changes):
                q.append([_topic(f"change-{n}", 1000 + n)])      # the observer fetches it uncommitted
                time.sleep(0.05)
                start = time.perf_counter()
                q.commit()
                at, line = lines.get(timeout=10)
                if line is None:
                    raise RuntimeError(f"watch ended early: {proc.stderr.read()}")
                assert f"change-{n}" in line, line
                latencies.append(at - start)
        finally:
            proc.kill()
            proc.wait()
    return latencies


def _topic(name: str, n: int):
    from metashell.kraft.primitives import uuid_to_str
    return record("TopicRecord", name=name, topicId=uuid_to_str((7 << 64 | n).to_bytes(16, "big")))


def latency(args) -> None:
    print(f"\n2. change latency, commit -> `kafka-metadata-shell -C ... -o json watch /topics` line "
          f"({args.changes} changes each)")
    rows = []
    for profile in ("4.1", "3.9"):
        lat = watch_latency(profile, args.changes)
        p99 = percentile(lat, 99)
        rows.append([f"{profile} leader (Fetch v{18 if profile == '4.1' else 17})",
                     f"{percentile(lat, 50) * 1000:.0f}", f"{p99 * 1000:.0f}",
                     f"{max(lat) * 1000:.0f}", "met" if p99 <= 1.0 else "MISSED"])
    print_table(["controller", "p50 ms", "p99 ms", "max ms", "p99 <= 1 s"], rows)


def noop_rss(args) -> None:
    from tests.support.fake_kraft import FakeQuorum, noop_records
    from metashell.kraft.writer import LogWriter
    total, step = args.noop_batches, max(1, args.noop_batches // 10)
    q = FakeQuorum(1, profile="4.1")
    q.append([record("FeatureLevelRecord", name="metadata.version", featureLevel=20)], commit=True)
    start = q.log.end_offset
    one = noop_records(1)
    with q:
        cmd = [*again(__file__), "--child", "follow", q.bootstrap(), str(start), str(total), str(step)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=BENCH_DIR.parent)
        samples = [json.loads(proc.stdout.readline())]
        appended = 0
        while appended < total:                      # batches of one NoOp each, committed in runs
            with q.cond:
                for _ in range(min(5000, total - appended)):
                    w = LogWriter(q.log.end_offset, q.epoch)
                    w.batch(one)
                    q.log.append(w.getvalue())
                    appended += 1
            q.commit()
            time.sleep(0.02)
        for line in proc.stdout:
            samples.append(json.loads(line))
        proc.wait(timeout=60)
    print(f"\n3. RSS of a live session following {total:,} NoOp batches (one record each)")
    first = samples[1]["rss"]
    rows = [["after catch-up", human_bytes(samples[0]["rss"]), ""]]
    for s in samples[1:-1]:
        rows.append([f"{s['applied']:,} batches", human_bytes(s["rss"]),
                     f"{(s['rss'] - first) / 1024 / 1024:+.1f} MiB"])
    print_table(["followed", "RSS", "vs first step"], rows)
    # one Fetch answer is up to 8 MiB and is held while its batches are applied, so
    # RSS moves within about that much; growing with the log would show as a trend
    growth = samples[-2]["rss"] - first
    highest = max(s["rss"] for s in samples[1:-1]) - first
    flat = growth < 8 << 20 and highest < 16 << 20
    print(f"from {samples[1]['applied']:,} to {samples[-2]['applied']:,} batches: "
          f"{growth / 1024 / 1024:+.1f} MiB at the end, {highest / 1024 / 1024:+.1f} MiB at most "
          f"({'flat: bounded by the 8 MiB Fetch answers' if flat else 'GROWING'})")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        kind, rest = sys.argv[2], sys.argv[3:]
        if kind == "file":
            return child_file(*rest)
        if kind == "live":
            return child_live(*rest)
        if kind == "follow":
            return child_follow(rest[0], *(int(x) for x in rest[1:]))
        raise SystemExit(f"unknown child {kind}")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--noop-batches", type=int, default=200_000)
    ap.add_argument("--skip", default="", help="comma-separated: catchup, latency, noop")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    if "catchup" not in skip:
        catch_up(args)
    if "latency" not in skip:
        latency(args)
    if "noop" not in skip:
        noop_rss(args)


if __name__ == "__main__":
    main()
