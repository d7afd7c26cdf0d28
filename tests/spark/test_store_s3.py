"""The fleet read from a real S3 server (S3Proxy on loopback,
:mod:`tests.support.s3proxy`) through Spark's s3a: every table of every
cluster equals the local read and, for the image tables, what the shell shows
of the local copy; ``__cluster_metadata-0/`` is found, globs work on
``s3a://`` URIs; ``kafka-metadata-fleet`` reports from S3, and a missing
bucket, a bucket the credentials may not read or a dead endpoint is one
line naming the URI and the cause, exit 1, in seconds (a wrong secret is
the same error, checked in the reads' session). The
store is configured only through ``spark.hadoop.*`` (:mod:`tests.support.s3a`).
One server and one child driver (with s3a on its class path) serve the
whole module; the CLI runs are children too.

S3Proxy has no bucket policies, so "a prefix without read permission" is a
whole bucket owned by another identity (:data:`DENIED`), which S3Proxy
refuses (403) to the identity the reads use."""

from __future__ import annotations

import time

import pytest

from metashell.spark.schemas import TABLES
from tests.support import s3a, s3proxy
from tests.support.fleet_rows import GENERATED, by_name, comparable, fleet_folders
from tests.support.hadoop_jars import require_java_and_maven, s3a_jars
from tests.support.paths import EXAMPLE
from tests.support.ports import refusing_ports
from tests.support.shell_tree import check_against_the_shell
from tests.support.spark import by_cluster, require_spark

BUCKET = "backups"
FLEET = f"s3a://{BUCKET}/fleet"
GLOB = f"{FLEET}/kafka-4.*"
#: a bucket of another identity, holding the example: refused to the reads' identity
OPERATIONS = s3proxy.Identity("operations", "operations-secret", ("restricted",))
DENIED = "s3a://restricted/fleet"
#: the answer's driver signs its requests to that bucket with this wrong secret
WRONG_SECRET = s3proxy.Identity(OPERATIONS.access_key, "not-the-secret")
#: a refused or unreachable store must be reported well within this (Spark's start included)
FAIL_WITHIN_S = 120


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    """{name in the store: local cluster folder}: the fleet
    (:func:`.fleet_rows.fleet_folders`), and the example again below a folder
    whose name starts with a dot (as storage snapshots are kept), which
    Spark's own listing skips."""
    return {**fleet_folders(tmp_path_factory.mktemp("generated")), ".snapshot/example": EXAMPLE}


@pytest.fixture(scope="module")
def s3(folders):
    """An S3 server with the fleet in ``s3://backups/fleet/<name>/`` and the
    example in :data:`DENIED`."""
    require_spark()
    require_java_and_maven()
    began = time.monotonic()
    s3a_jars()
    s3proxy.jars()
    ready_s = time.monotonic() - began
    server = s3proxy.S3Proxy((s3proxy.USER, OPERATIONS)).start()
    try:
        server.make_bucket(BUCKET)
        uploading = time.monotonic()
        for name, local in folders.items():
            server.upload(local, BUCKET, f"fleet/{name}")
        server.make_bucket("restricted", OPERATIONS)
        server.upload(EXAMPLE, "restricted", "fleet/example", OPERATIONS)
        print(f"\nS3: s3a's and S3Proxy's jars ready in {ready_s:.1f} s, S3Proxy started in "
              f"{server.started_s:.1f} s, fleet uploaded in {time.monotonic() - uploading:.1f} s")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def answer(s3, folders):
    """Every table read from ``FLEET`` and from the local folders (one job
    each), the store's listings, and the listing of :data:`DENIED` with a
    wrong secret (s3a's settings for that bucket alone), by one child driver."""
    began = time.monotonic()
    conf = {**s3a.settings(s3.endpoint), **s3a.bucket_settings("restricted", WRONG_SECRET)}
    got = s3a.reads(conf, {
        "tables": list(TABLES),
        "paths": [FLEET] + sorted({str(p) for p in folders.values()}),
        "listings": [FLEET, GLOB], "refusals": [DENIED]})
    print(f"\nS3: every table read from S3 and locally in {time.monotonic() - began:.1f} s "
          f"(the reads: {sum(got['seconds'].values()):.1f} s)")
    return got


