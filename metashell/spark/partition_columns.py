"""The ``partitions`` table built column-wise: Arrow arrays a batch at a time.

A million-partition cluster is a million rows. Where the shell's ``cat``
writes a partition's text straight from its record's bytes, the image
gives the same values here (``TopicState.partition_values``: a run's
integers and directories as read, which field each is, and each record's
last change), and each column of many runs is one Arrow array made from
them at once: no dict, tuple or state per partition. The partitions that
must be folded (changed since their run, or a layout the model does not
place, or every partition with ``METASHELL_FAST_PATH=0``) are rows as
before (:func:`.image_rows.partition_row`). Either way a row holds the
values the tree's ``data`` shows; the two kinds come in separate batches,
so the table's order is not the tree's (Spark keeps no order anyway).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..kraft.primitives import UUID_TEXT
from ..replay.partition_model import SPARK_COLUMNS
from .arrow import BATCH_ROWS, record_batch
from .image_rows import partition_row, topic_states


def partition_batches(session, key: tuple, schema: pa.Schema, size: int = BATCH_ROWS):
    """The ``partitions`` table of ``session`` as record batches in
    ``schema`` (``key``: the values of its first columns, ``cluster`` and
    ``cluster_id``), at most about ``size`` rows each."""
    runs = _Runs(key, schema)
    rows = []
    for name, topic in topic_states(session):
        taken, states = topic.partition_values()
        for run in taken:
            runs.add(name, run)
        rows.extend(key + partition_row(name, state) for state in states.values())
        if runs.count >= size:
            yield from runs.flush()
        if len(rows) >= size:
            yield record_batch(rows, schema)
            rows = []
    yield from runs.flush()
    if rows:
        yield record_batch(rows, schema)


class _Group:
    """The runs of one layout plan gathered for a batch, column by column."""

    def __init__(self):
        self.topics: list = []
        self.topic_ids: list = []
        self.ints: list = []
        self.uuids: list = []
        self.offsets: list = []
        self.times: list = []
        self.kept: list = []
        self.all_kept = True

    def add(self, topic: str, run) -> None:
        n = len(run.offsets)
        self.topics += [topic] * n
        self.topic_ids += [run.topic_id] * n
        self.ints += run.ints
        self.uuids += run.uuids
        self.offsets += run.offsets
        self.times += run.times
        if run.kept is None:
            self.kept += [True] * n
        else:
            self.kept += run.kept
            self.all_kept = False


class _Runs:
    """Runs gathered until a batch is full, grouped by layout plan (a batch
    per plan: each field is where the plan says in all of its runs)."""

    def __init__(self, key: tuple, schema: pa.Schema):
        self.key = key
        self.schema = schema
        self.groups: dict = {}
        self.count = 0

    def add(self, topic: str, run) -> None:
        group = self.groups.get(run.plan)
        if group is None:
            group = self.groups[run.plan] = _Group()
        group.add(topic, run)
        self.count += len(run.offsets)

    def flush(self):
        for plan, group in self.groups.items():
            batch = self._batch(plan, group)
            yield batch if group.all_kept else batch.filter(pa.array(group.kept, pa.bool_()))
        self.groups.clear()
        self.count = 0

    def _batch(self, plan, g: _Group) -> pa.RecordBatch:
        schema, n = self.schema, len(g.offsets)
        values = {"int": _rows(pa.array(g.ints, pa.int32()), plan.ints),
                  "uuid": _rows(pa.array(list(map(UUID_TEXT.__getitem__, g.uuids)), pa.string()),
                                plan.uuids)}
        columns = [pa.repeat(pa.scalar(v, schema.field(i).type), n)
                   for i, v in enumerate(self.key)]
        columns.append(pa.array(g.topics, pa.string()))
        for column, _, json in SPARK_COLUMNS:
            kind = schema.field(column).type
            if json == "topicId":
                columns.append(pa.array(g.topic_ids, kind))
            elif json in plan.read:
                columns.append(_field(values, plan.read[json], kind))
            else:
                columns.append(pa.repeat(pa.scalar(plan.constant[json], kind), n))
        columns.append(pa.array(g.offsets, pa.int64()))
        columns.append(_micros(g.times, schema.field("last_change_time").type))
        return pa.RecordBatch.from_arrays(columns, schema=schema)


def _rows(flat: pa.Array, width: int) -> "pa.Array | None":
    """``flat``'s values as one fixed-size list per partition (None: it has none)."""
    return pa.FixedSizeListArray.from_arrays(flat, width) if width else None


def _field(values: dict, read, kind: pa.DataType) -> pa.Array:
    """A field's column: its values from each partition's list of that kind."""
    rows = values[read.kind]
    if not read.array:
        return pc.list_element(rows, read.start).cast(kind)
    return pc.list_slice(rows, read.start, read.start + read.count).cast(kind)


def _micros(times: list, kind: pa.DataType) -> pa.Array:
    """Kafka's epoch milliseconds as a timestamp column (microseconds); a
    time before the epoch (unknown) is null, as ``image_rows.micros`` says."""
    ms = pa.array(times, pa.int64())
    if len(ms) and pc.min(ms).as_py() < 0:
        ms = pc.if_else(pc.less(ms, 0), pa.scalar(None, pa.int64()), ms)
    return pc.multiply(ms, 1000).cast(kind)
