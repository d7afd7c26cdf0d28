"""The PySpark data source on a real local Spark (the ``spark`` extra and Java)."""