@pytest.mark.parametrize("table", TABLES)
def test_table_from_s3_equals_local(answer, folders, table):
    rows = answer["tables"][table]
    store = [r for r in rows if r["cluster"].startswith(f"{FLEET}/")]
    local = [r for r in rows if not r["cluster"].startswith(f"{FLEET}/")]
    got = by_name(store, {f"{FLEET}/{n}": n for n in folders})
    want = by_name(local, {str(p): str(p) for p in folders.values()})
    if table == "clusters":
        assert set(got) == set(folders)
        assert [r["state"] for r in store if r["cluster"] == f"{FLEET}/example"] == ["loaded"]
        for name in GENERATED:   # read whole, as the local copy is
            (row,) = got[name]
            assert row["state"] == "loaded" and not row["problems"], row
    for name, local_folder in folders.items():
        assert comparable(table, got.get(name, [])) == comparable(
            table, want.get(str(local_folder), [])), name


def test_image_tables_from_s3_equal_the_shells_tree(answer, folders):
    """Every cluster of the fleet, as read from S3: the whole corpus costs the
    shell about two seconds."""
    tables = {t: by_cluster(rows) for t, rows in answer["tables"].items()}
    for name, local in folders.items():
        check_against_the_shell(tables, f"{FLEET}/{name}", local)


def test_clusters_found_below_underscore_and_dot_folders(answer, folders):
    found = answer["listings"][FLEET]
    assert sorted(c["uri"] for c in found) == sorted(f"{FLEET}/{n}" for n in folders)
    example = next(c for c in found if c["uri"] == f"{FLEET}/example")
    assert any(r.startswith("example/__cluster_metadata-0/") and r.endswith(".log")
               for r in example["files"])
    assert "example/meta.properties" in example["files"]
    dotted = next(c for c in found if c["uri"] == f"{FLEET}/.snapshot/example")
    assert sorted(dotted["files"]) == sorted(example["files"])


def test_glob_on_an_s3a_uri(answer, folders):
    want = sorted(f"{FLEET}/{n}" for n in folders if n.startswith("kafka-4."))
    assert want, "the corpora hold Kafka 4 clusters"
    assert sorted(c["uri"] for c in answer["listings"][GLOB]) == want


def test_fleet_report_from_s3_with_a_missing_and_a_denied_bucket_beside(s3):
    example, missing = f"{FLEET}/example", "s3a://no-such-bucket/fleet"
    proc = s3a.fleet(s3a.settings(s3.endpoint), example, missing, DENIED)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].split()[:3] == [example, "bjaYWdoNRVibjFQf9j24sQ", "loaded"]
    assert lines[2].split()[:3] == [missing, "-", "unreadable"]
    assert lines[3].split()[:3] == [DENIED, "-", "unreadable"]
    assert lines[4].startswith("fleet: 3 clusters (2 with problems, 0 never started)")
    assert f"kafka-metadata-fleet: warning: {missing}: " in proc.stderr
    assert f"kafka-metadata-fleet: warning: {DENIED}: access denied: S3 answered 403 " in (
        proc.stderr)
    assert "Traceback" not in proc.stderr


def _one_line_failure(conf: dict, uri: str, tmp) -> str:
    """``kafka-metadata-fleet URI`` with the s3a settings ``conf``, which must
    fail as one line naming ``uri``, exit 1, within the bound, leaving nothing
    in its TMPDIR ``tmp``; that line, lower-cased."""
    began = time.monotonic()
    proc = s3a.fleet(conf, uri, tmp=tmp)
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
    last = _one_line_failure(s3a.settings(s3.endpoint), "s3a://no-such-bucket/fleet", tmp_path)
    assert "bucket" in last and "not exist" in last, last


def test_denied_bucket_is_one_line_and_exit_1_in_bounded_time(s3, tmp_path):
    last = _one_line_failure(s3a.settings(s3.endpoint), DENIED, tmp_path)
    assert last == (f"kafka-metadata-fleet: {DENIED}: access denied: s3 answered 403 forbidden "
                    "to getfilestatus: the credentials are wrong or not allowed to read it"), last


def test_wrong_secret_is_one_line_naming_the_uri(answer):
    """The same session reads ``FLEET`` with good credentials and is refused
    :data:`DENIED`, whose owner's key it signs with a wrong secret."""
    said = answer["refusals"][DENIED]
    assert said is not None, "a wrong secret was taken"
    assert said.startswith(f"{DENIED}: access denied: S3 answered 403 "), said
    assert "\n" not in said


def test_wrong_endpoint_is_one_line_and_exit_1_in_bounded_time(s3, tmp_path):
    with refusing_ports() as (port,):
        last = _one_line_failure(s3a.settings(f"http://127.0.0.1:{port}"), FLEET, tmp_path)
    assert "refused" in last or "unable to execute http request" in last, last
