"""A fleet folder with damaged clusters beside good ones: the job finishes,
each damaged cluster reports its problem (file, byte, offset) in
``clusters.problems``, the good ones are exact, and nothing in the input
changes. Then ``kafka-metadata-fleet`` end to end (a real Spark in a child
process) and its one-line errors, and one run on ``local-cluster`` (separate
executor processes: what a real cluster does to pickling and imports)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from metashell.kraft.batch import BatchScanner
from metashell.spark.fleet import cli, render, report_rows
from tests.support.paths import EXAMPLE, REPO
from tests.support.spark import as_tree, by_cluster, from_tree, read_table, require_spark, shell_json

SEGMENT = "__cluster_metadata-0/00000000000000000000.log"


def _snapshot_of(folder) -> dict:
    """Every path below ``folder`` with its size, mtime and content hash."""
    out = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(top, name)
            st = os.stat(p)
            digest = hashlib.sha256(open(p, "rb").read()).hexdigest() if name in files else None
            out[p] = (st.st_size, st.st_mtime_ns, digest)
    return out


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """good-a, good-b: the example; damaged: one log batch with a wrong CRC;
    unreadable: a log dir whose only segment is garbage; fresh: a node
    formatted but never started (bootstrap.checkpoint, meta.properties)."""
    root = tmp_path_factory.mktemp("fleet")
    for name in ("good-a", "damaged", "nested/good-b"):
        shutil.copytree(EXAMPLE, root / name)
    seg = root / "damaged" / SEGMENT
    data = bytearray(seg.read_bytes())
    headers = list(BatchScanner(bytes(data), seg))
    victim = headers[-3]   # after the snapshot's end: the shell must skip it
    data[victim.position + 70] ^= 0xFF
    seg.write_bytes(bytes(data))
    (root / "unreadable" / "__cluster_metadata-0").mkdir(parents=True)
    (root / "unreadable" / SEGMENT).write_bytes(b"\x00\x00\x00\x00\x00\x00\x00\x07" + b"\x7f" * 200)
    (root / "notes.txt").write_text("not metadata\n")
    (root / "fresh").mkdir()
    for name in ("bootstrap.checkpoint", "meta.properties"):
        shutil.copy(EXAMPLE / name, root / "fresh" / name)
    return root, victim


def test_damaged_clusters_do_not_fail_the_job(spark, fleet):
    root, victim = fleet
    before = _snapshot_of(root)
    clusters = {r["cluster"]: r for r in read_table(spark, "clusters", str(root))}
    partitions = by_cluster(read_table(spark, "partitions", str(root)))
    assert sorted(clusters) == [str(root / n) for n in ("damaged", "fresh", "good-a",
                                                        "nested/good-b", "unreadable")]
    fresh = clusters[str(root / "fresh")]
    assert (fresh["state"], fresh["problems"], fresh["brokers"]) == ("never started", [], 0)
    assert any("never started" in n for n in fresh["notes"])
    assert fresh["metadata_release"] is not None
    assert clusters[str(root / "unreadable")]["state"] == "unreadable"
    assert {clusters[str(root / n)]["state"] for n in ("good-a", "damaged")} == {"loaded"}
    damaged = clusters[str(root / "damaged")]
    assert [(p["file"].endswith(SEGMENT.split("/")[1]), p["byte"], p["offset"])
            for p in damaged["problems"]] == [(True, victim.position, victim.base_offset)]
    assert "CRC" in damaged["problems"][0]["message"]
    unreadable = clusters[str(root / "unreadable")]
    assert unreadable["partitions"] is None and len(unreadable["problems"]) == 1
    # random bytes are not a Kafka file at all: said so, with no byte or offset that means nothing
    assert "not a Kafka log segment or snapshot" in unreadable["problems"][0]["message"]
    assert unreadable["problems"][0]["offset"] is None and "unreadable" not in partitions
    for name in ("good-a", "nested/good-b", "damaged"):   # the damaged one as the shell sees it
        path = str(root / name)
        tree = shell_json(path, "tree", "/")
        assert as_tree("partitions", partitions[path]) == from_tree("partitions", tree)
        assert not clusters[path]["problems"] or name == "damaged"
    # the history tables too: the damaged batch is skipped, the unreadable log has no rows
    records = by_cluster(read_table(spark, "records", str(root)))
    assert "unreadable" not in {os.path.basename(c) for c in records}
    good = {r["offset"] for r in records[str(root / "good-a")]}
    lost = good - {r["offset"] for r in records[str(root / "damaged")]}
    assert min(lost) == victim.base_offset and max(lost) == victim.base_offset + victim.last_offset_delta
    changes = {c: {r["offset"] for r in rows}
               for c, rows in by_cluster(read_table(spark, "partition_changes", str(root))).items()}
    assert changes[str(root / "good-a")] == changes[str(root / "nested/good-b")]
    assert changes[str(root / "damaged")] == changes[str(root / "good-a")] - lost
    assert _snapshot_of(root) == before   # nothing written, locked or deleted


def test_no_metadata_is_a_clear_error(spark, tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(Exception) as e:
        read_table(spark, "clusters", str(tmp_path))
    assert f"{tmp_path}: no KRaft metadata files in this directory" in str(e.value)


def test_unknown_table_is_a_clear_error(spark):
    with pytest.raises(Exception) as e:
        read_table(spark, "nope", str(EXAMPLE))
    assert "kraft-metadata: unknown table 'nope'" in str(e.value)


# -- kafka-metadata-fleet ------------------------------------------------------------------

@pytest.mark.parametrize("args,message", [
    (["/no/such/place"], "kafka-metadata-fleet: /no/such/place: no such file or directory\n"),
    (["/no/such/*"], "kafka-metadata-fleet: /no/such/*: no file or directory matches this pattern\n"),
    (["/no/such/place", "/no/such/*"],
     "kafka-metadata-fleet: /no/such/place: no such file or directory\n"),
])
def test_fleet_errors_before_starting_spark(args, message):
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.stderr if hasattr(result, "stderr") else result.output) == (1, message)


def test_fleet_refuses_to_write_into_its_input(fleet):
    root, _ = fleet
    result = CliRunner().invoke(cli, [str(root), "--out", str(root / "good-a" / "out")])
    assert result.exit_code == 1
    assert "nothing is ever written there" in result.output
    assert not (root / "good-a" / "out").exists()


def test_fleet_usage_error():
    assert CliRunner().invoke(cli, [str(EXAMPLE), "-o", "yaml"]).exit_code == 2


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def test_fleet_report_end_to_end(spark, fleet, tmp_path):
    require_spark()
    root, _ = fleet
    out = tmp_path / "out"
    # the run's own temporary folder: other Spark runs on the machine leave theirs in /tmp
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run([sys.executable, "-m", "metashell.spark.fleet", str(root),
                           str(root / "good-a"), str(root / "zz-missing"), "--master",
                           "local[2]", "--out", str(out)],
                          capture_output=True, text=True, timeout=600,
                          env=dict(_child_env(), TMPDIR=str(tmp)))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["CLUSTER", "CLUSTER", "ID"]
    assert [line.split()[0] for line in lines[1:6]] == [
        str(root / n) for n in ("damaged", "fresh", "good-a", "nested/good-b", "unreadable")]
    assert lines[2].split()[2:4] == ["never", "started"] and lines[2].split()[-1] == "0"
    assert lines[3].split() == [str(root / "good-a"), "bjaYWdoNRVibjFQf9j24sQ", "loaded", "4.2-IV1",
                                "4", "1", "3", "6", "74", "74", "1", "2",
                                "2026-03-03T07:50:02.470Z", "0"]
    # a PATH without metadata among several is a row with its problem, and a warning
    assert lines[6].split()[:3] == [str(root / "zz-missing"), "-", "unreadable"]
    assert lines[7] == ("fleet: 6 clusters (3 with problems, 1 never started), 12 brokers (3 fenced), "
                        "9 controllers, 18 topics, 222 partitions, 222 under-replicated, "
                        "3 offline, 6 under min ISR")
    # numbers right-aligned: a column's last digits line up under its heading's end
    end = lines[0].index("PARTITIONS") + len("PARTITIONS")
    assert [line[end - 2:end] for line in lines[2:4]] == [" 0", "74"]
    # Spark's own output stays off the terminal; our progress and problems are there
    assert "WARN" not in proc.stderr and "log4j" not in proc.stderr
    assert "kafka-metadata-fleet: 5 clusters below" in proc.stderr
    assert f"kafka-metadata-fleet: warning: {root / 'zz-missing'}: no such file" in proc.stderr
    # no file of the run is left behind
    assert not list(tmp.glob("metashell-*"))
    assert f"{root / 'damaged'}: " in proc.stderr
    from metashell.spark.schemas import TABLES
    assert sorted(p.name for p in out.iterdir()) == sorted(TABLES)
    assert all(list((out / t).glob("*.parquet")) for t in ("clusters", "partitions", "records"))
    # -o json: the same report for scripts
    report = json.loads(render(report_rows(spark.read.parquet(str(out / "clusters"))), "json"))
    assert report["total"] == {"clusters": 5, "clusters_with_problems": 2,
                               "clusters_never_started": 1, "brokers": 12,
                               "fenced_brokers": 3, "controllers": 9, "topics": 18,
                               "partitions": 222, "under_replicated": 222, "offline": 3,
                               "under_min_isr": 6}
    assert report["clusters"][2]["last_time"] == "2026-03-03T07:50:02.470Z"


LOCAL_CLUSTER_SCRIPT = """
import json, sys
from metashell.spark import register
from metashell.spark.local import start_spark
spark = start_spark("local-cluster[2,1,1024]")
register(spark)
df = spark.read.format("kraft-metadata").option("table", "partitions").load(sys.argv[1])
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
rows = [r.asDict(recursive=True) for r in df.drop("last_change_time").collect()]
print(json.dumps({"executors": executors, "rows": rows}))
spark.stop()
"""


def test_local_cluster_with_separate_executors(spark):
    """The same rows from executors in their own JVMs and Python workers."""
    proc = subprocess.run([sys.executable, "-c", LOCAL_CLUSTER_SCRIPT, str(EXAMPLE)],
                          capture_output=True, text=True, timeout=600, env=_child_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["executors"] == 2
    local = read_table(spark, "partitions", str(EXAMPLE))
    for r in local:
        del r["last_change_time"]
    key = lambda r: (r["topic"], r["partition"])  # noqa: E731
    assert sorted(result["rows"], key=key) == sorted(local, key=key)


def test_metashell_works_without_the_spark_extra():
    """The shell never imports pyspark or pyarrow; the fleet report says what is missing."""
    code = ("import sys; sys.modules['pyspark'] = None; sys.modules['pyarrow'] = None\n"
            "from metashell.cli import main\n"
            "status = main(['-s', sys.argv[1], 'ls', '/brokers'], standalone_mode=False)\n"
            "from metashell.spark.fleet import main as fleet\n"
            "fleet([sys.argv[1]])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(EXAMPLE)], capture_output=True,
                          text=True, timeout=120, env=_child_env())
    assert proc.stdout.split() == ["1", "2", "3", "4"]
    assert proc.returncode == 1
    assert proc.stderr.startswith("kafka-metadata-fleet: 1 cluster below")
    assert proc.stderr.splitlines()[-1].startswith(
        "kafka-metadata-fleet: the fleet report needs the spark extra (pip install 'metashell[spark]')")


def test_clusters_are_read_largest_first(tmp_path):
    """Spark starts a source's tasks in partition order: the biggest clusters
    go first so that no long task is left for the end (no Spark needed)."""
    from metashell.spark.source import KraftMetadataReader, Options
    for name in ("a-small", "b-big", "c-mid"):
        shutil.copytree(EXAMPLE, tmp_path / name)
    # a file the loader ignores makes a cluster bigger on disk
    (tmp_path / "c-mid" / "notes.txt").write_bytes(b"x" * 10)
    (tmp_path / "b-big" / "notes.txt").write_bytes(b"x" * 1000)
    reader = KraftMetadataReader([str(tmp_path)], Options.parse({"table": "clusters"}), None)
    assert [os.path.basename(p.cluster) for p in reader.partitions()] == ["b-big", "c-mid", "a-small"]
