"""Tables of the clusters in a store (``hdfs://``, ``s3a://``, ``gs://``, ...).

Python tasks have no JVM, so they cannot open a Hadoop filesystem: the
bytes are read by Spark's own ``binaryFile`` source (the JVM side of each
task, with the session's Hadoop configuration) and handed to Python as Arrow.
The driver lists the store once (:mod:`.hadoop`) and names every file it
needs explicitly, so Spark's listing never has to look into
``__cluster_metadata-0/`` (which it would skip: its name starts with ``_``).
The files are grouped by cluster (``groupBy(cluster).applyInArrow``); the
task lays its cluster's files out in a private temporary folder, loads them
with the shell's own code (:func:`.source.cluster_batches`), yields the rows as
Arrow batches and removes the folder. Paths of that folder in the rows (the
clusters table's files, problems and notes) are written back as the store's
URIs. docs/architecture.md "Fleets in a store" says why this design.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from typing import Iterator, Tuple

import pyarrow as pa

from ..errors import InputError
from . import discover, hadoop
from .arrow import record_batches
from .source import Options, cluster_batches, cluster_id, cluster_rows

_LISTING = "path STRING, cluster STRING, rel STRING, size BIGINT, files INT"


def clusters(spark, uri: str) -> "list[discover.StoreCluster]":
    """The clusters below ``uri`` (a folder, a file or a glob), from one listing."""
    found: list[discover.StoreCluster] = []
    globbed = hadoop.has_glob(uri)
    for root, files in hadoop.list_files(spark, uri):
        lone_file = len(files) == 1 and files[0].uri == root
        if globbed and lone_file and not discover.metadata_file_name(posixpath.basename(root)):
            continue   # a glob also matches meta.properties, indexes ...: not clusters
        found.extend(discover.store_clusters(root, files))
    if not found:
        raise InputError(uri, "no KRaft metadata (no metadata log dir, segment or snapshot) found")
    return found


def table(spark, found: "list[discover.StoreCluster]", options: Options, schema):
    """The DataFrame of ``options.table`` over the clusters ``found`` (in a store)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    listing = spark.createDataFrame(
        [(f.uri, c.uri, rel, f.size, len(c.files)) for c in found for f, rel in c.files],
        _LISTING)
    paths = [f.uri for c in found for f, _ in c.files]
    content = spark.read.format("binaryFile").load(paths).select("path", "content")
    # Spark's file scan leaves out empty files: they come from the listing alone
    files = listing.join(content, "path", "left")
    rows = _ClusterRows(options, to_arrow_schema(schema, timezone="UTC"))
    return _apply_in_arrow(files, "cluster", rows.__call__, schema)


def _apply_in_arrow(df, column: str, func, schema):
    """``df.groupBy(column).applyInArrow(func, schema)`` for ``func(key, batches)``.

    PySpark's ``applyInArrow`` builds its UDF with ``pandas_udf``, which
    demands pandas on the driver although the Arrow iterator path never uses
    it; the same UDF is made here by the function ``pandas_udf`` calls after
    that check, so the ``spark`` extra needs only pyarrow."""
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.functions import vectorized_udf
    from pyspark.util import PythonEvalType

    udf = vectorized_udf(func, schema, PythonEvalType.SQL_GROUPED_MAP_ARROW_ITER_UDF, "pandas")
    grouped = df.groupBy(column)
    jdf = grouped._jgd.flatMapGroupsInArrow(udf(*[df[c] for c in df.columns])._jc)
    return DataFrame(jdf, df.sparkSession)


class _ClusterRows:
    """The task's function: one cluster's files in, its rows out."""

    def __init__(self, options: Options, schema: pa.Schema):
        self.options = options
        self.schema = schema

    def __call__(self, key: Tuple[pa.Scalar, ...],
                 batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        uri = key[0].as_py()
        with tempfile.TemporaryDirectory(prefix="metashell-cluster-") as tmp:
            local = _lay_out(uri, batches, tmp)
            cid = cluster_id(local)
            if self.options.table != "clusters":
                yield from cluster_batches(self.options, local, (uri, cid), self.schema)
                return
            rows = ((uri, cid) + _as_uris(row, local, uri)
                    for row in cluster_rows(self.options, local))
            yield from record_batches(rows, self.schema)


def _lay_out(uri: str, batches, tmp: str) -> str:
    """Write the cluster's files below ``tmp``; the local path of the cluster."""
    expected, written = None, 0
    for batch in batches:
        columns = [batch.column(c) for c in ("rel", "content", "size", "files")]
        for rel, content, size, count in zip(*columns):
            rel, size, expected = rel.as_py(), size.as_py(), count.as_py()
            data = content.as_buffer() if content.is_valid else b""
            if len(data) != size:   # Spark did not read it: never load a partial cluster
                raise RuntimeError(f"{uri}/{rel.split('/', 1)[-1]}: {len(data)} of its "
                                   f"{size} bytes arrived")
            path = os.path.join(tmp, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            written += 1
    if expected is not None and written != expected:
        raise RuntimeError(f"{uri}: {written} of its {expected} files arrived")
    return os.path.join(tmp, posixpath.basename(uri.rstrip("/")))


def _as_uris(value, local: str, uri: str):
    """``value`` with the task's folder of the cluster named by its URI."""
    if isinstance(value, str):
        return value.replace(local, uri)
    if isinstance(value, tuple):
        return tuple(_as_uris(v, local, uri) for v in value)
    if isinstance(value, list):
        return [_as_uris(v, local, uri) for v in value]
    if isinstance(value, dict):
        return {k: _as_uris(v, local, uri) for k, v in value.items()}
    return value
