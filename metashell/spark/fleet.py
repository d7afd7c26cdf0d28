"""``kafka-metadata-fleet``: the fleet report, one line per cluster.

Finds the clusters below PATH (before starting Spark, so a wrong path is a
one-line error in a moment), runs the ``kraft-metadata`` source on Spark,
prints one line per cluster and a fleet total, and with ``--out`` writes
every table as Parquet, one folder per table. Exit codes as the shell's:
0 done (damaged clusters are reported, not fatal), 1 the input or Spark
failed, 2 usage, 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import click

from .. import __version__
from ..errors import MetashellError
from ..timefmt import iso_time
from . import discover
from .hadoop import is_uri, local_path

PROG = "kafka-metadata-fleet"

COLUMNS = ("cluster", "cluster_id", "state", "metadata_release", "brokers", "fenced_brokers",
           "controllers", "topics", "partitions", "under_replicated", "offline",
           "under_min_isr", "last_time", "problems")
HEADINGS = ("CLUSTER", "CLUSTER ID", "STATE", "MV", "BROKERS", "FENCED", "CONTROLLERS", "TOPICS",
            "PARTITIONS", "URP", "OFFLINE", "UNDER-MIN-ISR", "LAST CHANGE", "PROBLEMS")
NUMBERS = ("brokers", "fenced_brokers", "controllers", "topics", "partitions", "under_replicated",
           "offline", "under_min_isr", "problems")
TOTALS = ("brokers", "fenced_brokers", "controllers", "topics", "partitions", "under_replicated",
          "offline", "under_min_isr")

EPILOG = """\b
Examples:
  kafka-metadata-fleet /backups/kafka
  kafka-metadata-fleet /backups/dc1 /backups/dc2/meta
  kafka-metadata-fleet '/backups/*/meta' -o json | jq '.total'
  kafka-metadata-fleet /backups/kafka --out /tmp/fleet --master spark://head:7077
