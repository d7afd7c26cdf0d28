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
    from .source import NAME, KraftMetadataDataSource, Options
    from .store import table as store_table

    options = {**options, "table": table}
    spark.dataSource.register(KraftMetadataDataSource)
    frames = []
    if local:
        reader = spark.read.format(NAME)
        for key, value in options.items():
            reader = reader.option(key, value)
        frames.append(reader.load(local))
    if found:
        unique = list({c.uri: c for c in found}.values())
        parsed = Options.parse(options)
        frames.append(store_table(spark, unique, parsed, _schema(parsed.table)))
    out = frames[0]
    for other in frames[1:]:
        out = out.unionByName(other)
    return out


def _schema(table: str):
    from pyspark.sql.types import _parse_datatype_string

    from .schemas import ddl

    return _parse_datatype_string(ddl(table))


def __getattr__(name: str):
    if name == "KraftMetadataDataSource":
        from .source import KraftMetadataDataSource

        return KraftMetadataDataSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
