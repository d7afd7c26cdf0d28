"""Filing deferred partition records under their partitions, and the log's
pending changes when they are needed (:mod:`metashell.fast.pending`).

:class:`ChangeFiler` files a deferred record's ref as the general path's
rule files a record (``replay/entities/topics.py``), counts it, and reports
a change to a partition that does not exist as that rule would (to the
load's ``Tally``). It files into the replay's ``TopicState``s and knows the
image it files into by a weak reference: the image's topics ask it to file
their pending changes (through their ``source``,
:class:`~metashell.replay.folding.PartitionFolder`), and the image, not the
filer, owns what is filed, so that an image is freed by reference counting
when its load is dropped.
"""

from __future__ import annotations

import weakref

from ..gcpause import no_cyclic_gc
from ..kraft.primitives import UUID_TEXT, uuid_from_str
from . import deferred
from .deferred import API_KEY, PARTITION_ID, RAW_TOPIC_ID, REF
from .pending import PendingChanges
from .refs import Refs


class ChangeFiler:
    """Files deferred partition records, now or when they are needed."""

    def __init__(self, refs: Refs, tally):
        self.refs = refs
        self.tally = tally
        self.changes = PendingChanges(refs.store.buffer)
        self._image = None   # a weak reference to the image being built

    def file_into(self, image) -> None:
        """Pending changes are filed into ``image`` from now on (a snapshot
        begins a new one)."""
        self._image = weakref.ref(image)

    def file_one(self, rec: tuple, t) -> bool:
        """File one deferred partition record (``deferred.PARTITION``) under
        its topic ``t`` (for a change, a known partition); False (nothing
        filed) otherwise."""
        ref, api, pid = rec[REF], rec[API_KEY], rec[PARTITION_ID]
        partitions = t.partition_records
        cur = partitions.get(pid)
        if cur is None:
            if api != 3:
                return False
            partitions[pid] = ref
        elif type(cur) is list:
            cur.append(ref)
        else:
            partitions[pid] = [cur, ref]
        self.tally.count("PartitionRecord" if api == 3 else "PartitionChangeRecord", 1)
        return True

    def settle(self) -> None:
        """File every pending partition change, in log order."""
        if self.changes.batches:
            with no_cyclic_gc():
                for entries in self.changes.take_all():
                    self._file_changes(entries, None)

    def file_topic(self, t) -> None:
        """File the pending changes of topic ``t`` (its partitions are being
        looked at); all of them once searching costs more than that."""
        changes = self.changes
        changes.searched.add(t.topic_id)
        self._file_changes(changes.take_topic(uuid_from_str(t.topic_id)), t)
        if changes.over_budget():
            self.settle()

    def _file_changes(self, entries: list, topic) -> None:
        """File deferred change entries (None: taken already) under
        ``topic`` if given (they all name it) or under the topic each names."""
        image = self._image() if topic is None else None
        topics = image.topics if image is not None else {}
        file_one = self.file_one
        last_raw = None
        t = topic
        for entry in entries:
            if entry is None:
                continue
            if topic is None and entry[RAW_TOPIC_ID] != last_raw:
                last_raw = entry[RAW_TOPIC_ID]
                t = topics.get(UUID_TEXT[last_raw])
            for one in deferred.records(entry):
                if t is None or not file_one(one, t):
                    self._no_partition(one)

    def _no_partition(self, one: tuple) -> None:
        """A change to a partition that does not exist: reported in its
        turn, as the PartitionChangeRecord rule reports one."""
        rec = self.refs.record(one[REF])
        self.tally.problem(rec.offset, f"PartitionChangeRecord: unable to find partition "
                                       f"{UUID_TEXT[one[RAW_TOPIC_ID]]}:{one[PARTITION_ID]}")
