"""The ``kraft-metadata`` Spark data source (PySpark's Python Data Source API).

``spark.read.format("kraft-metadata").option("table", T).load(PATH)``: the
driver finds the clusters below PATH (:mod:`.discover`) and plans the input
partitions; each task loads what it needs on the executor and yields Arrow
batches (:mod:`.arrow`). Image tables are one task per cluster, loaded by
the shell's own ``open_session`` (:mod:`.image_rows`); ``records`` is one
task per slice of a log file, ``partition_changes`` one per cluster
(:mod:`.history`). A cluster that cannot be loaded does not fail the job:
its error is a problem in its ``clusters`` row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema

from ..errors import MetashellError, UsageError
from ..gcpause import no_cyclic_gc
from ..loader import inputs
from ..render import parse_time
from ..session.files import open_session
from . import discover, history, image_rows, partition_columns
from .arrow import record_batches
from .hadoop import is_uri, local_path
from .schemas import TABLES, ddl

NAME = "kraft-metadata"
DEFAULT_TABLE = "clusters"


@dataclass(frozen=True)
class Options:
    """The source's options, checked on the driver."""

    table: str = DEFAULT_TABLE
    until_offset: int | None = None
    until_time: int | None = None
    show_secrets: bool = False
    slice_bytes: int = history.SLICE_BYTES

    @classmethod
    def parse(cls, options) -> "Options":
        o = {k.lower(): v for k, v in dict(options).items()}
        table = o.get("table", DEFAULT_TABLE)
        if table not in TABLES:
            raise UsageError(f"kraft-metadata: unknown table {table!r}; one of: "
                             + ", ".join(TABLES))
        until_offset = o.get("untiloffset")
        if until_offset is not None:
            if not str(until_offset).strip().isdigit():
                raise UsageError(f"kraft-metadata: untilOffset {until_offset!r} is not an offset >= 0")
            until_offset = int(until_offset)
        until_time = o.get("untiltime")
        if until_time is not None:
            try:
                until_time = parse_time(str(until_time))
            except ValueError as e:
                raise UsageError(f"kraft-metadata: untilTime: {e}") from None
        show = str(o.get("showsecrets", "false")).strip().lower()
        if show not in ("true", "false"):
            raise UsageError(f"kraft-metadata: showSecrets {show!r} is not true or false")
        slice_bytes = str(o.get("slicebytes", history.SLICE_BYTES)).strip()
        if not slice_bytes.isdigit() or int(slice_bytes) == 0:
            raise UsageError(f"kraft-metadata: sliceBytes {slice_bytes!r} is not a size in bytes")
        return cls(table, until_offset, until_time, show == "true", int(slice_bytes))


class KraftMetadataDataSource(DataSource):
    """KRaft ``__cluster_metadata`` files as tables; see README "Fleet pipeline on Spark"."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return ddl(Options.parse(self.options).table)

    def reader(self, schema) -> "KraftMetadataReader":
        o = {k.lower(): v for k, v in dict(self.options).items()}
        if "paths" in o:   # .load([PATH, ...])
            paths = json.loads(o["paths"])
        elif "path" in o:
            paths = [o["path"]]
        else:
            raise UsageError("kraft-metadata: no path; use .load(PATH)")
        for path in paths:
            if is_uri(path):
                raise UsageError(
                    f"kraft-metadata: {path}: Spark runs a Python data source without its JVM, "
                    f"which reads this store; use metashell.spark.read(spark, PATH, table=...)")
        return KraftMetadataReader([local_path(p) for p in paths], Options.parse(self.options),
                                   schema)


class ClusterPartition(InputPartition):
    """One cluster (image tables, partition_changes)."""

    def __init__(self, cluster: str, cluster_id: str | None):
        super().__init__(cluster)
        self.cluster = cluster
        self.cluster_id = cluster_id


class SlicePartition(ClusterPartition):
    """A slice of one of a cluster's files (records)."""

    def __init__(self, cluster: str, cluster_id: str | None, file: str, start: int,
                 end: int | None):
        super().__init__(cluster, cluster_id)
        self.file, self.start, self.end = file, start, end


