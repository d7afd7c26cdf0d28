"""Every shortcut that reads records from their bytes declares the versions
it reads (``VERSIONS`` in its module of ``metashell/fast/``); a
version of such a record that the catalog has and no shortcut has decided on
fails here, and a record of a version a shortcut does not read takes the
general path (shown by narrowing a declaration: the same tree and summary,
nothing deferred)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import metashell.fast as fast
from metashell.kraft.catalog import METADATA
from metashell.fast import reading as reader_module
from metashell.fast import kept_runs, summary_counts
from metashell.fast.store import RecordStore
from metashell.session.files import open_session
from tests.support.replay import leaves, problems, write_snapshot
from tests.support.records import broker, config, partition, topic, uid

# the fast package's modules that read records from their bytes (the others,
# deferred entries, the store, pending changes, hand around what these read)
SHORTCUTS = sorted(m.name for m in pkgutil.iter_modules(fast.__path__)
                   if hasattr(importlib.import_module(f"metashell.fast.{m.name}"), "VERSIONS"))


def catalog_versions(name: str) -> set[int]:
    """The versions of record ``name`` the catalog decodes (frame 1, every layout)."""
    spec = next(m for m in METADATA.values() if m.name == name)
    return {v for v in range(0, 64) if v in spec.valid_range}


def test_every_shortcut_module_declares_its_versions():
    assert SHORTCUTS == ["batch_runs", "change_batches", "kept_runs", "noop_runs", "partition_change",
                         "partition_runs", "run_values", "summary_counts"]
    for name in SHORTCUTS:
        module = importlib.import_module(f"metashell.fast.{name}")
        assert module.VERSIONS, name


@pytest.mark.parametrize("shortcut", SHORTCUTS)
def test_every_catalog_version_of_a_record_read_from_its_bytes_is_decided(shortcut):
    module = importlib.import_module(f"metashell.fast.{shortcut}")
    for record_name, decided in module.VERSIONS.items():
        reads, refuses = set(decided.reads), set(decided.refuses)
        assert not reads & refuses, (shortcut, record_name)
        undecided = catalog_versions(record_name) - reads - refuses
        assert not undecided, (
            f"{shortcut} reads {record_name} from its bytes and has not decided on version(s) "
            f"{sorted(undecided)}: check the layout, then add them to its VERSIONS' reads "
            "(and its code) or to refuses")
        assert reads <= catalog_versions(record_name), (shortcut, record_name)


def cluster_snapshot_records(topics: int, partitions: int, version: int) -> list:
    out = [broker(1), broker(2), broker(3)]
    for t in range(topics):
        out.append(topic(f"t{t}", uid(t)))
        out += [partition(uid(t), p, version=version) for p in range(partitions)]
    return out


def _entries(path) -> list:
    return [e for b in RecordStore().open(path) if type(b.records) is list
            for e in b.records if type(e) is tuple]


def _view(path) -> tuple:
    s = open_session(path)
    return leaves(s.root), s.summary(), problems(s.engine)


def test_a_partition_version_not_read_takes_the_general_path(tmp_path, monkeypatch):
    path = write_snapshot(tmp_path, 100, cluster_snapshot_records(topics=4, partitions=3, version=2))
    assert _entries(path)
    fast_view = _view(path)
    monkeypatch.setattr(reader_module, "PARTITION_LAST_VERSION", (-1, -1, -1, 1, -1, 1))
    monkeypatch.setattr(reader_module, "TOPIC_LAST_VERSION", -1)
    assert not _entries(path)
    assert _view(path) == fast_view


def test_summary_does_not_count_a_run_of_a_version_it_does_not_read(tmp_path, monkeypatch):
    path = write_snapshot(tmp_path, 100, cluster_snapshot_records(topics=4, partitions=3, version=2))
    fast_view = _view(path)
    counted = []
    real = summary_counts.run_counts
    monkeypatch.setattr(summary_counts, "_RECORD_LAST", 1)
    monkeypatch.setattr("metashell.fast.store.run_counts",
                        lambda *a: counted.append(real(*a)) or counted[-1])
    assert _view(path) == fast_view
    assert counted and not any(counted)   # asked, and declined: folded instead


def test_kept_runs_keep_no_version_they_do_not_read(tmp_path, monkeypatch):
    records = cluster_snapshot_records(topics=3, partitions=2, version=2)
    records += [config(2, f"t{i}", "retention.ms", "1000") for i in range(3)]
    path = write_snapshot(tmp_path, 100, records)
    assert any(len(e) == 3 for e in _entries(path))
    fast_view = _view(path)
    monkeypatch.setattr(kept_runs, "KEPT", {api: -1 for api in kept_runs.KEPT})
    monkeypatch.setattr(reader_module, "KEPT", kept_runs.KEPT)
    assert not any(len(e) == 3 for e in _entries(path))
    assert _view(path) == fast_view


def test_unknown_tagged_fields_of_partitions_appear_in_the_tree(tmp_path):
    """A tagged field the catalog does not know (a newer Kafka's) is shown
    under ``_unknownTaggedFields`` in the partition's data, its last value
    per tag, through the fast path and the general one alike."""
    from tests.support.fast_path import assert_fast_path_agrees, fast_path
    from metashell.kraft.fields import UNKNOWN_TAGS
    from tests.support.replay import Log
    from tests.support.records import change

    records = cluster_snapshot_records(topics=2, partitions=3, version=2)
    records[4].data[UNKNOWN_TAGS] = [(90, b"\x01\x02")]   # t0's partition 0
    snap = write_snapshot(tmp_path / "__cluster_metadata-0", 100, records)
    log = Log(base_offset=100)
    odd = change(uid(0), 1, leader=2)
    odd.data[UNKNOWN_TAGS] = [(91, b"\x07"), (92, b"")]
    log.add(odd)
    log.write(tmp_path / "__cluster_metadata-0")
    assert snap.exists()
    for on in (True, False):
        with fast_path(on):
            s = open_session(tmp_path)
            data = {p: s.root.child("topics").child("t0").child(p).child("data").value()
                    for p in ("0", "1", "2")}
        assert data["0"][UNKNOWN_TAGS] == [[90, b"\x01\x02"]]
        assert data["1"][UNKNOWN_TAGS] == [[91, b"\x07"], [92, b""]]
        assert UNKNOWN_TAGS not in data["2"]
    assert_fast_path_agrees(tmp_path)
