"""A child PySpark driver of the S3 tests (:mod:`.s3a`): one SparkSession
with s3a reads every table asked for over the paths given (store URIs and
local folders alike, one job per table), lists the store URIs asked for,
and says how the listing of each of the ``refusals`` fails (its one-line
error, or null if it does not); the answer is one JSON line on stdout.
Timestamps are epoch ms (as in :func:`.spark.read_table`).

    python -m tests.support.s3a_reads '{"tables": [...], "paths": [URI or PATH, ...],
        "listings": [URI, ...], "refusals": [URI, ...]}'
"""

from __future__ import annotations

import json
import os
import sys
import time


def _rows(df) -> list[dict]:
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    for field in df.schema.fields:
        if isinstance(field.dataType, TimestampType):
            df = df.withColumn(field.name, F.unix_millis(field.name))
    return [r.asDict(recursive=True) for r in df.collect()]


def answer(spark, request: dict) -> dict:
    from metashell.errors import InputError
    from metashell.spark import read
    from metashell.spark.store import clusters

    out: dict = {"tables": {}, "listings": {}, "refusals": {}, "seconds": {}}
    for uri in request.get("listings", []):
        out["listings"][uri] = [{"uri": c.uri, "files": [rel for _, rel in c.files]}
                                for c in clusters(spark, uri)]
    for uri in request.get("refusals", []):
        try:
            clusters(spark, uri)
            out["refusals"][uri] = None
        except InputError as e:
            out["refusals"][uri] = str(e)
    for table in request.get("tables", []):
        began = time.monotonic()
        out["tables"][table] = _rows(read(spark, request["paths"], table=table))
        out["seconds"][table] = round(time.monotonic() - began, 2)
        print(f"{table}: {out['seconds'][table]} s", file=sys.stderr, flush=True)
    return out


def main() -> int:
    from metashell.spark.local import new_log, start_spark

    request = json.loads(sys.argv[1])
    log = new_log()
    try:
        spark = start_spark("local[2]", app_name="metashell-s3a-reads", log_path=log,
                            conf={"spark.sql.shuffle.partitions": "2"})
        try:
            print(json.dumps(answer(spark, request)))
        finally:
            spark.stop()
    except BaseException:
        with open(log, errors="replace") as f:
            sys.stderr.write(f"Spark's log ends:\n{f.read()[-3000:]}\n")
        raise
    finally:
        os.unlink(log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
