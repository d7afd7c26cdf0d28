"""Rows to Arrow: bounded ``pyarrow.RecordBatch``es in a table's schema.

Tasks yield these to Spark instead of Python tuples (no per-row pickling),
and at most :data:`BATCH_ROWS` rows are ever held, so a task over a
million-partition cluster keeps one batch in memory, not the cluster.
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
