"""Partitions in the states operators look for, and each broker's load.

What ``kafka-topics --describe --under-replicated-partitions`` (and its
``--unavailable-partitions``, ``--under-min-isr-partitions``,
``--at-min-isr-partitions``) answers from a running cluster, answered
from the image: :data:`STATES` names each state and the test of a
partition for it; :func:`partition_rows` walks the topics in name order,
folding one topic at a time (memory stays that of one topic's partitions),
and yields the rows that are in any of the states asked for;
:func:`broker_load` counts what each broker leads and holds.

Each state is the one Kafka defines, read in its source: the filters of
TopicCommand's PartitionDescription (the same from 3.3 to 4.4: so one rule
serves every metadata.version), the controller's OfflinePartitionsCount and
PreferredReplicaImbalanceCount (PartitionRegistration.hasLeader and
hasPreferredLeader), and the broker's replication factor during a
reassignment (the replicas less those being added). The README's
"Partition states" section says each one and where it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..replay.image import PartitionState, TopicState
from .min_isr import MinIsr, MinIsrValue

_RECOVERING = 1   # leaderRecoveryState after an unclean leader election


@dataclass(slots=True)
class PartitionRow:
    """A partition, its topic's name, the min ISR that applies to it and
    whether its leader is a live broker (registered and not fenced: what
    ``kafka-topics`` gets from describeCluster)."""

    topic: str
    state: PartitionState
    min_isr: MinIsrValue
    leader_live: bool


def replication_factor(state: PartitionState) -> int:
    """The replicas less those being added: what Kafka compares the ISR
    with (kafka-topics' getReplicationFactor, the broker's
    UnderReplicatedPartitions), so that a reassignment in flight, whose
    new replicas are still catching up, is not under-replicated."""
    return len(state.replicas) - len(state.adding_replicas or ())


def under_replicated(state: PartitionState) -> bool:
    return len(state.isr) < replication_factor(state)


def under_min_isr(state: PartitionState, min_isr: int) -> bool:
    """kafka-topics --under-min-isr-partitions: no leader, or fewer in sync than the min."""
    return state.leader < 0 or len(state.isr) < min_isr


def _preferred(state: PartitionState) -> int:
    """The preferred leader: the first replica (-1 where there is none)."""
    return state.replicas[0] if state.replicas else -1


#: state name -> (what it means, its test)
STATES: dict[str, tuple[str, Callable[[PartitionRow], bool]]] = {
    "offline": ("no leader (the controller's OfflinePartitionsCount)",
                lambda r: r.state.leader < 0),
    "unavailable": ("no leader, or a leader that is not a live (registered, unfenced) broker",
                    lambda r: not r.leader_live),
    "under-replicated": ("fewer in sync than the replicas less those being added",
                         lambda r: under_replicated(r.state)),
    "under-min-isr": ("no leader, or fewer in sync than min.insync.replicas",
                      lambda r: under_min_isr(r.state, r.min_isr.value)),
    "at-min-isr": ("exactly min.insync.replicas in sync",
                   lambda r: len(r.state.isr) == r.min_isr.value),
    "unclean": ("led after an unclean election, still recovering",
                lambda r: r.state.leader_recovery_state == _RECOVERING),
    "reassigning": ("replicas being added or removed",
                    lambda r: bool(r.state.adding_replicas or r.state.removing_replicas)),
    "not-preferred-leader": ("not led by its first replica (leaderless ones too, as Kafka "
                             "counts them)",
                             lambda r: r.state.leader != _preferred(r.state)),
}

#: the states whose test reads min.insync.replicas
MIN_ISR_STATES = ("under-min-isr", "at-min-isr")


def topics_by_name(image) -> list[TopicState]:
    return sorted(image.topics.values(), key=lambda t: t.name)


def live_brokers(image) -> frozenset:
    """The ids of the registered brokers that are not fenced."""
    return frozenset(b for b, s in image.brokers.items() if not s.fenced)


def partition_rows(topics: Iterable[TopicState], min_isr: MinIsr, live: "frozenset[int]",
                   states: Iterable[str] = (), broker: "int | None" = None,
                   only: "Callable[[TopicState, int], bool] | None" = None) -> Iterator[PartitionRow]:
    """The partitions of ``topics`` (in their order, partitions by id) in
    any of ``states`` (all when none), holding ``broker`` as a replica or
    leader when given, and for which ``only(topic, partition id)`` holds;
    ``live``: the live brokers' ids (:func:`live_brokers`)."""
    tests = [STATES[s][1] for s in states]
    for topic in topics:
        for pid, state in topic.partitions().items():
            if only is not None and not only(topic, pid):
                continue
            if broker is not None and broker not in state.replicas and state.leader != broker:
                continue
            row = PartitionRow(topic.name, state, min_isr.of(topic.name, state.leader),
                               state.leader in live)
            if not tests or any(test(row) for test in tests):
                yield row


@dataclass(slots=True)
class BrokerLoad:
    """What one broker carries: the partitions it leads, those it holds a
    replica of, and those it would lead if every partition's preferred
    (first) replica led it."""

    broker: int
    leaders: int = 0
    replicas: int = 0
    preferred: int = 0

    @property
    def skew(self) -> int:
        """Leaders beyond (positive) or short of (negative) its preferred share."""
        return self.leaders - self.preferred


def broker_load(topics: Iterable[TopicState], brokers: Iterable[int]) -> dict[int, BrokerLoad]:
    """Broker id -> :class:`BrokerLoad`, for every registered broker and any
    other a partition names."""
    load = {b: BrokerLoad(b) for b in brokers}
    for topic in topics:
        for state in topic.partitions().values():
            for b in state.replicas:
                entry = load.get(b) or load.setdefault(b, BrokerLoad(b))
                entry.replicas += 1
            if state.replicas:
                first = state.replicas[0]
                (load.get(first) or load.setdefault(first, BrokerLoad(first))).preferred += 1
            if state.leader >= 0:
                leader = state.leader
                (load.get(leader) or load.setdefault(leader, BrokerLoad(leader))).leaders += 1
    return dict(sorted(load.items()))
