"""One-shot start-up time: ``kafka-metadata-shell -s <small snapshot> ls /``.

Writes a small snapshot (a few topics) with the project's writer, then runs
the real console script in fresh processes and prints wall-time statistics.
Target on a 2-core machine: median <= 0.5 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.writer import record, snapshot_bytes, snapshot_name, write_file

TARGET_S = 0.5


def small_snapshot(path: Path, topics: int = 5, partitions: int = 3) -> None:
    recs = [record("FeatureLevelRecord", name="metadata.version", featureLevel=29)]
    recs.append(record("RegisterBrokerRecord", brokerId=1, brokerEpoch=7,
                       incarnationId=uuid_to_str(bytes(range(16))), fenced=False,
                       endPoints=[{"name": "PLAINTEXT", "host": "localhost", "port": 9092,
                                   "securityProtocol": 0}]))
    for t in range(topics):
        tid = uuid_to_str(t.to_bytes(16, "big"))
        recs.append(record("TopicRecord", name=f"topic-{t}", topicId=tid))
        for p in range(partitions):
            recs.append(record("PartitionRecord", partitionId=p, topicId=tid, replicas=[1], isr=[1],
                               leader=1, leaderEpoch=0, partitionEpoch=0))
    write_file(path, snapshot_bytes(recs, epoch=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    exe = shutil.which("kafka-metadata-shell", path=str(Path(sys.executable).parent))
    if exe is None:
        sys.exit("kafka-metadata-shell is not installed next to this Python (pip install -e .)")
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / snapshot_name(100, 1)
        small_snapshot(snap)
        times = []
        for _ in range(args.runs + 1):
            t0 = time.perf_counter()
            out = subprocess.run([exe, "-s", str(snap), "ls", "/"], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if out.returncode != 0 or "topics" not in out.stdout:
                sys.exit(f"unexpected result: {out.returncode} {out.stdout!r} {out.stderr!r}")
        times = times[1:]  # the first run warms the page cache
    med = statistics.median(times)
    print(f"one-shot `ls /` on a small snapshot, {args.runs} runs")
    print(f"  median {med:.3f} s   min {min(times):.3f} s   max {max(times):.3f} s   "
          f"target <= {TARGET_S} s: {'met' if med <= TARGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
