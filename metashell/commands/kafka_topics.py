"""``partitions --kafka``: the text ``kafka-topics --describe`` prints.

Without a state option, a header line per topic (``Topic: T\\tTopicId:
..\\tPartitionCount: ..\\tReplicationFactor: ..\\tConfigs: ..``) and its
partitions, each line starting with a tab; with one, only the partitions
(Kafka prints no header then). ``Adding Replicas:`` and ``Removing
Replicas:`` are printed, empty or not, while a partition is reassigned, and
before ``Elr:`` / ``LastKnownElr:``, which are printed on every line from
metadata.version 3.8 on (the releases whose kafka-topics asks for them with
DescribeTopicPartitions), else only where not empty.

What differs from Kafka's, by design: topics come in name order (Kafka's
follow a hash map); a header's ``Configs`` are the topic's own configs and
the cluster-wide broker defaults under their topic names, in name order:
Kafka's also hold the dynamic and static (``server.properties``) configs of
whichever broker its client asked, which the metadata cannot say.
"""

from __future__ import annotations

from metashell.queries.partition_states import PartitionRow

#: metadata.version level of 3.8-IV0: kafka-topics of 3.8 and later prints Elr on every line
ELR_PRINTED_FROM = 20
_MS = {"ms": 1, "minutes": 60_000, "hours": 3_600_000}

# topic config -> the broker configs that give its default, strongest first
# (Kafka's topic config synonyms); a "(name, unit)" pair scales hours/minutes to ms
TOPIC_SYNONYMS: "dict[str, tuple]" = {
    "cleanup.policy": ("log.cleanup.policy",),
    "compression.type": ("compression.type",),
    "compression.gzip.level": ("compression.gzip.level",),
    "compression.lz4.level": ("compression.lz4.level",),
    "compression.zstd.level": ("compression.zstd.level",),
    "delete.retention.ms": ("log.cleaner.delete.retention.ms",),
    "file.delete.delay.ms": ("log.segment.delete.delay.ms",),
    "flush.messages": ("log.flush.interval.messages",),
    "flush.ms": ("log.flush.interval.ms",),
    "index.interval.bytes": ("log.index.interval.bytes",),
    "local.retention.bytes": ("log.local.retention.bytes",),
    "local.retention.ms": ("log.local.retention.ms",),
    "max.compaction.lag.ms": ("log.cleaner.max.compaction.lag.ms",),
    "max.message.bytes": ("message.max.bytes",),
    "message.downconversion.enable": ("log.message.downconversion.enable",),
    "message.timestamp.after.max.ms": ("log.message.timestamp.after.max.ms",),
    "message.timestamp.before.max.ms": ("log.message.timestamp.before.max.ms",),
    "message.timestamp.difference.max.ms": ("log.message.timestamp.difference.max.ms",),
    "message.timestamp.type": ("log.message.timestamp.type",),
    "min.cleanable.dirty.ratio": ("log.cleaner.min.cleanable.ratio",),
    "min.compaction.lag.ms": ("log.cleaner.min.compaction.lag.ms",),
    "min.insync.replicas": ("min.insync.replicas",),
    "preallocate": ("log.preallocate",),
    "retention.bytes": ("log.retention.bytes",),
    "retention.ms": ("log.retention.ms", ("log.retention.minutes", "minutes"),
                     ("log.retention.hours", "hours")),
    "segment.bytes": ("log.segment.bytes",),
    "segment.index.bytes": ("log.index.size.max.bytes",),
    "segment.jitter.ms": ("log.roll.jitter.ms", ("log.roll.jitter.hours", "hours")),
    "segment.ms": ("log.roll.ms", ("log.roll.hours", "hours")),
    "unclean.leader.election.enable": ("unclean.leader.election.enable",),
}


def elr_on_every_line(image) -> bool:
    """Whether kafka-topics of the cluster's release prints Elr and
    LastKnownElr on every line (metadata.version 3.8 or later)."""
    mv = image.features.get("metadata.version")
    return mv is not None and isinstance(mv.value, int) and mv.value >= ELR_PRINTED_FROM


def broker_defaults_as_topic_configs(cluster_default: dict) -> "dict[str, str]":
    """The cluster-wide broker defaults ({broker config: value}) under the
    topic config names they give defaults for."""
    out = {}
    for topic_name, synonyms in TOPIC_SYNONYMS.items():
        for synonym in synonyms:
            name, unit = synonym if isinstance(synonym, tuple) else (synonym, "ms")
            value = cluster_default.get(name)
            if value is None:
                continue
            out[topic_name] = value if unit == "ms" else _scaled(value, _MS[unit])
            break
    return out


def _scaled(value: str, factor: int) -> str:
    try:
        return str(int(value) * factor)
    except ValueError:
        return value


def topic_configs(image, topic_name: str, defaults: "dict[str, str]") -> "dict[str, str]":
    """A topic's configs as its header shows them: the broker defaults
    (``broker_defaults_as_topic_configs``) overridden by its own."""
    own = {k: e.value for k, e in image.configs().get(("topic", topic_name), {}).items()
           if e.value is not None}
    return {**defaults, **own}


def header_line(topic, configs: "dict[str, str]") -> str:
    """A topic's header line (Kafka's replication factor: the first
    partition's replicas without those being added)."""
    partitions = topic.partitions()
    first = partitions[min(partitions)] if partitions else None
    rf = 0 if first is None else len(first.replicas) - len(first.adding_replicas or ())
    text = ",".join(f"{k}={v}" for k, v in sorted(configs.items()))
    return (f"Topic: {topic.name}\tTopicId: {topic.topic_id}\tPartitionCount: {len(partitions)}"
            f"\tReplicationFactor: {rf}\tConfigs: {text}")


def _ids(values) -> str:
    return ",".join(map(str, values or ()))


def partition_line(row: PartitionRow, elr_always: bool) -> str:
    """A partition as kafka-topics prints it, starting with a tab."""
    s = row.state
    leader = str(s.leader) if s.leader >= 0 else "none"
    text = (f"\tTopic: {row.topic}\tPartition: {s.partition_id}\tLeader: {leader}\t"
            f"Replicas: {_ids(s.replicas)}\tIsr: {_ids(s.isr)}")
    if s.adding_replicas or s.removing_replicas:
        text += (f"\tAdding Replicas: {_ids(s.adding_replicas)}"
                 f"\tRemoving Replicas: {_ids(s.removing_replicas)}")
    if elr_always or s.elr or s.last_known_elr:
        text += f"\tElr: {_ids(s.elr)}\tLastKnownElr: {_ids(s.last_known_elr)}"
    return text


def kafka_lines(image, topics, rows, with_headers: bool):
    """The lines of ``rows`` (partitions of ``topics``, in order), each
    topic's header first when ``with_headers``."""
    elr_always = elr_on_every_line(image)
    defaults = {}
    if with_headers:
        cluster = {k: e.value for k, e in image.configs().get(("broker", ""), {}).items()
                   if e.value is not None}
        defaults = broker_defaults_as_topic_configs(cluster)
    by_name = {t.name: t for t in topics}
    current = None
    for row in rows:
        if with_headers and row.topic != current:
            current = row.topic
            topic = by_name[current]
            yield header_line(topic, topic_configs(image, current, defaults))
        yield partition_line(row, elr_always)
