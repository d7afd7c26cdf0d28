"""What a PartitionChangeRecord does has one definition: ``merge_change``
in ``metashell/replay/partition_model.py``, made from the catalog there
(Kafka's ``PartitionRegistration.merge``),
which the general path folds with. The shortcuts that read a change's effect
from its bytes are checked against it here, for every version of the record
the catalog has:

* ``fast/partition_change.EFFECT`` (``summary`` over a log's pending
  changes): the ISR count and the leader's sign it reads are the merged
  partition's;
* ``fast/partition_change.change_counts``: the merged partition's ISR
  count and leader, or None (then the change is folded).

A version a shortcut does not read (its ``VERSIONS``) must be declined."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from metashell.kraft.catalog import METADATA
from metashell.kraft.framing import frame
from metashell.kraft.records import RESOLVED
from metashell.kraft.writer import encode_records
from metashell.fast import partition_change
from metashell.fast.partition_change import EFFECT, ISR, LEADER
from metashell.replay.partition_model import merge_change
from metashell.replay.image import PartitionState
from tests.support.partition_layouts import CHANGE_FIELDS, CHANGE_VERSIONS as VERSIONS, change_fields_of
from tests.support.records import change, uid



def start_state() -> PartitionState:
    """A partition led by 1 of [1, 2, 3], made by the model from a
    PartitionRecord of the newest version (so a field the catalog gains
    takes its default here)."""
    from metashell.replay.partition_model import partition_state

    record = METADATA[3]
    newest = max(v for v in range(64) if v in record.valid_range)
    d, _ = record.decode(newest, record.encode(newest, {
        "partitionId": 0, "topicId": uid(7), "replicas": [1, 2, 3], "isr": [1, 2, 3],
        "leader": 1, "leaderEpoch": 5, "partitionEpoch": 9,
        "directories": ["AAAAAAAAAAAAAAAAAAAAAQ"] * 3}))
    return partition_state(d, (0, 0))


@settings(max_examples=400, deadline=None)
@given(version=st.sampled_from(VERSIONS), values=CHANGE_FIELDS)
def test_the_shortcuts_say_what_merge_change_does(version, values):
    values = change_fields_of(version, values)
    payload, _ = encode_records([change(uid(7), 0, version=version, **values)])
    rend, _, _, _, _, _, vstart, vlen, _ = frame(payload, 0, len(payload), 0)
    decoded, _ = RESOLVED.get((1, 5, version))[1](payload[vstart:vstart + vlen], 3, vlen)
    before = start_state()
    merged = copy.deepcopy(before)
    rejected = merge_change(merged, decoded)

    m = EFFECT.fullmatch(payload, 0, rend)
    if version not in partition_change.VERSIONS["PartitionChangeRecord"].reads:
        assert m is None
    elif m is not None and rejected is None:
        effect = m.groups(b"")   # as findall gives them: b"" where the record leaves a field
        isr_count = len(before.isr) if effect[ISR] == b"" else effect[ISR][0] - 1
        assert isr_count == len(merged.isr)
        if effect[LEADER] == b"":
            assert merged.leader == before.leader
        else:
            assert (effect[LEADER][0] >= 0x80) == (merged.leader < 0)

    counts = partition_change.change_counts(payload, vstart, vstart + vlen, len(before.isr), before.leader)
    if version not in partition_change.VERSIONS["PartitionChangeRecord"].reads:
        assert counts is None
    elif counts is not None:
        assert rejected is None
        assert counts == (len(merged.isr), merged.leader)


def test_every_version_is_checked():
    assert VERSIONS == sorted(set(VERSIONS)) and VERSIONS[0] == 0
    assert set(VERSIONS) <= set(partition_change.VERSIONS["PartitionChangeRecord"].reads) | set(
        partition_change.VERSIONS["PartitionChangeRecord"].refuses)


# That every field of either record is in the partition model (its state, its JSON,
# merge_change, describe, the Spark columns): tests/unit/test_partition_model.py.
