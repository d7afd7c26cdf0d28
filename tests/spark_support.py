"""Helpers of the Spark tests: reading a table into plain Python, and the
shell's own answers for the same input (run in-process through its CLI)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cluster"
CORPORA = ROOT.parent / "shared" / "corpora"


def read_table(spark, table: str, paths, **options) -> list[dict]:
    """Every row of ``table`` as a dict (timestamps as epoch ms, structs and maps as dicts)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    reader = spark.read.format("kraft-metadata").option("table", table)
    for key, value in options.items():
        reader = reader.option(key, value)
    df = reader.load(paths)
    for field in df.schema.fields:
        if isinstance(field.dataType, TimestampType):
            df = df.withColumn(field.name, F.unix_millis(field.name))
    return [r.asDict(recursive=True) for r in df.collect()]


def shell(path, *words, until_offset=None, show_secrets=False) -> tuple[int, str, str]:
    """``kafka-metadata-shell -s PATH -o json WORDS...``: (status, stdout, stderr)."""
    from metashell.cli import main

    args = ["-s", str(path), "-o", "json"]
    if until_offset is not None:
        args += ["--until-offset", str(until_offset)]
    if show_secrets:
        args.append("--show-secrets")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(args + list(words), standalone_mode=False)
    return status, out.getvalue(), err.getvalue()


def shell_json(path, *words, **kwargs):
    status, out, err = shell(path, *words, **kwargs)
    assert status == 0, err
    return json.loads(out)


def by_cluster(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r["cluster"], []).append(r)
    return out
