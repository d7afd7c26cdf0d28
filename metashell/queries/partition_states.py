"""Partitions in the states operators look for, and each broker's load.

What ``kafka-topics --describe --under-replicated-partitions`` (and its
``--unavailable-partitions``, ``--under-min-isr-partitions``,
``--at-min-isr-partitions``) answers from a running cluster, answered
from the image: :data:`STATES` names each state and the test of a
partition for it; :func:`partition_rows` walks the topics in name order,
folding one topic at a time (memory stays that of one topic's partitions),
and yields the rows that are in any of the states asked for;
:func:`broker_load` counts what each broker leads and holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..replay.image import PartitionState, TopicState

#: min.insync.replicas when no config sets one (Kafka's default)
DEFAULT_MIN_ISR = 1
_RECOVERING = 1   # leaderRecoveryState after an unclean leader election


@dataclass(slots=True)
class PartitionRow:
    """A partition, its topic's name and the min ISR that applies to it."""

    topic: str
    state: PartitionState
    min_isr: int


#: state name -> (what it means, its test)
STATES: dict[str, tuple[str, Callable[[PartitionRow], bool]]] = {
    "offline": ("no leader", lambda r: r.state.leader < 0),
    "under-replicated": ("fewer in-sync replicas than replicas",
                         lambda r: len(r.state.isr) < len(r.state.replicas)),
    "under-min-isr": ("fewer in-sync replicas than min.insync.replicas",
                      lambda r: len(r.state.isr) < r.min_isr),
    "at-min-isr": ("exactly min.insync.replicas in sync", lambda r: len(r.state.isr) == r.min_isr),
    "unclean": ("led after an unclean election, still recovering",
                lambda r: r.state.leader_recovery_state == _RECOVERING),
    "reassigning": ("replicas being added or removed",
                    lambda r: bool(r.state.adding_replicas or r.state.removing_replicas)),
    "not-preferred-leader": ("led by another broker than its first replica",
                             lambda r: r.state.leader >= 0 and bool(r.state.replicas)
                             and r.state.leader != r.state.replicas[0]),
}


class MinIsr:
    """min.insync.replicas as Kafka applies it to a partition: the topic's
    config, else the config of the broker that leads it, else the cluster
    default (the broker ``<default>`` resource), else 1. ``values`` is what
    :meth:`ReplayEngine.config_values` gives for the name."""

    def __init__(self, values: dict):
        self.topics: dict[str, int] = {}
        self.brokers: dict[int, int] = {}
        self.cluster = DEFAULT_MIN_ISR
        for (kind, name), value in values.items():
            number = _int(value)
            if number is None:
                continue
            if kind == "topic":
                self.topics[name] = number
            elif kind == "broker" and name == "":
                self.cluster = number
            elif kind == "broker" and name.isdigit():
                self.brokers[int(name)] = number

    def of(self, topic: str, leader: int) -> int:
        found = self.topics.get(topic)
        if found is not None:
            return found
        return self.brokers.get(leader, self.cluster)


def _int(value) -> "int | None":
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def topics_by_name(image) -> list[TopicState]:
    return sorted(image.topics.values(), key=lambda t: t.name)


def partition_rows(topics: Iterable[TopicState], min_isr: MinIsr, states: Iterable[str] = (),
                   broker: "int | None" = None,
                   only: "Callable[[TopicState, int], bool] | None" = None) -> Iterator[PartitionRow]:
    """The partitions of ``topics`` (in their order, partitions by id) in
    any of ``states`` (all when none), holding ``broker`` as a replica or
    leader when given, and for which ``only(topic, partition id)`` holds."""
    tests = [STATES[s][1] for s in states]
    for topic in topics:
        for pid, state in topic.partitions().items():
            if only is not None and not only(topic, pid):
                continue
            if broker is not None and broker not in state.replicas and state.leader != broker:
                continue
            row = PartitionRow(topic.name, state, min_isr.of(topic.name, state.leader))
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
