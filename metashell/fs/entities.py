"""Entities and tree paths, both ways.

The replay engine files the records that changed an entity under an entity
key (``("broker", 1)``, ``("topic", id)``, ...: ``Image.history``). The
``changes`` command goes from a tree path to those records
(:func:`entity_records`); ``watch`` goes from the key of a record just
applied to the path where its change shows (:func:`entity_path`).
"""

from __future__ import annotations

from .image_view import native_parts
from .old_paths import native_parts as old_native_parts
from .paths import plain_id, to_text
from .tree import DEFAULT_NAME


def entity_records(image, parts: list[str]) -> list | None:
    """Map a tree path to the records of the entity it shows (None if none)."""
    if not parts:
        return None
    parts = old_native_parts(parts)
    if parts[0] == "image":
        parts = native_parts(parts[1:])
        if parts is None:
            return None
    head, rest = parts[0], parts[1:]
    image.settle()
    h = image.history
    if head in ("topics", "topicIds") and rest:
        return _topic_records(image, _topic_states(image, head == "topicIds", rest[0]), rest[1:])
    if head in ("brokers", "controllers") and rest and plain_id(rest[0]) is not None:
        return h.get((head[:-1], plain_id(rest[0])))
    if head == "configs" and len(rest) >= 2:
        return image.records(("config", rest[0], "" if rest[1] == DEFAULT_NAME else rest[1]))
    if head == "clientQuotas" and rest:
        pairs = []
        for i in range(0, len(rest) - 1, 2):
            pairs.append((rest[i], None if rest[i + 1] == DEFAULT_NAME else rest[i + 1]))
        return h.get(("quota", tuple(sorted(pairs))))
    if head == "acls" and rest:
        return h.get(("acl", rest[0]))
    if head == "features" and rest:
        return h.get(("feature", rest[0]))
    if head == "producerIds":
        return h.get(("producerIds",))
    if head == "scram" and len(rest) >= 2:
        return h.get(("scram", rest[0], rest[1]))
    if head == "delegationTokens" and rest:
        return h.get(("token", rest[0]))
    if head == "metadataQuorum":
        return h.get(("quorum",))
    return None


def _topic_states(image, by_id: bool, key: str) -> list:
    """The topic a path names: the live one, else those removed under that
    name (or that id) since the snapshot, oldest first: a deleted topic's
    history is found by its name."""
    live = image.topics.get(key) if by_id else image.topic_by_name(key)
    if live is not None:
        return [live]
    removed = image.removed_topics
    if by_id:
        return [removed[key]] if key in removed else []
    return [t for t in removed.values() if t.name == key]


def _topic_records(image, states: list, rest: list[str]) -> list | None:
    """A topic's history (its own records and its partitions', one list in
    offset order: ``log --entity`` keeps the same records), or one
    partition's (``rest``: the path below the topic)."""
    if not states:
        return None
    if rest and rest[0] not in ("id", "name"):
        pid = plain_id(rest[0])
        found = [t.partition_history(pid) for t in states] if pid is not None else []
        found = [recs for recs in found if recs is not None]
        return None if not found else sorted((r for recs in found for r in recs),
                                             key=lambda r: r.offset)
    records = []
    for t in states:
        records.extend(image.records(("topic", t.topic_id)) or ())
        for pid in sorted(t.partition_records):
            records.extend(t.partition_history(pid) or ())
    return sorted(records, key=lambda r: r.offset)


def _topic_name(image, tid: str) -> str:
    """A topic's name, also just after its RemoveTopicRecord (from the
    TopicRecord in its history); the id when no name is known."""
    t = image.topics.get(tid)
    if t is not None:
        return t.name
    for rec in image.records(("topic", tid)) or ():
        d = rec.data if rec.name == "TopicRecord" else None
        if d is not None:
            return d["name"]
    return tid


def entity_path(image, key: tuple) -> str:
    """The tree path where the entity of ``key`` shows (``/`` for a key
    this does not know)."""
    kind, rest = key[0], key[1:]
    if kind == "topic":
        parts = ["topics", _topic_name(image, rest[0])]
    elif kind == "partition":
        parts = ["topics", _topic_name(image, rest[0]), str(rest[1])]
    elif kind == "topics":
        parts = ["topics"]
    elif kind == "broker":
        parts = ["brokers", str(rest[0])]
    elif kind == "controller":
        parts = ["controllers", str(rest[0])]
    elif kind == "config":
        parts = ["configs", rest[0], rest[1] or DEFAULT_NAME]
    elif kind == "quota":
        parts = ["clientQuotas"]
        for etype, ename in rest[0]:
            parts += [etype, DEFAULT_NAME if ename is None else ename]
    elif kind == "acl":
        parts = ["acls", rest[0]]
    elif kind == "feature":
        parts = ["features", rest[0]]
    elif kind == "producerIds":
        parts = ["producerIds"]
    elif kind == "scram":
        parts = ["scram", rest[0], rest[1]]
    elif kind == "token":
        parts = ["delegationTokens", rest[0]]
    elif kind == "quorum":
        parts = ["metadataQuorum"]
    else:
        parts = []
    return to_text(parts)
