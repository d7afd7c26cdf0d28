"""Rows of the history tables, read straight from a cluster's log files.

``records``: one row per record of a slice of a file. A large file is cut
into slices at batch boundaries by :func:`slices` (the loader's
``BatchScanner`` walks the batch headers only; nothing is decoded to find
the cuts) and each slice is decoded once, by the task that reads it.

``partition_changes``: every PartitionRecord and PartitionChangeRecord of
a cluster's log in order, with the partition's leader, epochs, ISR and
replicas after it, folded with the replay engine's own merge rules.

Record values leave as JSON with the shell's redaction (SCRAM salts and
keys, sensitive config values) unless ``show_secrets``.
"""

from __future__ import annotations

import base64
import json
import mmap
from pathlib import Path

from ..loader import inputs
from ..kraft.batch import BatchScanner
from ..kraft.secrets import redacted
from ..fast.door import shortcuts
from ..loader.reader import FileReader
from ..replay.partition_model import merge_change, partition_from_record
from ..replay.entity_keys import key_from_data
from .image_rows import micros

#: files larger than this are read as several slices (several tasks)
SLICE_BYTES = 64 << 20

_PARTITION_APIS = (3, 5)


def history_files(cluster: str) -> list[str]:
    """The files whose records make a cluster's history: every segment of a
    metadata directory (in offset order), or the file itself."""
    kind = inputs.classify(cluster)
    if kind not in ("logdir", "partition-dir"):
        return [cluster]
    return [str(s.path) for s in inputs.plan(cluster).all_segments]


def slices(path: str, limit: int = SLICE_BYTES) -> list[tuple[int, int | None]]:
    """``(start, end)`` byte ranges of ``path`` of about ``limit`` bytes,
    cut between batches (``end`` None: to the end of the file)."""
    try:
        size = Path(path).stat().st_size
    except OSError:
        size = 0   # the task that reads it finds it gone and says nothing
    if size <= limit:
        return [(0, None)]
    out, start = [], 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        for header in BatchScanner(buf, path, verify_crc=False, skip=True):
            if header.position - start >= limit:
                out.append((start, header.position))
                start = header.position
    out.append((start, None))
    return out


def _batches(path: str, start: int = 0, end: int | None = None):
    """``(byte position of the slice in the file, reader of its batches)``."""
    if start == 0 and end is None:
        return 0, FileReader(path, skip_damage=True, shortcuts=shortcuts)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(-1 if end is None else end - start)
    return start, FileReader(path, skip_damage=True, buf=data, shortcuts=shortcuts)


def _keep(header, until_time) -> bool:
    """Time travel as the shell does it: whole batches appended at or before ``until_time``."""
    return until_time is None or header.max_timestamp <= until_time


# -- records ---------------------------------------------------------------------------------

def _json_default(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    raise TypeError(f"{type(v).__name__} is not JSON")


def _entity_columns(api_key: int, data: dict) -> tuple:
    """(topic_id, partition, broker_id, resource) of a metadata record."""
    try:
        key = key_from_data(api_key, data)
    except (KeyError, TypeError):
        key = None
    if key is None:
        return None, None, None, None
    kind = key[0]
    if kind == "partition":
        return key[1], key[2], None, None
    if kind == "topic":
        return key[1], None, None, None
    if kind == "broker":
        return None, None, key[1], None
    if kind == "quota":
        return None, None, None, "quota/" + ",".join(
            f"{t}={'<default>' if n is None else n}" for t, n in key[1])
    return None, None, None, "/".join(str(p) for p in key)


def rows_records(path: str, start: int = 0, end: int | None = None, *, until_offset=None,
                 until_time=None, show_secrets: bool = False):
    """The rows of one slice of one file (columns of ``records`` after the cluster)."""
    name = Path(path).name
    base, reader = _batches(path, start, end)
    for batch in reader:
        h = batch.header
        if not _keep(h, until_time):
            continue
        control = h.is_control
        for rec in batch.records:
            if until_offset is not None and rec.offset > until_offset:
                return
            data = rec.data if rec.kind != "undecodable" else None
            entity = (None,) * 4
            value = None
            if data is not None:
                if rec.kind == "metadata":
                    entity = _entity_columns(rec.api_key, data)
                    data = data if show_secrets else redacted(rec.api_key, data)
                value = json.dumps(data, default=_json_default, separators=(",", ":"))
            yield (name, rec.offset, h.base_offset, base + h.position, h.epoch,
                   micros(h.max_timestamp), control, rec.name, rec.version) + entity + (value,)


# -- partition_changes -----------------------------------------------------------------------

def rows_partition_changes(files: list[str], *, until_offset=None, until_time=None):
    """The partition records of a cluster's files, in order, with the state after each."""
    names: dict[str, str] = {}
    states: dict[str, dict] = {}   # topic id -> partition id -> PartitionState
    for path in files:
        name = Path(path).name
        for batch in FileReader(path, skip_damage=True, shortcuts=shortcuts):
            h = batch.header
            if h.is_control or not _keep(h, until_time):
                continue
            for rec in batch.records:
                if until_offset is not None and rec.offset > until_offset:
                    return
                d = rec.data if rec.kind == "metadata" else None
                if d is None:
                    continue
                api = rec.api_key
                if api == 2:
                    names[d["topicId"]] = d["name"]
                elif api == 9:
                    states.pop(d["topicId"], None)
                elif api in _PARTITION_APIS:
                    yield (name,) + _change_row(rec, d, names, states)


def _change_row(rec, d: dict, names: dict, states: dict) -> tuple:
    tid, pid = d["topicId"], d["partitionId"]
    parts = states.setdefault(tid, {})
    state = parts.get(pid)
    if rec.api_key == 3:
        state = parts[pid] = partition_from_record(d, rec)
    elif state is not None and merge_change(state, d) is not None:
        state = None   # Kafka rejects this change
    head = (rec.offset, micros(rec.timestamp), rec.name, names.get(tid), tid, pid)
    if state is None:
        leader = d.get("leader")
        return head + (None if leader in (None, -2) else leader, None, None, d.get("isr"),
                       d.get("replicas"))
    return head + (state.leader, state.leader_epoch, state.partition_epoch, list(state.isr),
                   list(state.replicas))
