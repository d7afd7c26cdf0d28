"""Controllers' logs, each written for the fast-path shortcut it exercises
(no tests here): what each holds is what its shortcut must read as the
general path does. Records: :mod:`tests.support.records`.
"""

from __future__ import annotations

import random
from pathlib import Path

from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.writer import record
from tests.support.records import change, config, feature, noop, partition, topic, uid
from tests.support.replay import TS0, Log

# a topic id whose 16 bytes are text, written into a config value too
ASCII_ID = uuid_to_str(b"QRSTUVWXYZabcdef")
# more topics than the reader's TOPIC_RUN_AFTER: its TopicRun is made on the way
SMALL_BATCH_TOPICS = 24


def random_changes_log(directory: Path, seed: int = 1) -> Path:
    """The log of pending changes (fast/pending.py, fast/change_batches.py):
    topics, then batches of changes only (some naming a partition or a
    topic that does not exist), heartbeats and config batches between them,
    a transaction of changes, a compressed batch of changes, a topic removed
    and made again, a ClearElr, and changes again after each of those."""
    rng = random.Random(seed)
    a, b, c, ghost = uid(1), uid(2), ASCII_ID, uid(9)
    sizes = {a: 4, b: 3, c: 5}
    log = Log()
    for name, tid in (("a", a), ("b", b), ("c", c)):
        log.add(topic(name, tid), *[partition(tid, p, replicas=(1, 2, 3)) for p in range(sizes[tid])])

    def changes(n):
        out = []
        for _ in range(n):
            tid = rng.choice((a, b, c, c))
            pid = rng.randrange(sizes[tid] + 1)          # one past the last: no such partition
            what = rng.randrange(3)
            out.append(change(tid, pid, leader=rng.choice((1, 2, 3))) if what == 0 else
                       change(tid, pid, isr=rng.sample((1, 2, 3), rng.randint(1, 3))) if what == 1
                       else change(tid, pid, leader=-2, isr=[1, 2, 3]))
        return out

    for _ in range(6):
        log.add(*changes(rng.randint(1, 5)))
        log.each(noop(), noop())
    log.add(config(2, "c", "note", "QRSTUVWXYZabcdef"))   # c's raw id, outside any change
    log.add(*changes(3), change(ghost, 0, leader=1))
    log.add(noop())
    log.add(record("BeginTransactionRecord", name="t"), *changes(2))
    log.add(record("EndTransactionRecord"))
    log.add(*changes(4))
    log.w.batch(changes(3), timestamp=TS0 + 500_000, codec=1)   # gzip: not kept unfiled
    log.add(*changes(2))
    log.add(record("RemoveTopicRecord", topicId=b))
    log.add(*changes(3))
    log.add(topic("b", b), partition(b, 0))
    log.add(*changes(4))
    log.add(record("ClearElrRecord", topicName="c"))
    for _ in range(4):
        log.add(*changes(rng.randint(1, 6)))
        log.each(noop())
    return log.write(directory)


def heartbeats_log(directory: Path, base: int = 0) -> tuple[Path, list[int]]:
    """The log of heartbeat runs (fast/noop_runs.py): heartbeats around partition changes, one alone between two changes,
    and a metadata transaction with heartbeats inside it; returns the
    segment and the offsets of the heartbeats."""
    a = uid(1)
    log = Log(base_offset=base)
    log.add(topic("a", a), *[partition(a, p) for p in range(3)])
    beats = log.each(*[noop() for _ in range(5)])
    log.add(change(a, 1, leader=2))
    beats += log.each(noop())
    log.add(change(a, 2, isr=[1, 2]), change(a, 0, leader=3))
    beats += log.each(*[noop() for _ in range(7)])
    log.add(record("BeginTransactionRecord", name="t"))
    beats += log.each(noop(), noop())
    log.add(change(a, 0, leader=1))
    log.add(record("EndTransactionRecord"))
    beats += log.each(*[noop() for _ in range(4)])
    return log.write(directory), beats


def small_batches_log(directory: Path, base: int = 0, *, partition_version: int | None = None) -> Log:
    """The log of small batches' runs (fast/batch_runs.py): topics created a batch each, heartbeats among them, then single
    changes among heartbeats, with a deletion between them, a change of an
    unknown topic, a batch mixing a heartbeat and changes, a topic created
    again and a change right after."""
    log = Log(base_offset=base)
    log.add(feature("metadata.version", 20))
    for t in range(SMALL_BATCH_TOPICS):
        log.add(topic(f"t{t:02d}", uid(t)), *[partition(uid(t), p, version=partition_version) for p in range(3)])
        if t % 3 == 1:
            log.add(noop())
    for i in range(40):
        t = i % 7
        log.add(change(uid(t), i % 3, leader=1 + i % 3))
        if i % 4 == 0:
            log.add(noop())
        if i == 10:
            log.add(record("RemoveTopicRecord", topicId=uid(2)))
        if i == 15:
            log.add(change(uid(99), 0, leader=1))                # no such topic
        if i == 20:
            log.add(noop(), change(uid(1), 1, isr=[1, 2]))      # a heartbeat and a change in one batch
        if i == 25:
            log.add(topic("t02", uid(2)), *[partition(uid(2), p) for p in range(3)])   # created again
            log.add(change(uid(2), 0, leader=3))
    log.write(directory)
    return log
