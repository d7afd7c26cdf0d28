"""min.insync.replicas as Kafka applies it to a partition, and where it came from.

Kafka takes a topic's min.insync.replicas from, in this order: the topic's
config; the broker's dynamic config (per broker, then the cluster default,
the broker ``<default>`` resource); the broker's static ``server.properties``;
its built-in default, 1. The metadata holds the first two; the static value
is not in it, so where the metadata sets none the value is one the user gave
(``--min-isr N``, or ``--broker-config FILE``: a ``server.properties``) or
else assumed to be the built-in 1, and said so: every value carries its
source (:class:`MinIsrValue`), and commands warn once when one was assumed.

The per-broker level is that of the broker leading the partition (the one
that refuses ``acks=all`` writes below it); ``kafka-topics`` asks whichever
broker answers its describeConfigs. From 4.0, a cluster with eligible leader
replicas enabled keeps a cluster-level value in the metadata and no
per-broker ones (KIP-966), so nothing is assumed there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, MetashellError
from ..loader.properties import PropertiesError, numbered_properties

NAME = "min.insync.replicas"
#: Kafka's built-in default
BUILT_IN_DEFAULT = 1

TOPIC, CLUSTER_DEFAULT, GIVEN, BROKER_CONFIG, BUILT_IN, ASSUMED = (
    "topic", "cluster default", "--min-isr", "--broker-config", "built-in default", "assumed")


@dataclass(frozen=True, slots=True)
class MinIsrValue:
    """A min.insync.replicas and its source: ``topic``, ``broker N``,
    ``cluster default``, ``--min-isr``, ``--broker-config``, ``built-in
    default`` (a ``--broker-config`` file that sets none) or ``assumed``."""

    value: int
    source: str

    @property
    def assumed(self) -> bool:
        return self.source == ASSUMED

    def text(self) -> str:
        return f"{self.value} ({self.source})"


#: nothing in the metadata and nothing given: Kafka's built-in default, assumed
ASSUMED_DEFAULT = MinIsrValue(BUILT_IN_DEFAULT, ASSUMED)


class MinIsr:
    """The min ISR of each partition, from the configs the metadata holds
    (``values``: what :meth:`ReplayEngine.config_values` gives for the
    name) and ``static``, the brokers' static value where the user gave one.
    ``assumed_topics`` collects the topics :meth:`of` answered by assuming."""

    def __init__(self, values: dict, static: "MinIsrValue | None" = None):
        self.topics: dict[str, MinIsrValue] = {}
        self.brokers: dict[int, MinIsrValue] = {}
        self.cluster: "MinIsrValue | None" = None
        self.static = static
        self.assumed_topics: set[str] = set()
        for (kind, name), value in values.items():
            number = _int(value)
            if number is None:
                continue
            if kind == "topic":
                self.topics[name] = MinIsrValue(number, TOPIC)
            elif kind == "broker" and name == "":
                self.cluster = MinIsrValue(number, CLUSTER_DEFAULT)
            elif kind == "broker" and name.isdigit():
                self.brokers[int(name)] = MinIsrValue(number, f"broker {name}")

    @property
    def fallback(self) -> MinIsrValue:
        """The value below the metadata's configs: the cluster default,
        else the static value given, else the assumed built-in default."""
        return self.cluster or self.static or ASSUMED_DEFAULT

    def of(self, topic: str, leader: int) -> MinIsrValue:
        found = self.topics.get(topic) or self.brokers.get(leader)
        if found is not None:
            return found
        found = self.fallback
        if found is ASSUMED_DEFAULT:
            self.assumed_topics.add(topic)
        return found

    def assumed_note(self) -> "str | None":
        """The one warning to give when a value was assumed (None if none was)."""
        return assumed_note(len(self.assumed_topics)) if self.assumed_topics else None


def assumed_note(topics: int) -> str:
    """The warning for a value assumed for ``topics`` topics."""
    which = "1 topic" if topics == 1 else f"{topics} topics"
    return (f"{NAME} assumed {BUILT_IN_DEFAULT} (Kafka's default) for {which}: no topic, "
            f"broker or cluster-default config in the metadata (a broker's server.properties "
            f"is not in it); give it with --min-isr N or --broker-config FILE")


def _int(value) -> "int | None":
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def static_value(min_isr: "int | None", broker_config: "str | None") -> "MinIsrValue | None":
    """The static value the user gave: ``--min-isr`` or the
    ``min.insync.replicas`` of the ``server.properties`` ``broker_config``
    (the built-in default where it sets none)."""
    if min_isr is not None:
        if min_isr < 1:
            raise MetashellError(f"--min-isr {min_isr}: a min.insync.replicas of at least 1")
        return MinIsrValue(min_isr, GIVEN)
    if broker_config is None:
        return None
    found = _last_set(Path(broker_config), NAME)
    if found is None:
        return MinIsrValue(BUILT_IN_DEFAULT, BUILT_IN)
    line, text = found
    number = _int(text)
    if number is None or number < 1:
        raise InputError(broker_config, f"line {line}: {NAME} must be a whole number of at "
                                        f"least 1, found {text!r}")
    return MinIsrValue(number, BROKER_CONFIG)


def _last_set(path: Path, key: str) -> "tuple[int, str] | None":
    """``(line number, value)`` of the last ``key`` the Java properties
    file ``path`` sets (a broker's ``server.properties``), None if none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(path, f"cannot read the broker config: {e.strerror or e}") from None
    try:
        found = [(number, value) for number, name, value in numbered_properties(text)
                 if name == key]
    except PropertiesError as e:
        raise InputError(path, str(e)) from None
    return found[-1] if found else None
