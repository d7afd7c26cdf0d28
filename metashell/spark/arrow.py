"""Rows to Arrow: bounded ``pyarrow.RecordBatch``es in a table's schema.

Tasks yield these to Spark instead of Python tuples (no per-row pickling),
and at most :data:`BATCH_ROWS` rows are ever held, so a task over a
million-partition cluster keeps one batch in memory, not the cluster.
:func:`map_in_arrow` runs such a task over a DataFrame without pandas.
"""

from __future__ import annotations

from itertools import islice

import pyarrow as pa

BATCH_ROWS = 8192


def record_batches(rows, schema: pa.Schema, size: int = BATCH_ROWS):
    """Yield ``rows`` (tuples in ``schema``'s column order) as record batches."""
    rows = iter(rows)
    while True:
        chunk = list(islice(rows, size))
        if not chunk:
            return
        yield record_batch(chunk, schema)
        if len(chunk) < size:
            return


def record_batch(rows: list, schema: pa.Schema) -> pa.RecordBatch:
    """``rows`` (a list of tuples in ``schema``'s column order) as one batch."""
    return pa.RecordBatch.from_arrays(
        [pa.array(col, type=f.type) for col, f in zip(zip(*rows), schema)], schema=schema)


def map_in_arrow(df, func, schema):
    """``df.mapInArrow(func, schema)``. PySpark's ``mapInArrow`` builds its UDF
    with ``pandas_udf``, which demands pandas on the driver although the Arrow
    iterator path never uses it; the same UDF is made here by the function
    ``pandas_udf`` calls after that check, so the ``spark`` extra needs only
    pyarrow."""
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.functions import vectorized_udf
    from pyspark.util import PythonEvalType

    udf = vectorized_udf(func, schema, PythonEvalType.SQL_MAP_ARROW_ITER_UDF, "pandas")
    jdf = df._jdf.mapInArrow(udf(*[df[c] for c in df.columns])._jc, False, None)
    return DataFrame(jdf, df.sparkSession)
