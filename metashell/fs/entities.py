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
        t = image.topics.get(rest[0]) if head == "topicIds" else image.topic_by_name(rest[0])
        tid = t.topic_id if t is not None else (rest[0] if head == "topicIds" else None)
        if len(rest) >= 2 and rest[1] not in ("id", "name"):
            pid = plain_id(rest[1])
            return None if t is None or pid is None else t.partition_history(pid)
        return image.records(("topic", tid))
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
