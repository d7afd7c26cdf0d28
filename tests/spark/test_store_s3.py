"""The fleet read from a real S3 server (S3Proxy on loopback,
:mod:`tests.support.s3proxy`) through Spark's s3a: every table of every
cluster equals the local read, ``__cluster_metadata-0/`` is found, globs work
on ``s3a://`` URIs; ``kafka-metadata-fleet`` reports from S3, and a missing
bucket or a dead endpoint is one line naming the URI and the cause, exit 1,
in seconds. The store is configured only through ``spark.hadoop.*``
(:mod:`tests.support.s3a`). One server and one child driver (with s3a on its
class path) serve the whole module; the CLI runs are children too."""

from __future__ import annotations

import time

import pytest

from metashell.spark.schemas import TABLES
from tests.support import s3a, s3proxy
from tests.support.fleet_rows import by_name, comparable
from tests.support.hadoop_jars import require_java_and_maven, s3a_jars
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.spark import require_spark

BUCKET = "backups"
FLEET = f"s3a://{BUCKET}/fleet"
GLOB = f"{FLEET}/kafka-4.*"
#: a dead endpoint or missing bucket must be reported well within this (Spark's start included)
FAIL_WITHIN_S = 120


def _fleet_folders() -> dict:
    """{name in the store: local cluster folder}: the example and every corpus
    cluster, and the example again below a folder whose name starts with a
    dot (as storage snapshots are kept), which Spark's own listing skips."""
    from metashell.spark import discover

    folders = {"example": EXAMPLE}
    if CORPORA.is_dir():
        for c in discover.clusters(str(CORPORA)):
            folders[c[len(str(CORPORA)) + 1:].replace("/", "--")] = c
    folders[".snapshot/example"] = EXAMPLE
    return folders


@pytest.fixture(scope="module")
def s3():
    """An S3 server with the fleet in ``s3://backups/fleet/<name>/``."""
    require_spark()
    require_java_and_maven()
    began = time.monotonic()
    s3a_jars()
    s3proxy.jars()
    ready_s = time.monotonic() - began
    server = s3proxy.S3Proxy().start()
    try:
        server.make_bucket(BUCKET)
        uploading = time.monotonic()
        for name, local in _fleet_folders().items():
            server.upload(local, BUCKET, f"fleet/{name}")
        print(f"\nS3: s3a's and S3Proxy's jars ready in {ready_s:.1f} s, S3Proxy started in "
              f"{server.started_s:.1f} s, fleet uploaded in {time.monotonic() - uploading:.1f} s")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def answer(s3):
    """Every table read from ``FLEET`` and from the local folders (one job
    each), and the store's listings, by one child driver."""
    began = time.monotonic()
    got = s3a.reads(s3a.settings(s3.endpoint), {
        "tables": list(TABLES),
        "paths": [FLEET] + sorted({str(p) for p in _fleet_folders().values()}),
        "listings": [FLEET, GLOB]})
    print(f"\nS3: every table read from S3 and locally in {time.monotonic() - began:.1f} s "
          f"(the reads: {sum(got['seconds'].values()):.1f} s)")
    return got


@pytest.mark.parametrize("table", TABLES)
def test_table_from_s3_equals_local(answer, table):
    folders = _fleet_folders()
    rows = answer["tables"][table]
    store = [r for r in rows if r["cluster"].startswith(f"{FLEET}/")]
    local = [r for r in rows if not r["cluster"].startswith(f"{FLEET}/")]
    got = by_name(store, {f"{FLEET}/{n}": n for n in folders})
    want = by_name(local, {str(p): str(p) for p in folders.values()})
    if table == "clusters":
        assert set(got) == set(folders)
        assert [r["state"] for r in store if r["cluster"] == f"{FLEET}/example"] == ["loaded"]
    for name, local_folder in folders.items():
        assert comparable(table, got.get(name, [])) == comparable(
            table, want.get(str(local_folder), [])), name


def test_clusters_found_below_underscore_and_dot_folders(answer):
    found = answer["listings"][FLEET]
    assert sorted(c["uri"] for c in found) == sorted(f"{FLEET}/{n}" for n in _fleet_folders())
    example = next(c for c in found if c["uri"] == f"{FLEET}/example")
    assert any(r.startswith("example/__cluster_metadata-0/") and r.endswith(".log")
               for r in example["files"])
    assert "example/meta.properties" in example["files"]
    dotted = next(c for c in found if c["uri"] == f"{FLEET}/.snapshot/example")
    assert sorted(dotted["files"]) == sorted(example["files"])


def test_glob_on_an_s3a_uri(answer):
    want = sorted(f"{FLEET}/{n}" for n in _fleet_folders() if n.startswith("kafka-4."))
    assert want, "the corpora hold Kafka 4 clusters"
    assert sorted(c["uri"] for c in answer["listings"][GLOB]) == want


def test_fleet_report_from_s3_with_a_missing_bucket_beside(s3):
    example, missing = f"{FLEET}/example", "s3a://no-such-bucket/fleet"
    proc = s3a.fleet(s3a.settings(s3.endpoint), example, missing)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].split()[:3] == [example, "bjaYWdoNRVibjFQf9j24sQ", "loaded"]
    assert lines[2].split()[:3] == [missing, "-", "unreadable"]
    assert lines[3].startswith("fleet: 2 clusters (1 with problems, 0 never started)")
    assert f"kafka-metadata-fleet: warning: {missing}: " in proc.stderr
    assert "Traceback" not in proc.stderr


def _one_line_failure(endpoint: str, uri: str, tmp) -> str:
    """``kafka-metadata-fleet URI`` against ``endpoint``, which must fail as
    one line naming ``uri``, exit 1, within the bound, leaving nothing in its
    TMPDIR ``tmp``; that line, lower-cased."""
    began = time.monotonic()
    proc = s3a.fleet(s3a.settings(endpoint), uri, tmp=tmp)
    took = time.monotonic() - began
    assert not list(tmp.glob("metashell-*"))   # Spark's log goes with a clear error
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"kafka-metadata-fleet: {uri}: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert took < FAIL_WITHIN_S, took
    return last.lower()


def test_missing_bucket_is_one_line_and_exit_1_in_bounded_time(s3, tmp_path):
    last = _one_line_failure(s3.endpoint, "s3a://no-such-bucket/fleet", tmp_path)
    assert "bucket" in last and "not exist" in last, last


def test_wrong_endpoint_is_one_line_and_exit_1_in_bounded_time(s3, tmp_path):
    dead = f"http://127.0.0.1:{s3proxy.free_port()}"   # nothing listens there once it is free
    last = _one_line_failure(dead, FLEET, tmp_path)
    assert "refused" in last or "unable to execute http request" in last, last
