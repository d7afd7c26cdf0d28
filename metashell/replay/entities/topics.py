"""Topics and their partitions (Kafka's ``TopicsDelta``).

Partition records are not merged here: each is filed, undecoded, under
its partition (``TopicState.partition_records``), and folded when someone
looks (:mod:`..folding`, Kafka's ``PartitionRegistration.merge``). The
fast path files most of them without a :class:`Record`
(:mod:`metashell.fast`)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import TopicState
from ..problems import ApplyError


def topic(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    tid, name = d["topicId"], d["name"]
    image = delta.image
    image.keep_history(tid)
    old = image.topics.get(tid)
    t = TopicState(name, tid, (rec.offset, rec.timestamp), source=delta.topic_source)
    delta.history(("topic", tid), rec)
    if old is not None and old.name != name and image.topic_names.get(old.name) == tid:
        del image.topic_names[old.name]
    image.topics[tid] = t
    image.topic_names[name] = tid


def decoded_key(rec: Record) -> "tuple[str, int] | None":
    """(topic id, partition id) of a partition record, from its fields; None
    when it cannot be decoded. The engine gives its delta the fast path's
    reading instead (``Delta.partition_key``), which reads a lazy record's
    key without decoding it."""
    d = rec.data
    return None if d is None else (d["topicId"], d["partitionId"])


def _key(delta, rec: Record) -> tuple[str, int]:
    key = delta.partition_key(rec)
    if key is None:
        raise ApplyError("undecodable")
    return key


def partition(delta, rec: Record) -> None:
    tid, pid = _key(delta, rec)
    t = delta.image.topics.get(tid)
    if t is None:
        raise ApplyError(f"unable to replay a PartitionRecord for topic id {tid}: no such topic")
    file_record(t.partition_records, pid, rec)
    if delta.on_change is not None:
        delta.on_change(("partition", tid, pid), rec)


def partition_change(delta, rec: Record) -> None:
    tid, pid = _key(delta, rec)
    t = delta.image.topics.get(tid)
    if t is None or pid not in t.partition_records:
        raise ApplyError(f"unable to find partition {tid}:{pid}")
    file_record(t.partition_records, pid, rec)
    if delta.on_change is not None:
        delta.on_change(("partition", tid, pid), rec)


def remove_topic(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    tid = d["topicId"]
    image = delta.image
    image.keep_history(tid)
    t = image.topics.pop(tid, None)
    delta.history(("topic", tid), rec)
    if t is None:
        raise ApplyError(f"unable to delete topic with id {tid}: no such topic found")
    image.removed_topics[tid] = t
    if image.topic_names.get(t.name) == tid:
        del image.topic_names[t.name]
    image.configs().pop(("topic", t.name), None)


def clear_elr(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    name = d["topicName"]
    if name:
        t = delta.image.topic_by_name(name)
        if t is None:
            raise ApplyError(f"unable to clear elr for topic with name {name}: no such topic found")
        topics = [t]
    else:
        topics = list(delta.image.topics.values())
    for t in topics:
        partitions = t.partition_records
        for pid in partitions:
            file_record(partitions, pid, rec)
    if delta.on_change is not None:
        delta.on_change(("topic", topics[0].topic_id) if name else ("topics",), rec)


def file_record(partitions: dict, pid: int, rec) -> None:
    """File a record (or a deferred ref) under a partition: a lone ref is
    kept bare, anything more as a list, oldest first."""
    cur = partitions.get(pid)
    if cur is None:
        partitions[pid] = [rec]
    elif type(cur) is list:
        cur.append(rec)
    else:
        partitions[pid] = [cur, rec]


REPLAY = {
    "TopicRecord": topic,
    "PartitionRecord": partition,
    "PartitionChangeRecord": partition_change,
    "RemoveTopicRecord": remove_topic,
    "ClearElrRecord": clear_elr,
}
