"""metashell on Spark: the ``kraft-metadata`` data source and the fleet report.

Needs the ``spark`` extra (``pip install -e '.[spark]'``: PySpark 4 and
pyarrow); the rest of metashell never imports this package, and this
package imports PySpark only when the source is used, so that
``kafka-metadata-fleet`` can say what is missing.

>>> from metashell.spark import register
>>> register(spark)
>>> spark.read.format("kraft-metadata").option("table", "partitions").load("/backups/*")
"""

from __future__ import annotations

__all__ = ["KraftMetadataDataSource", "register"]


def register(spark) -> None:
    """Register the ``kraft-metadata`` format with a SparkSession."""
    from .source import KraftMetadataDataSource

    spark.dataSource.register(KraftMetadataDataSource)


def __getattr__(name: str):
    if name == "KraftMetadataDataSource":
        from .source import KraftMetadataDataSource

        return KraftMetadataDataSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