"""


@click.command(name=PROG, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", metavar="PATH...", nargs=-1, required=True)
@click.option("--out", metavar="DIR", type=click.Path(file_okay=False),
              help="Also write every table as Parquet, one folder per table.")
@click.option("--master", metavar="URL",
              help="Spark master (default: spark-submit's, else local[*]).")
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")
@click.version_option(__version__, "--version", prog_name=PROG,
                      message="%(prog)s (metashell) %(version)s")
def cli(paths, out, master, output):
    """Report on every KRaft cluster below each PATH (a metadata log dir, a
    metadata file, a folder of them, a glob, or the URI of any of these in a
    store Spark reads: hdfs://, s3a://, ...) with Spark."""
    err = sys.stderr
    paths = list(dict.fromkeys(paths))
    try:
        local, missing = _local_clusters([p for p in paths if not is_uri(p)])
        uris = [p for p in paths if is_uri(p)]
        if not local and not uris:
            raise missing[0][1]
        for _, e in missing:
            err.write(f"{PROG}: warning: {e}\n")
        if out is not None:
            _check_out(out, local)
        readable = [p for p in paths if p not in dict(missing) and not is_uri(p)]
        what = [f"{_count(len(local), 'cluster')} below {' '.join(readable)}"] if readable else []
        what += [f"listing {' '.join(uris)} with Spark"] if uris else []
        err.write(f"{PROG}: {'; '.join(what)}; starting Spark ({master or 'default master'})\n")
        rows = _run(readable, uris, out, master, err)
        rows += [_missing_row(path, e) for path, e in missing]
    except MetashellError as e:
        err.write(f"{PROG}: {e}\n")
        sys.exit(1)
    except KeyboardInterrupt:
        err.write("\n")
        sys.exit(130)
    sys.stdout.write(render(sorted(rows, key=lambda r: r["cluster"]), output))
    for r in rows:
        for p in r["problems"]:
            err.write(f"{PROG}: {r['cluster']}: {p['text']}\n")
    if all(r.get("missing") for r in rows):
        sys.exit(1)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _local_clusters(paths: "list[str]"):
    """(clusters below the local ``paths``, [(path, error)] of those without any)."""
    clusters: list[str] = []
    missing: list = []
    for path in paths:
        try:
            clusters.extend(discover.clusters(local_path(path)))
        except MetashellError as e:
            missing.append((path, e))
    return list(dict.fromkeys(clusters)), missing


def _missing_row(path: str, error: MetashellError) -> dict:
    """The report's row of a PATH that holds no metadata at all."""
    from .image_rows import UNREADABLE, problem

    row = {c: None for c in COLUMNS}
    row.update(cluster=path, state=UNREADABLE, problems=[problem(str(error))], missing=True)
    return row


def _check_out(out: str, clusters: list[str]) -> None:
    real = os.path.realpath(out)
    for c in clusters:
        base = os.path.realpath(c if os.path.isdir(c) else os.path.dirname(c) or ".")
        if real == base or real.startswith(base + os.sep):
            raise MetashellError(f"{out}: inside the input {c}; nothing is ever written there")


def _run(local: "list[str]", uris: "list[str]", out: str | None, master: str | None,
         err) -> list[dict]:
    """Run the job; the clusters table as dicts."""
    try:
        from . import frame
        from .schemas import TABLES
        from .store import clusters as store_clusters
    except ImportError as e:
        raise MetashellError(f"the fleet report needs the spark extra (pip install "
                             f"'metashell[spark]'): {e}") from None
    spark = _start(master)
    log = spark.conf.get("spark.metashell.log")
    progress = _Progress(spark, err)
    progress.start()
    keep_log = False       # only a failure of Spark's own is worth its log
    try:
        found, stores = _listed(store_clusters, spark, uris, err, bool(local))
        if out is not None:
            for table in TABLES:
                progress.label = f"writing {table}"
                frame(spark, local, found, table).write.mode("overwrite").parquet(
                    os.path.join(out, table))
            clusters = spark.read.parquet(os.path.join(out, "clusters"))
        else:
            clusters = frame(spark, local, found, "clusters")
        progress.label = "loading clusters"
        rows = report_rows(clusters) + stores
    except MetashellError:
        raise
    except Exception as e:   # a Spark failure arrives as a long Java/Python trace
        keep_log = True
        raise MetashellError(f"the Spark job failed: {_first_line(e)} (Spark's log: {log})") from None
    finally:
        progress.stop()
        spark.stop()
        if not keep_log:
            _remove(log)
    return rows


def _listed(clusters, spark, uris: "list[str]", err, any_local: bool):
    """(the clusters in the stores ``uris``, rows of the URIs that hold no
    metadata): each URI is listed once (by ``clusters``), and one without
    metadata is a warning."""
    found, missing = [], []
    for uri in uris:
        try:
            found.extend(clusters(spark, uri))
        except MetashellError as e:
            err.write(f"{PROG}: warning: {e}\n")
            missing.append(_missing_row(uri, e))
    if not found and not any_local:
        raise MetashellError(missing[0]["problems"][0]["text"])
    if uris:
        err.write(f"{PROG}: {_count(len(found), 'cluster')} in {' '.join(uris)}\n")
    return found, missing


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def report_rows(clusters) -> list[dict]:
    """The clusters table (a DataFrame) as dicts, sorted by cluster."""
    from pyspark.sql import functions as F

    # times as epoch ms: collect() would turn them into naive local datetimes
    clusters = clusters.withColumn("last_time", F.unix_millis("last_time"))
    rows = [r.asDict(recursive=True) for r in clusters.collect()]
    return sorted(rows, key=lambda r: r["cluster"])   # one per cluster: no Spark sort needed


def _start(master: str | None):
    from .local import new_log, start_spark

    log = new_log()
    try:
        return start_spark(master, app_name=PROG, log_path=log)
    except Exception as e:   # no Java, a bad master URL ...
        raise MetashellError(f"Spark could not start on {master or 'the default master'} "
                             f"(it needs Java 17 or 21): {_first_line(e)} (Spark's log: {log})"
                             ) from None


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    for line in text.splitlines():
        if "Error" in line or "Exception" in line:
            return line.strip()
    return text.splitlines()[0] if text else type(e).__name__


class _Progress(threading.Thread):
    """Finished/total tasks of the running job on stderr: twice a second on a
    terminal, else a line whenever the count moved, at most every
    :data:`QUIET_S` seconds (logs of a long job show it advancing)."""

    QUIET_S = 5.0

    def __init__(self, spark, stream):
        super().__init__(daemon=True)
        self.tracker = spark.sparkContext.statusTracker()
        self.stream = stream
        self.label = "loading clusters"
        self.tty = stream.isatty()
        self.done = threading.Event()
        self.last = None
        self.written_at = 0.0

    def run(self):
        while not self.done.wait(0.5):
            try:
                stages = [self.tracker.getStageInfo(s) for s in self.tracker.getActiveStageIds()]
            except Exception:   # the context is stopping
                return
            stages = [s for s in stages if s is not None]
            if not stages:
                continue
            done = sum(s.numCompletedTasks for s in stages)
            total = sum(s.numTasks for s in stages)
            line = f"{PROG}: {self.label}: {done}/{total} tasks"
            if self.tty:
                self.stream.write("\r" + line + "\x1b[K")
                self.stream.flush()
            elif (self.label, done, total) != self.last and (
                    time.monotonic() - self.written_at >= self.QUIET_S or done == total):
                self.stream.write(line + "\n")
                self.stream.flush()
                self.written_at = time.monotonic()
            else:
                continue
            self.last = (self.label, done, total)

    def stop(self):
        self.done.set()
        self.join()
        if self.tty and self.last is not None:
            self.stream.write("\r\x1b[K")


# -- output ----------------------------------------------------------------------------------

def _cell(row: dict, col: str) -> str:
    v = row[col]
    if col == "last_time":
        return iso_time(v) or "-"
    if col == "problems":
        return str(len(v))
    return "-" if v is None else str(v)


def _align(cell: str, width: int, column: str) -> str:
    """Numbers right-aligned (their digits line up), text left-aligned."""
    return cell.rjust(width) if column in NUMBERS else cell.ljust(width)


def total(rows: list[dict]) -> dict:
    out = {"clusters": len(rows),
           "clusters_with_problems": sum(1 for r in rows if r["problems"]),
           "clusters_never_started": sum(1 for r in rows if r["state"] == "never started")}
    for col in TOTALS:
        out[col] = sum(r[col] or 0 for r in rows)
    return out


def render(rows: list[dict], output: str) -> str:
    if output == "json":
        return json.dumps({"clusters": [_json_row(r) for r in rows], "total": total(rows)},
                          separators=(",", ":")) + "\n"
    table = [HEADINGS] + [tuple(_cell(r, c) for c in COLUMNS) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(_align(cell, w, col) for cell, w, col in zip(line, widths, COLUMNS)
                       ).rstrip() for line in table]
    t = total(rows)
    lines.append(f"fleet: {_count(t['clusters'], 'cluster')} "
                 f"({t['clusters_with_problems']} with problems, "
                 f"{t['clusters_never_started']} never started), "
                 f"{t['brokers']} brokers ({t['fenced_brokers']} fenced), {t['controllers']} "
                 f"controllers, {t['topics']} topics, {t['partitions']} partitions, "
                 f"{t['under_replicated']} under-replicated, {t['offline']} offline, "
                 f"{t['under_min_isr']} under min ISR")
    return "\n".join(lines) + "\n"


def _json_row(r: dict) -> dict:
    return {**{k: v for k, v in r.items() if k != "missing"}, "last_time": iso_time(r["last_time"])}


def main(argv: "list[str] | None" = None) -> int:
    return cli.main(args=argv, prog_name=PROG)


if __name__ == "__main__":
    main()
