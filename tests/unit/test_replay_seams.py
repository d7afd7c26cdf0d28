"""The replay's seams (docs/architecture.md, "Replay"): every metadata record
type has one rule, in the module of the entity that owns it; and the image
holds no engine: what it leaves lazy (a snapshot's kept configs and ACLs, a
log's pending partition changes, partitions folded on first look) works
after its engine is gone, and the image is freed by reference counting
alone."""

from __future__ import annotations

import gc
import weakref
from collections import Counter
from pathlib import Path

from metashell.fs.root import build_root
from metashell.kraft.catalog import METADATA, METADATA_2_8
from metashell.kraft.writer import record
from metashell.replay import delta
from metashell.replay.batch_loader import TRANSACTION_RECORDS
from metashell.replay.entities import (acls, brokers, configs, features, producer_ids, quotas,
                                       scram, tokens, topics)
from tests.support.replay import Log, engine_over, leaves, write_snapshot
from tests.support.records import change, config, partition, topic, uid

ENTITY_MODULES = (acls, brokers, configs, features, producer_ids, quotas, scram, tokens, topics)


def test_every_metadata_record_type_has_one_rule_in_one_entity_module():
    owners = Counter(name for module in ENTITY_MODULES for name in module.REPLAY)
    assert [name for name, n in owners.items() if n > 1] == []
    names = {m.name for m in METADATA.values()} | {m.name for m in METADATA_2_8.values()}
    assert sorted(names - TRANSACTION_RECORDS - set(delta.RULES)) == []
    assert set(delta.RULES) == set(owners)


def snapshot_then_log(tmp_path: Path) -> list[Path]:
    """A snapshot of topics, each with configs and an ACL (kept unread by the
    fast path), then a log of partition changes only (kept pending), one
    naming a partition that does not exist."""
    records = []
    for n in range(3):
        tid = uid(n + 1)
        records += [topic(f"t{n}", tid), *[partition(tid, p) for p in range(4)]]
    records += [config(2, f"t{n}", "retention.ms", str(1000 * n)) for n in range(3)]
    records += [config(2, f"t{n}", "cleanup.policy", "compact") for n in range(3)]
    records.append(record("AccessControlEntryRecord", id=uid(50), resourceType=2, resourceName="t0",
                          patternType=3, principal="User:a", host="*", operation=3,
                          permissionType=3))
    snapshot = write_snapshot(tmp_path / "snap", 100, records)
    log = Log(base_offset=100)
    log.add(change(uid(1), 0, leader=2), change(uid(2), 3, isr=[1, 2]))
    log.add(change(uid(3), 1, leader=3), change(uid(3), 9, leader=1))
    return [snapshot, log.write(tmp_path / "log")]


def test_the_image_outlives_its_engine_and_is_freed_by_reference_counting(tmp_path):
    paths = snapshot_then_log(tmp_path)
    eager = engine_over(*paths, first_is_snapshot=True, snapshot_end=100)
    want = leaves(build_root(eager.image)), [str(p) for p in eager.problems]
    gc.disable()
    try:
        eng = engine_over(*paths, deferred=True, first_is_snapshot=True, snapshot_end=100)
        image, problems = eng.image, eng.problems
        assert sorted(image.kept_runs) == [4, 18]   # still lazy
        assert eng._changes.batches
        engine_gone = weakref.ref(eng)
        del eng
        assert engine_gone() is None
        got = leaves(build_root(image)), [str(p) for p in problems]
        assert got == want and not image.kept_runs
        image_gone = weakref.ref(image)
        del image
        assert image_gone() is None
    finally:
        gc.enable()
