"""metashell on Spark: the ``kraft-metadata`` data source and the fleet report.

Needs the ``spark`` extra (``pip install -e '.[spark]'``: PySpark 4 and
pyarrow); the rest of metashell never imports this package, and this
package imports PySpark only when the source is used, so that
``kafka-metadata-fleet`` can say what is missing.

>>> from metashell.spark import register
>>> register(spark)
>>> spark.read.format("kraft-metadata").option("table", "partitions").load("/backups/*")

Stores that Spark reads through Hadoop (``hdfs://``, ``s3a://``, ``gs://``,
``abfs://``) need the driver's JVM to list them, which a Python data source
does not have: :func:`read` takes local paths and URIs alike.

>>> from metashell.spark import read
>>> read(spark, ["s3a://backups/kafka/*"], table="partitions")
"""

from __future__ import annotations

__all__ = ["KraftMetadataDataSource", "read", "register"]


def register(spark) -> None:
    """Register the ``kraft-metadata`` format with a SparkSession."""
    from .source import KraftMetadataDataSource

    spark.dataSource.register(KraftMetadataDataSource)


def read(spark, paths, table: str = "clusters", **options):
    """The DataFrame of ``table`` over ``paths`` (a path or URI, or a list of
    them), with the source's options (``untilOffset``, ``showSecrets``, ...).
    Local paths (and ``file://``) are read by the ``kraft-metadata`` source,
    store URIs through Spark's Hadoop client (:mod:`.store`), each listed once."""
    from .hadoop import is_uri
    from .store import clusters

    paths = [paths] if isinstance(paths, str) else list(paths)
    found = [c for p in paths if is_uri(p) for c in clusters(spark, p)]
    return frame(spark, [p for p in paths if not is_uri(p)], found, table, **options)


def frame(spark, local: "list[str]", found: list, table: str = "clusters", **options):
    """The DataFrame of ``table`` over the ``local`` paths and the clusters
    ``found`` in stores (:func:`.store.clusters`)."""
    from .source import Options
    from .store import table as store_table

    parsed = Options.parse({**options, "table": table})
    frames = []
    if local:
        frames.append(_local_table(spark, local, parsed))
    if found:
        unique = list({c.uri: c for c in found}.values())
        frames.append(store_table(spark, unique, parsed, _schema(parsed.table)))
    out = frames[0]
    for other in frames[1:]:
        out = out.unionByName(other)
    return out


def _local_table(spark, local: "list[str]", options):
    """The table over local paths: the ``kraft-metadata`` source's own input
    partitions, planned here on the driver and each read by one task of
    ``mapInArrow`` over ``spark.range`` (a task per partition, largest first).
    Read through ``spark.read.format``, the same job would start two more
    Python processes on the driver (one to make the source, one to plan it)
    before the first task: most of a small fleet's report."""
    from .arrow import map_in_arrow
    from .hadoop import local_path
    from .source import KraftMetadataReader

    schema = _schema(options.table)
    reader = KraftMetadataReader([local_path(p) for p in local], options, schema)
    parts = reader.partitions()
    slots = spark.range(0, len(parts), 1, max(len(parts), 1))
    return map_in_arrow(slots, _ReadSlots(reader, parts), schema)


class _ReadSlots:
    """The task's function: the ids of ``spark.range`` in, the rows of the
    input partitions of those ids out."""

    def __init__(self, reader, parts: list):
        self.reader = reader
        self.parts = parts

    def __call__(self, batches):
        for batch in batches:
            for slot in batch.column(0).to_pylist():
                yield from self.reader.read(self.parts[slot])


def _schema(table: str):
    from pyspark.sql.types import _parse_datatype_string

    from .schemas import ddl

    return _parse_datatype_string(ddl(table))


def __getattr__(name: str):
    if name == "KraftMetadataDataSource":
        from .source import KraftMetadataDataSource

        return KraftMetadataDataSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
