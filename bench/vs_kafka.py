"""The race: Kafka's own metadata shell and metashell on the same files.

Each row loads a file in a fresh process and runs one command, Kafka's
shell (``org.apache.kafka.shell.MetadataShell --snapshot FILE``, the
newest release on Maven Central, resolved as the real-Kafka tests resolve
it; the JVM's default heap; in its interactive mode, asked for
``/image/provenance`` until loaded, then CMD) and ours (``python -m metashell.cli -s FILE
CMD``), its output read from a pipe and counted (as cheap as /dev/null);
it prints wall time, CPU time (user + system, all threads) and peak RSS of
the whole process (``wait4``), best of ``--rounds``, and our ratios to
Kafka's (on a loaded machine the JVM's many threads win it more of the
CPUs than our one: compare CPU time there). Files: the 1 M-partition snapshot in 8 MiB batches and the 1 M-
partition CreateTopics log of ``bench/shapes.py`` (cached in bench/out).

Rows: (a) ``ls /image/topics/byName``, (b) ``cat`` of one partition,
(c) ``tree /image/topics``, and our native ``ls /topics`` and ``tree
/topics`` against the same Kafka row. Target: every ratio at most 0.5.

Kafka's one-shot mode answers from the empty image when its loader has
applied a batch but not yet published the image (on a large file, always;
see tests/realkafka/ImageDump.java), hence the interactive mode; a run whose
answer is not the expected one is repeated, counted in ``tries``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from bench import shapes
from bench._util import human_bytes, print_table, topic_name
from tests.realkafka.jars import log_config, shell_classpath

SHAPES = ("snap-8mib-v2", "create-topics")
KAFKA_TRIES = 3
PROMPT = b">> "
TIMEOUT_S = 1800


def measure(argv: list[str], timeout: float = TIMEOUT_S) -> dict:
    """One fresh process, its output read and counted (as cheap as /dev/null):
    wall seconds, peak RSS (bytes, ``wait4``) and output bytes."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out_bytes, head, deadline = 0, b"", time.monotonic() + timeout
    while chunk := proc.stdout.read(1 << 20):
        head = head or chunk[:100]
        out_bytes += len(chunk)
        if time.monotonic() > deadline:
            break
    if time.monotonic() > deadline:
        proc.kill()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    return {"seconds": time.perf_counter() - start, "peak_rss": usage.ru_maxrss * 1024,
            "cpu": usage.ru_utime + usage.ru_stime, "out": out_bytes, "head": head}


def kafka_measure(argv: list[str], words: list[str], expect: bytes) -> dict:
    """Kafka's shell in its interactive mode: asked for ``/image/provenance``
    until its image is loaded (in one-shot mode it answers from the empty
    image when it has not published the file's yet, which on a large file is
    always), then ``words``, then ``exit``; timed from start to exit. Tried
    again when the answer does not start with ``expect``."""
    for tries in range(1, KAFKA_TRIES + 1):
        result = _interactive(argv, " ".join(words))
        if result["head"].startswith(expect):
            return {**result, "tries": tries}
    return {"seconds": float("nan"), "peak_rss": 0, "cpu": float("nan"), "out": 0,
            "tries": KAFKA_TRIES}


def _interactive(argv: list[str], command: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    fd, pending = proc.stdout.fileno(), b""
    deadline = time.monotonic() + TIMEOUT_S

    def answer() -> bytes:
        """Everything up to the next prompt."""
        nonlocal pending
        while PROMPT not in pending and time.monotonic() < deadline:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            pending += chunk
        text, _, pending = pending.partition(PROMPT)
        return text

    answer()                                        # Loading..., Starting..., the banner
    while time.monotonic() < deadline:
        proc.stdin.write(b"cat /image/provenance\n")
        proc.stdin.flush()
        if not answer().startswith(b"offset -1,"):
            break
        time.sleep(0.05)
    proc.stdin.write(command.encode() + b"\nexit\n")
    proc.stdin.close()
    head, out_bytes = pending[:100], len(pending)
    while chunk := os.read(fd, 1 << 20):
        head = head or chunk[:100]
        out_bytes += len(chunk)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    return {"seconds": time.perf_counter() - start, "peak_rss": usage.ru_maxrss * 1024,
            "cpu": usage.ru_utime + usage.ru_stime, "out": out_bytes, "head": head}


def best(results: list[dict]) -> dict:
    """The fastest round, with the highest peak RSS of all rounds."""
    done = dict(min(results, key=lambda r: r["seconds"]))
    done["peak_rss"] = max(r["peak_rss"] for r in results)
    return done


def commands() -> list[tuple[str, list[str], list[str], bytes]]:
    """(row, Kafka's words, our words, how Kafka's output starts) per row."""
    one = f"/image/topics/byName/{topic_name(0)}/0"
    first = topic_name(0).encode()
    return [("ls /image/topics/byName", ["ls", "/image/topics/byName"],
             ["ls", "/image/topics/byName"], first),
            ("cat one partition", ["cat", one], ["cat", one], b"PartitionRegistration("),
            ("tree /image/topics", ["tree", "/image/topics"], ["tree", "/image/topics"], b"byId:\n  "),
            ("ls /topics (native)", ["ls", "/image/topics/byName"], ["ls", "/topics"], first),
            ("tree /topics (native)", ["tree", "/image/topics"], ["tree", "/topics"], b"byId:\n  ")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=1, help="fresh processes per measurement")
    ap.add_argument("--kafka", default="4.3.1", help="Kafka shell release")
    args = ap.parse_args(argv)
    java = ["java", log_config(args.kafka)[0], f"-Dkafka.logs.dir={tempfile.gettempdir()}",
            "-cp", shell_classpath(args.kafka), "org.apache.kafka.shell.MetadataShell"]
    ours = [sys.executable, "-m", "metashell.cli"]
    rows = []
    for shape in SHAPES:
        path, _ = shapes.shape_path(shape, args.partitions)
        kafka_rows = {}
        for row, kafka_words, our_words, expect in commands():
            key = tuple(kafka_words)
            if key not in kafka_rows:
                kafka_rows[key] = best([kafka_measure(java + ["--snapshot", str(path)],
                                                      kafka_words, expect)
                                        for _ in range(args.rounds)])
            k = kafka_rows[key]
            m = best([measure(ours + ["-s", str(path), *our_words]) for _ in range(args.rounds)])
            rows.append([f"{shape}: {row}", f"{k['seconds']:.2f}", f"{k['cpu']:.2f}",
                         human_bytes(k["peak_rss"]), k["tries"], f"{m['seconds']:.2f}",
                         f"{m['cpu']:.2f}", human_bytes(m["peak_rss"]),
                         f"{m['seconds'] / k['seconds']:.2f}x", f"{m['cpu'] / k['cpu']:.2f}x",
                         f"{m['peak_rss'] / max(k['peak_rss'], 1):.2f}x"])
            print("  ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    print(f"Kafka's shell {args.kafka} vs metashell, {args.partitions:,} partitions, "
          f"best of {args.rounds}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print_table(["row", "kafka s", "kafka cpu s", "kafka RSS", "tries", "ours s", "ours cpu s",
                 "ours RSS", "time", "cpu", "RSS"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