class KraftMetadataReader(DataSourceReader):
    def __init__(self, paths: list[str], options: Options, schema):
        self.paths = paths
        self.options = options
        self.schema = schema

    def partitions(self) -> list[InputPartition]:
        out: list[InputPartition] = []
        found = dict.fromkeys(c for path in self.paths for c in discover.clusters(path))
        # largest first: Spark starts tasks in this order, so the long ones do not
        # come last and leave the other cores idle at the end
        for cluster in sorted(found, key=discover.size, reverse=True):
            cid = cluster_id(cluster)
            if self.options.table != "records":
                out.append(ClusterPartition(cluster, cid))
                continue
            for path in _history_files(cluster):
                out.extend(SlicePartition(cluster, cid, path, start, end)
                           for start, end in history.slices(path, self.options.slice_bytes))
        return out

    def read(self, partition: ClusterPartition):
        yield from table_batches(self.options, partition, (partition.cluster, partition.cluster_id),
                                 to_arrow_schema(self.schema, timezone="UTC"))


def cluster_id(cluster: str) -> str | None:
    """``cluster.id`` of the cluster's ``meta.properties``, else None."""
    try:
        meta = inputs.plan(cluster).meta_properties
    except MetashellError:
        return None
    return (meta or {}).get("cluster.id")


def _history_files(cluster: str) -> list[str]:
    try:
        return history.history_files(cluster)
    except MetashellError:
        return []   # the clusters table reports why


def table_batches(options: Options, part: ClusterPartition, key: tuple, schema):
    """The rows of ``options.table`` for one partition as Arrow batches in
    ``schema``, ``key`` (``cluster``, ``cluster_id``) first; ``partitions``
    column-wise (:mod:`.partition_columns`), the others row by row."""
    if options.table == "partitions":
        return _partition_batches(part.cluster, options, key, schema)
    return record_batches((key + row for row in table_rows(options, part)), schema)


def cluster_batches(options: Options, cluster: str, key: tuple, schema):
    """:func:`table_batches` of every row of one cluster at a local path, in
    one task (a records table reads each file whole)."""
    if options.table != "records":
        return table_batches(options, ClusterPartition(cluster, None), key, schema)
    return record_batches((key + row for row in cluster_rows(options, cluster)), schema)


def table_rows(options: Options, part: ClusterPartition):
    """The rows (after ``cluster``, ``cluster_id``) of ``options.table`` for one partition."""
    table = options.table
    if table == "records":
        return _unless_unreadable(history.rows_records(
            part.file, part.start, part.end, until_offset=options.until_offset,
            until_time=options.until_time, show_secrets=options.show_secrets))
    if table == "partition_changes":
        return _unless_unreadable(history.rows_partition_changes(
            _history_files(part.cluster), until_offset=options.until_offset,
            until_time=options.until_time))
    return image_table_rows(table, part.cluster, options)


def cluster_rows(options: Options, cluster: str):
    """Every row (after ``cluster``, ``cluster_id``) of ``options.table`` for one
    cluster at a local path, in one task: a records table reads each file whole."""
    if options.table != "records":
        return table_rows(options, ClusterPartition(cluster, None))
    return (row for path in _history_files(cluster)
            for row in table_rows(options, SlicePartition(cluster, None, path, 0, None)))


def _unless_unreadable(rows):
    """History rows up to a file that cannot be read at all (gone, no permission):
    the job goes on, and the clusters table says what is wrong."""
    try:
        yield from rows
    except (MetashellError, OSError):
        return


def image_table_rows(table: str, cluster: str, options: Options):
    session, error = _open_image(cluster, options)
    if session is None:
        if table == "clusters":
            yield image_rows.failed_cluster_row(_kind(cluster), str(error))
        return
    try:
        with no_cyclic_gc():   # as _partition_batches
            yield from image_rows.ROWS[table](session)
    finally:
        # freed at once (a reused Python worker would pile up the clusters it has
        # read); not by gc.collect(), which walked every object of the cluster
        # first: a third of the workers' time in bench/spark.py
        session.close()


def _partition_batches(cluster: str, options: Options, key: tuple, schema):
    session, _ = _open_image(cluster, options)
    if session is None:
        return   # the clusters table says why
    try:
        # folding makes a state per changed partition and no garbage cycles; the
        # cyclic collector would walk the session's objects again and again as
        # they pile up: a third of the table's time on a 250k log dir (7.0 -> 4.7 s)
        with no_cyclic_gc():
            yield from partition_columns.partition_batches(session, key, schema)
    finally:
        session.close()   # as image_table_rows


def _open_image(cluster: str, options: Options) -> tuple:
    """``(session, None)`` of ``cluster`` loaded, or ``(None, the error)``."""
    try:
        return open_session(cluster, until_offset=options.until_offset,
                            until_time=options.until_time,
                            show_secrets=options.show_secrets), None
    except (MetashellError, OSError) as e:
        return None, e


def _kind(cluster: str) -> str | None:
    try:
        return inputs.classify(cluster)
    except MetashellError:
        return None

