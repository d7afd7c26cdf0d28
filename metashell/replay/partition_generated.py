"""The partition model's code, generated from the catalog's PartitionRecord
and PartitionChangeRecord by ``metashell.replay.partition_model.generated_source``:
do not edit. ``python -m metashell.replay.partition_model`` writes it again (after
a change to the catalog or to the model's rules; tests/unit/test_partition_model.py
fails until then, while the model runs the source it makes at import).

What a partition holds (:class:`PartitionState`), how a PartitionRecord makes
it (:func:`partition_state`), what a PartitionChangeRecord does to it
(:func:`merge_change`, Kafka's ``PartitionRegistration.merge``), its JSON
(``PartitionState.to_json``) and the values of its text (:func:`text_args`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kraft import enums
from .partition_values import default_to_migrating, encode_str, ints_text, named_text, uuids_text


@dataclass
class PartitionState:
    """A partition's registration after folding its records: one attribute
    per PartitionRecord field (see metashell.replay.partition_model)."""

    partition_id: int
    topic_id: str
    replicas: list
    isr: list
    removing_replicas: list
    adding_replicas: list
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    directories: list
    elr: list
    last_known_elr: list
    change: tuple   # (offset, timestamp) of the record that last changed it
    # tagged fields of its records the catalog does not know: [[tag, raw bytes]], by tag
    unknown_tags: "list | None" = None

    def to_json(self):
        """The partition as the tree shows it (``/topics/<name>/<id>/data``)."""
        out = {
            'partitionId': self.partition_id,
            'topicId': self.topic_id,
            'replicas': self.replicas,
            'isr': self.isr,
            'removingReplicas': self.removing_replicas,
            'addingReplicas': self.adding_replicas,
            'leader': self.leader,
            'leaderRecoveryState': self.leader_recovery_state,
            'leaderEpoch': self.leader_epoch,
            'partitionEpoch': self.partition_epoch,
            'directories': self.directories,
            'eligibleLeaderReplicas': self.elr,
            'lastKnownElr': self.last_known_elr,
        }
        if self.unknown_tags:   # shown, not dropped: a newer Kafka's field this catalog lacks
            out['_unknownTaggedFields'] = self.unknown_tags
        return out


def partition_state(d, change):
    """A partition's state from a PartitionRecord's fields ``d``, changed at ``change``."""
    replicas = d['replicas']
    state = PartitionState(   # positional, in field order: -6% time for a full walk
        d['partitionId'],
        d['topicId'],
        replicas,
        d['isr'],
        (d['removingReplicas'] or []),
        (d['addingReplicas'] or []),
        d['leader'],
        d.get('leaderRecoveryState', 0),
        d['leaderEpoch'],
        d['partitionEpoch'],
        default_to_migrating(d.get("directories"), len(replicas)),
        (d.get('eligibleLeaderReplicas') or []),
        (d.get('lastKnownElr') or []),
        change)
    unknown = d.get('_unknownTaggedFields')
    if unknown:
        state.unknown_tags = [[tag, raw] for tag, raw in sorted(unknown)]
    return state


def merge_change(s, d):
    """Merge a PartitionChangeRecord's fields ``d`` into state ``s`` (Kafka's
    PartitionRegistration.merge); returns why Kafka would reject it instead
    (nothing is changed then), else None."""
    replicas = d.get('replicas')
    if replicas is None:
        replicas = s.replicas
    dirs = d.get("directories")
    directories = default_to_migrating(s.directories if dirs is None else dirs, len(replicas))
    if len(directories) != len(replicas):
        return f"{len(directories)} directories for {len(replicas)} replicas"
    s.replicas = replicas
    s.directories = directories
    isr = d['isr']
    if isr is not None:
        s.isr = isr
    leader = d['leader']
    if leader != -2:
        s.leader = leader
        s.leader_epoch += 1
    removing_replicas = d.get('removingReplicas')
    if removing_replicas is not None:
        s.removing_replicas = removing_replicas
    adding_replicas = d.get('addingReplicas')
    if adding_replicas is not None:
        s.adding_replicas = adding_replicas
    leader_recovery_state = d.get('leaderRecoveryState', -1)
    if leader_recovery_state != -1:
        s.leader_recovery_state = leader_recovery_state
    elr = d.get('eligibleLeaderReplicas')
    if elr is not None:
        s.elr = elr
    last_known_elr = d.get('lastKnownElr')
    if last_known_elr is not None:
        s.last_known_elr = last_known_elr
    unknown = d.get('_unknownTaggedFields')
    if unknown:   # the last value of each tag the catalog does not know
        merged = {**dict(s.unknown_tags or ()), **dict(unknown)}
        s.unknown_tags = [[tag, merged[tag]] for tag in sorted(merged)]
    s.partition_epoch += 1
    return None


def text_args(s, nl):
    """The values of a state's text, in field order, as data_text's format takes them."""
    return (
        s.partition_id,
        encode_str(s.topic_id),
        ints_text(s.replicas, nl),
        ints_text(s.isr, nl),
        ints_text(s.removing_replicas, nl),
        ints_text(s.adding_replicas, nl),
        s.leader,
        named_text(s.leader_recovery_state, enums.LEADER_RECOVERY_STATES),
        s.leader_epoch,
        s.partition_epoch,
        uuids_text(s.directories, nl),
        ints_text(s.elr, nl),
        ints_text(s.last_known_elr, nl),
    )
