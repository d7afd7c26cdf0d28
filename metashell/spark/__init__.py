"""metashell on Spark: the ``kraft-metadata`` data source and the fleet report.

Needs the ``spark`` extra (``pip install -e '.[spark]'``: PySpark 4 and
pyarrow); the rest of metashell never imports this package.

>>> from metashell.spark import register
>>> register(spark)
>>> spark.read.format("kraft-metadata").option("table", "partitions").load("/backups/*")
"""

from __future__ import annotations

from .source import NAME, KraftMetadataDataSource

__all__ = ["NAME", "KraftMetadataDataSource", "register"]


def register(spark) -> None:
    """Register the ``kraft-metadata`` format with a SparkSession."""
    spark.dataSource.register(KraftMetadataDataSource)
