"""The ``partitions`` table built column-wise from the values the fast path
reads of its runs' bytes (``metashell/spark/partition_columns.py``) equals
the table ``METASHELL_FAST_PATH=0`` gives (every partition folded, a row
each), row for row: on every corpus cluster and file, the example cluster,
and clusters generated in each of the bench's shapes. The tasks' own
function is run in this process (the fast path is chosen when a source is
opened, and Spark's workers keep the environment they started with); one
Spark job over the generated clusters checks the same through Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from metashell.spark.schemas import ddl
from metashell.spark.source import ClusterPartition, Options, table_batches
from tests.support.corpora import corpus_cases
from tests.support.fast_path import fast_path
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.spark import read_table
from bench import shapes   # the bench's generators

pytestmark = pytest.mark.usefixtures("spark")

# the shapes whose partitions differ in how they are written: PartitionRecord v0-v2, batches
# small and large, a log of CreateTopics, partitions changed after the snapshot, mixed
# replica counts and directories
SHAPES = ("snap-8mib-v2", "snap-small-v2", "snap-8mib-v1", "snap-8mib-v0", "logdir",
          "create-topics", "snap-mixed", "logdir-mixed", "log-mixed")


def corpus_inputs() -> list[Path]:
    files = [p for p in CORPORA.rglob("*") if p.suffix in (".log", ".checkpoint")]
    return sorted(files + [d for d in CORPORA.iterdir() if d.is_dir()])


@pytest.fixture(scope="module")
def arrow_schema(spark):
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark.createDataFrame([], ddl("partitions")).schema, timezone="UTC")


def partition_rows(path, schema, fast: bool, **options) -> list[tuple]:
    """The ``partitions`` rows of ``path`` as a task makes them, sorted."""
    part = ClusterPartition(str(path), None)
    with fast_path(fast):
        batches = list(table_batches(Options(table="partitions", **options), part,
                                     (str(path), None), schema))
    rows = [tuple(r.values()) for b in batches for r in b.to_pylist()]
    return sorted(rows, key=repr)


def assert_columns_agree(path, schema, **options) -> list[tuple]:
    fast = partition_rows(path, schema, True, **options)
    assert fast == partition_rows(path, schema, False, **options)
    return fast


@pytest.mark.parametrize("path", [EXAMPLE] + corpus_cases(corpus_inputs),
                         ids=lambda p: str(p).replace(str(CORPORA), "corpora"))
def test_every_corpus_input(arrow_schema, path):
    assert_columns_agree(path, arrow_schema)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    """Each shape generated small, as a cluster directory of its own."""
    root = tmp_path_factory.mktemp("shapes")
    out = {}
    for shape in SHAPES:
        suffix = shapes.shape_suffix(shape)
        name = ("00000000000000002000-0000000007.checkpoint" if suffix == ".checkpoint"
                else f"00000000000000000000{suffix}")
        path = root / shape / name if suffix else root / shape
        path.parent.mkdir(parents=True, exist_ok=True)
        info = shapes.generate(shape, path, 3000)
        out[shape] = (path, info)
    return out


@pytest.mark.parametrize("shape", SHAPES)
def test_every_bench_shape(arrow_schema, generated, shape):
    path, info = generated[shape]
    rows = assert_columns_agree(path, arrow_schema)
    assert len(rows) == 3000 or shape == "log-mixed" and rows
    if "until" in info:
        assert_columns_agree(path, arrow_schema, until_offset=info["until"])


def test_through_spark(spark, arrow_schema, generated):
    """A Spark job (its workers with the fast path on) gives the rows the
    general path gives in this process."""
    paths = [str(generated[shape][0]) for shape in ("logdir", "snap-8mib-v0", "create-topics")]
    got = read_table(spark, "partitions", paths)
    expected = []
    for path in paths:
        for row in partition_rows(path, arrow_schema, False):
            d = dict(zip(arrow_schema.names, row))
            d["last_change_time"] = int(d["last_change_time"].timestamp() * 1000)
            expected.append(d)
    assert sorted(got, key=repr) == sorted(expected, key=repr)
