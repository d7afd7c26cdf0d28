"""What differs between two trees: the changes ``diff`` prints.

Both trees are walked together in listing order (child names merged, both
sorted the way ``ls`` sorts them), so the changes come out sorted by path.
A node only on one side is one change (``add`` or ``remove``) however big
its subtree; a file on both sides with different values is a ``modify``,
with the names of the fields that differ when both values are objects.

Partitions are where a big cluster's size is, so topics are compared
without listing them the way ``ls`` does (which folds every partition):
a topic that is the very same object on both sides (``diff`` against an
earlier point of the same replay) is skipped outright, and a partition is
folded only when its records differ on the two sides, either as the very
same filed entries or as the very same undecoded bytes (``diff`` against
another source).

Values are compared as the trees show them; a caller that must see changed
secrets compares trees built with secrets shown, and prints from trees
that redact them (:func:`~metashell.fs.node.lookup` finds the same path there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from .node import Node, sort_names
from .paths import to_text
from .tree import TopicDir, TopicsDir

ADD, REMOVE, MODIFY = "add", "remove", "modify"
_MISSING = object()
#: files whose null means "not known" rather than a value: a snapshot does not
#: say when a broker registered, so against a known time it is no change
_UNKNOWN_WHEN_NULL = frozenset({"registeredAt"})


#: fields of a file that a sibling file of their own shows: a change of them is
#: listed there only (a broker fenced or shutting down: one line, not two)
_SHOWN_ELSEWHERE = {("brokers", "registration"): ("fenced", "inControlledShutdown")}


@dataclass
class Change:
    parts: tuple            # path components from the root
    op: str                 # ADD, REMOVE or MODIFY
    fields: list = field(default_factory=list)   # MODIFY of two objects: the fields that differ

    @property
    def path(self) -> str:
        return to_text(self.parts)


def compare(old: "Node | None", new: "Node | None", parts: tuple = (), *,
            by_id: bool = False, skip=frozenset()) -> Iterator[Change]:
    """The changes from ``old`` to ``new`` (either may be None: absent), both
    at path ``parts``. ``by_id``: topics under ``/topics`` are matched by
    topic id, so a name whose id differs is a topic replaced (removed, then
    added), not modified. ``skip``: paths (tuples of components) left out."""
    if parts in skip:
        return
    if old is None or new is None:
        yield from _one_sided(old, new, parts)
        return
    if old.is_dir != new.is_dir:
        yield Change(parts, REMOVE)
        yield Change(parts, ADD)
        return
    if not old.is_dir:
        a, b = old.value(), new.value()
        if a != b and not ((a is None or b is None) and parts[-1] in _UNKNOWN_WHEN_NULL):
            fields = changed_fields(a, b)
            elsewhere = _SHOWN_ELSEWHERE.get((parts[0], parts[-1])) if len(parts) == 3 else None
            if elsewhere and fields:
                fields = [f for f in fields if f not in elsewhere]
                if not fields:   # a fencing or a controlled shutdown: its own file says it
                    return
            yield Change(parts, MODIFY, fields)
        return
    if isinstance(old, TopicDir) and isinstance(new, TopicDir):
        if by_id and old.topic.topic_id != new.topic.topic_id:
            yield Change(parts, REMOVE)
            yield Change(parts, ADD)
        else:
            yield from _compare_topic(old, new, parts)
        return
    same = _same_topic if isinstance(old, TopicsDir) and isinstance(new, TopicsDir) else None
    for name in sort_names(set(old.children()) | set(new.children())):
        if same is not None and same(old, new, name):
            continue
        yield from compare(old.child(name), new.child(name), parts + (name,), by_id=by_id,
                           skip=skip)


def _same_topic(old: TopicsDir, new: TopicsDir, name: str) -> bool:
    """Whether a topic is the very same object on both sides (an image rewound
    from the other shares what did not change): no node need be made for it."""
    t = old.topic(name)
    return t is not None and t is new.topic(name)


def _one_sided(old, new, parts: tuple) -> list:
    """The change of a node present on at most one side."""
    if old is not None:
        return [Change(parts, REMOVE)]
    return [Change(parts, ADD)] if new is not None else []


def changed_fields(a, b) -> list:
    """The keys whose values differ, when both values are objects."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return []
    return [k for k in _union(a, b) if a.get(k, _MISSING) != b.get(k, _MISSING)]


def _union(a: dict, b: dict) -> list:
    return list(a) + [k for k in b if k not in a]


def _compare_topic(old: TopicDir, new: TopicDir, parts: tuple) -> Iterator[Change]:
    """A topic on both sides, without folding a partition whose records are
    the same on both."""
    a, b = old.topic, new.topic
    if a is b:
        return
    ra, rb = a.partition_records, b.partition_records
    # partitions whose records are not the very same objects (an image rewound
    # from the other shares the rest), then those whose records differ
    differ = [pid for pid in rb if pid not in ra]
    maybe = [pid for pid, recs in ra.items() if rb.get(pid) is not recs and pid in rb]
    fa, fb = a.fingerprinter, b.fingerprinter
    if fa is None or fb is None:
        differ += maybe
    elif maybe:
        pa, pb = fa(ra, maybe), fb(rb, maybe)
        if pa != pb:
            differ += [pid for pid in maybe if pa[pid] != pb[pid]]
    differ += [pid for pid in ra if pid not in rb]
    for pid in sorted(differ):
        sa, sb = a.partition(pid), b.partition(pid)
        here = parts + (str(pid),)
        if sa is None or sb is None:
            yield from _one_sided(sa, sb, here)
            continue
        ja, jb = sa.to_json(), sb.to_json()
        if ja != jb:
            yield Change(here + ("data",), MODIFY, changed_fields(ja, jb))
    for leaf in ("id", "name"):
        yield from compare(old.child(leaf), new.child(leaf), parts + (leaf,))


def subtree_value(node: Node, shown: bool = False):
    """A node's value as ``tree -o json`` shows it: a file's value, or a
    directory as an object of its children's; ``shown``: as text output
    shows it (codes Kafka prints by name by their names)."""
    if not node.is_dir:
        return node.shown_value() if shown else node.value()
    out = {}
    for name in node.children():
        child = node.child(name)
        if child is not None:
            out[name] = subtree_value(child, shown)
    return out

