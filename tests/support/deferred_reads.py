"""Reading the fast path's deferred entries back (no tests here): a
:class:`~metashell.fast.store.RecordStore`'s read listed record by record,
and compared with the plain reader's read of the same file, field by field.
"""

from __future__ import annotations

from pathlib import Path

from metashell.fast import deferred
from metashell.fast.change_batches import ChangeBatch
from metashell.fast.deferred import (API_KEY, KEPT_COUNT, KEPT_RUN, PARTITION, PARTITION_ID, RAW_TOPIC_ID,
                                     REF, TOPIC, TOPIC_ID, TOPIC_NAME, TOPIC_OFFSET, TOPIC_RAW_ID,
                                     TOPIC_TIMESTAMP)
from metashell.fast.store import RecordStore, ref_file
from metashell.kraft.primitives import UUID_TEXT
from metashell.loader.reader import FileReader

# what a record read by the loader holds: two reads of one record agree on all of it
FIELDS = ("offset", "timestamp", "epoch", "kind", "name", "api_key", "version", "frame", "layout",
          "error", "position", "key", "headers", "attributes", "data")


def entries_of(reader, store: RecordStore) -> list:
    """A deferred read's entries (``reader``: opened by ``store``), a run as
    its records (``deferred.PARTITION`` entries); a run of a snapshot's records
    kept unread (configs, ACLs, ...) as a :class:`KeptRecord` each; a run of
    heartbeat batches as its NoOpRecords, read again batch by batch; a batch
    of changes left unread, read."""
    return [e for b in reader
            for x in (b.records if type(b.records) is list else
                      b.records.entries() if type(b.records) is ChangeBatch else
                      [r for one in b.records.batches() for r in one.records])
            for e in (kept_records(x, store) if type(x) is tuple and deferred.kind(x) == KEPT_RUN
                      else deferred.records(x) if type(x) is tuple else (x,))]


class KeptRecord(tuple):
    """One record of a snapshot's kept run, as :func:`entries_of` lists it:
    ``(ref, apiKey)``."""


def kept_records(entry: tuple, store: RecordStore) -> list:
    return [KeptRecord((ref, entry[API_KEY])) for ref in store.run_refs(entry[REF], entry[KEPT_COUNT])]


def opened(path: Path) -> tuple:
    """A deferred read of ``path`` and the store it reads into."""
    store = RecordStore()
    return store.open(path), store


def same_record(a, b) -> None:
    """Two reads of one record agree on every field a record has."""
    for f in FIELDS:
        assert getattr(a, f) == getattr(b, f), (f, a, b)


def plain_records(path: Path) -> list:
    """Every record of ``path`` read record by record (the lazy reader, which
    takes no runs), each decoded: the reference of the fast path's reads."""
    records = [r for b in FileReader(path, lazy=True) for r in b.records]
    for r in records:
        r.data
    return records


def compare_file(path: Path) -> int:
    """Every entry of a deferred read against the plain eager read; returns
    how many were deferred."""
    plain = plain_records(path)
    store = RecordStore()
    entries = entries_of(store.open(path), store)
    assert len(entries) == len(plain)
    deferred_count = 0
    for entry, rec in zip(entries, plain):
        if type(entry) is KeptRecord:   # a record of a snapshot's kept run
            same_record(store.record(entry[0]), rec)
            assert rec.api_key == entry[1]
        elif type(entry) is tuple and deferred.kind(entry) == TOPIC:   # a TopicRecord on the fast path
            back = store.record(entry[REF])
            same_record(back, rec)
            assert (entry[API_KEY], entry[TOPIC_NAME], UUID_TEXT[entry[TOPIC_RAW_ID]], entry[TOPIC_OFFSET],
                    entry[TOPIC_TIMESTAMP], entry[TOPIC_ID]) == (
                2, rec.data["name"], rec.data["topicId"], rec.offset, rec.timestamp, rec.data["topicId"])
        elif type(entry) is tuple:
            assert deferred.kind(entry) == PARTITION
            ref, api, pid, raw = entry[REF], entry[API_KEY], entry[PARTITION_ID], entry[RAW_TOPIC_ID]
            back = store.record(ref)
            same_record(back, rec)
            assert api == rec.api_key
            assert rec.data is None or pid == rec.data["partitionId"]   # None: undecodable
            assert rec.data is None or UUID_TEXT[raw] == rec.data["topicId"]
            assert ref_file(ref) == 0
            deferred_count += 1
        else:
            same_record(entry, rec)
    return deferred_count
