"""The fleet tables read from a real HDFS (a NameNode and two DataNodes on
loopback) through Spark's own Hadoop client equal the tables of the same
clusters read from local paths, and their image tables equal what the
shell shows of the local copies; a folder without read permission and a
missing path are one clear error naming the URI."""

from __future__ import annotations

import time

import pytest

from tests.support import hdfs
from tests.support.fleet_rows import GENERATED, by_name, comparable, fleet_folders
from tests.support.hadoop_jars import require_java_and_maven
from tests.support.paths import EXAMPLE
from tests.support.shell_tree import IMAGE, check_against_the_shell
from tests.support.spark import by_cluster, read_table, require_spark

from metashell.errors import InputError
from metashell.spark.schemas import TABLES


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    """{name in the store: local cluster folder} (:func:`.fleet_rows.fleet_folders`)."""
    return fleet_folders(tmp_path_factory.mktemp("generated"))


@pytest.fixture(scope="module")
def store(spark, folders):
    require_spark()
    require_java_and_maven()
    began = time.monotonic()
    server = hdfs.MiniHdfs().start()
    try:
        for name, local in folders.items():
            hdfs.upload(spark, local, f"{server.uri}/fleet/{name}")
        print(f"\nHDFS: started in {server.started_s:.1f} s, fleet uploaded in "
              f"{time.monotonic() - began - server.started_s:.1f} s")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def from_hdfs(spark, store):
    """The rows of a table of the whole fleet read from HDFS, each table
    read once (when first asked for)."""
    from metashell.spark import read

    read_tables: dict = {}

    def rows(table: str) -> "list[dict]":
        if table not in read_tables:
            df = _millis(read(spark, f"{store.uri}/fleet", table=table))
            read_tables[table] = [r.asDict(recursive=True) for r in df.collect()]
        return read_tables[table]
    return rows


@pytest.mark.parametrize("table", TABLES)
def test_tables_from_hdfs_equal_local(spark, store, folders, from_hdfs, table):
    got = by_name(from_hdfs(table), {f"{store.uri}/fleet/{n}": n for n in folders})
    local = read_table(spark, table, [str(p) for p in folders.values()])
    want = by_name(local, {str(p): n for n, p in folders.items()})
    if table == "clusters":
        assert set(got) == set(folders)
        for name in GENERATED:   # read whole, as the local copy is
            (row,) = got[name]
            assert row["state"] == "loaded" and not row["problems"], row
    assert set(got) == set(want)
    for name in want:
        assert comparable(table, got[name]) == comparable(table, want[name]), name


def test_image_tables_from_hdfs_equal_the_shells_tree(store, folders, from_hdfs):
    """Every cluster of the fleet, as read from HDFS (the tables were read for
    the test above; the whole corpus costs the shell about two seconds)."""
    tables = {t: by_cluster(from_hdfs(t)) for t in ("clusters",) + IMAGE}
    for name, local in folders.items():
        check_against_the_shell(tables, f"{store.uri}/fleet/{name}", local)


def _millis(df):
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    for field in df.schema.fields:
        if isinstance(field.dataType, TimestampType):
            df = df.withColumn(field.name, F.unix_millis(field.name))
    return df


def test_clusters_found_below_underscore_folders_and_by_glob(spark, store, folders):
    from metashell.spark.store import clusters

    found = clusters(spark, f"{store.uri}/fleet")
    assert len(found) == len(folders)
    example = next(c for c in found if c.uri.endswith("/fleet/example"))
    rels = [rel for _, rel in example.files]
    assert any(r.startswith("example/__cluster_metadata-0/") and r.endswith(".log") for r in rels)
    assert "example/meta.properties" in rels
    globbed = clusters(spark, f"{store.uri}/fleet/kafka-4.*")
    assert globbed and all("/fleet/kafka-4." in c.uri for c in globbed)


def test_clusters_table_names_store_files(spark, store):
    from metashell.spark import read

    rows = read(spark, f"{store.uri}/fleet/example", table="clusters").collect()
    assert len(rows) == 1
    row = rows[0]
    assert row["cluster"] == f"{store.uri}/fleet/example"
    assert row["segments"] and all(s.startswith(f"{store.uri}/fleet/example/") or "/" not in s
                                   for s in row["segments"])


def test_missing_path_is_one_line_naming_it(spark, store):
    from metashell.spark import read

    with pytest.raises(InputError) as e:
        read(spark, f"{store.uri}/no-such-fleet", table="clusters")
    assert str(e.value).startswith(f"{store.uri}/no-such-fleet: no such file or directory")
    assert "\n" not in str(e.value)


def test_folder_without_read_permission_is_one_line(spark, store):
    from metashell.spark import read

    fs = hdfs.filesystem(spark, store.uri, "hdfs")
    jvm = spark.sparkContext._jvm
    locked = f"{store.uri}/locked"
    try:
        hdfs.upload(spark, EXAMPLE, f"{locked}/example")
        fs.setPermission(jvm.org.apache.hadoop.fs.Path(locked),
                         jvm.org.apache.hadoop.fs.permission.FsPermission(0o700))
    finally:
        fs.close()
    with pytest.raises(InputError) as e:
        read(spark, locked, table="clusters")
    text = str(e.value)
    assert text.startswith(f"{locked}: ") and "Permission denied" in text, text
    assert "\n" not in text


def _fleet_cli(*paths: str):
    import os
    import subprocess
    import sys

    from tests.support.paths import REPO

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return subprocess.run([sys.executable, "-m", "metashell.spark.fleet", *paths, "--master",
                           "local[1]"], capture_output=True, text=True, timeout=600, env=env)


def test_fleet_report_from_hdfs_with_a_path_without_metadata(spark, store):
    example, missing = f"{store.uri}/fleet/example", f"{store.uri}/fleet/missing"
    proc = _fleet_cli(example, missing)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].split()[:3] == [example, "bjaYWdoNRVibjFQf9j24sQ", "loaded"]
    assert lines[2].split()[:3] == [missing, "-", "unreadable"]
    assert lines[3].startswith("fleet: 2 clusters (1 with problems, 0 never started)")
    assert f"kafka-metadata-fleet: warning: {missing}: no such file or directory" in proc.stderr
    assert "kafka-metadata-fleet: 1 cluster in " in proc.stderr


def test_fleet_report_of_nothing_readable_is_one_line_and_exit_1(spark, store):
    proc = _fleet_cli(f"{store.uri}/no-such-fleet")
    assert proc.returncode == 1
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last == f"kafka-metadata-fleet: {store.uri}/no-such-fleet: no such file or directory"
