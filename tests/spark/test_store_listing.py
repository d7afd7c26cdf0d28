"""Clusters found in a store's listing by names alone (no Spark, no store):
the same rules as for local folders, ``__cluster_metadata-0/`` included."""

from __future__ import annotations

from metashell.spark.discover import store_clusters
from metashell.spark.hadoop import StoreFile, is_uri, local_path

ROOT = "s3a://bucket/fleet"
SEG = "00000000000000000000.log"
SNAP = "00000000000000000100-0000000001.checkpoint"


def _files(*rels: str) -> list:
    return [StoreFile(f"{ROOT}/{rel}", 10 + i) for i, rel in enumerate(rels)]


def test_log_dirs_partition_dirs_and_lone_bootstraps_are_clusters():
    listing = _files(
        "dc1/a/meta.properties", f"dc1/a/__cluster_metadata-0/{SEG}",
        f"dc1/a/__cluster_metadata-0/{SNAP}", "dc1/a/__cluster_metadata-0/quorum-state",
        "dc1/a/orders-0/00000000000000000000.log",           # another topic: not read
        f"dc1/segments-only/{SEG}",                           # a folder of segments
        "dc2/fresh/bootstrap.checkpoint", "dc2/fresh/meta.properties",
        "notes/readme.txt", "notes/server.log")
    found = store_clusters(ROOT, listing)
    assert [c.uri for c in found] == [f"{ROOT}/dc1/a", f"{ROOT}/dc1/segments-only",
                                      f"{ROOT}/dc2/fresh"]
    a = found[0]
    assert [rel for _, rel in a.files] == [
        f"a/__cluster_metadata-0/{SEG}", f"a/__cluster_metadata-0/{SNAP}",
        "a/__cluster_metadata-0/quorum-state", "a/meta.properties"]
    assert a.size == sum(f.size for f, _ in a.files)
    assert [rel for _, rel in found[1].files] == [f"segments-only/{SEG}"]


def test_a_cluster_is_not_searched_again_and_a_file_is_its_own_cluster():
    nested = store_clusters(ROOT, _files(f"x/__cluster_metadata-0/{SEG}",
                                         f"x/backup/__cluster_metadata-0/{SEG}"))
    assert [c.uri for c in nested] == [f"{ROOT}/x"]
    lone = StoreFile(f"{ROOT}/x/__cluster_metadata-0/{SEG}", 5)
    [cluster] = store_clusters(lone.uri, [lone])
    assert cluster.uri == lone.uri and [rel for _, rel in cluster.files] == [SEG]


def test_no_metadata_no_clusters():
    assert store_clusters(ROOT, _files("a/readme.txt", "b/server.log")) == []


def test_uris_and_local_paths():
    assert is_uri("hdfs://nn:8020/x") and is_uri("s3a://b/x") and is_uri("gs://b/x")
    assert not is_uri("/backups/x") and not is_uri("file:///backups/x")
    assert local_path("file:///backups/x") == "/backups/x" and local_path("/a") == "/a"
