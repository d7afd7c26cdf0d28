"""``/image``: Kafka 3.5+'s shell tree (the newest release's paths) as a
second view over the same image the native tree shows.

Nothing is replayed twice: every node reads the one :class:`View` the native
tree reads, so a live session's new image shows here too. Names list in
Java's ``String.compareTo`` order, as Kafka lists them. A file's ``value()``
is the native tree's structured value (what ``-o json`` prints, the same
fields), its ``text()`` Kafka's string for it (:mod:`.kafka_text`).

Paths (Kafka 4.3): ``acls/byId/<uuid>``, ``clientQuotas/<entity>/<key>``,
``cluster/{brokers,controllers}/<id>``, ``configs/<TYPE>[:<name>]/<key>``,
``delegationToken/<id>``, ``features/{metadataVersion,finalized_<name>}``,
``producerIds/nextProducerId``, ``provenance``, ``scram/<mechanism>/<user>``,
``topics/{byName/<name>,byId/<uuid>}/{id,name,<partition>}``.
"""

from __future__ import annotations

from ..kraft import enums
from ..timefmt import iso_time
from . import kafka_text as kt
from .bulk import Bulk
from .node import Node, TextLeaf
from .tree import (DEFAULT_NAME, existing_partitions, View, ViewDir, acl_value, broker_registration, controller_value,
                   scram_value, token_value)

METADATA_VERSION_FEATURE = "metadata.version"
FINALIZED = "finalized_"
ENTITY_TYPES = (("client-id", "clientId"), ("ip", "ip"), ("user", "user"))
# Kafka's ConfigResource.Type names by the native tree's directory names
CONFIG_TYPES = {tree: enums.CONFIG_RESOURCE_TYPES[code]
                for code, tree in enums.CONFIG_RESOURCE_TREE_NAMES.items()}


class _ImageDir(ViewDir, Bulk):
    """A directory of the view: ``_entries()`` maps names to node factories,
    listed in Java's order (its :class:`Bulk` entries make the mapping once)."""

    def _entries(self) -> dict:
        return {}

    def children(self) -> list[str]:
        return kt.java_sorted(self._entries())

    def child(self, name: str):
        make = self._entries().get(name)
        return make() if make is not None else None

    def bulk(self):
        return self

    def entries(self):
        """Every child, from one ``_entries()`` (a lookup by name each would
        make the mapping once per child: quadratic in a big ``configs``)."""
        made = self._entries()
        for name in kt.java_sorted(made):
            node = made[name]()
            if node is not None:
                yield name, node


def image_dir(view: View) -> Node:
    """The ``/image`` directory over ``view`` (the native tree's view)."""
    return ImageDir("image", view)


class ImageDir(_ImageDir):
    def _entries(self):
        v = self.view
        return {
            "acls": lambda: AclsDir("acls", v),
            "clientQuotas": lambda: QuotasDir("clientQuotas", v),
            "cluster": lambda: ClusterDir("cluster", v),
            "configs": lambda: ConfigsDir("configs", v),
            "delegationToken": lambda: TokensDir("delegationToken", v),
            "features": lambda: FeaturesDir("features", v),
            "producerIds": lambda: ProducerIdsDir("producerIds", v),
            "provenance": lambda: provenance_leaf(v),
            "scram": lambda: ScramDir("scram", v),
            "topics": lambda: TopicsDir("topics", v),
        }

    def last_change(self):
        img = self.image
        return (img.last_offset, img.last_time) if img.last_offset >= 0 else None


def provenance_leaf(view: View) -> Node:
    """The offset, epoch and time of the last data batch applied: log offsets,
    also for a snapshot (Kafka's shell shows a snapshot's offsets inside the
    file); control batches after it (a new leader's LeaderChange, KRaftVersion,
    Voters) do not move them: Kafka's shell's loader never sees a control
    batch. Its text gives, for a snapshot with nothing applied after it, the
    time its batches were appended, as Kafka's shell does; its JSON the time
    of the last record of that batch (a snapshot and the log replayed to its
    end give the same)."""
    img = view.image
    offset, epoch, ms = img.data_offset, img.last_epoch, img.data_time
    value = {"offset": offset, "epoch": epoch, "time": iso_time(ms)}
    shown = ms
    if img.snapshot_written >= 0 and offset <= img.snapshot_offset:
        shown = img.snapshot_written
    return TextLeaf("provenance", value, text=lambda: kt.provenance(offset, epoch, shown))


# -- cluster ------------------------------------------------------------------------


class ClusterDir(_ImageDir):
    def _entries(self):
        return {"brokers": lambda: BrokersDir("brokers", self.view),
                "controllers": lambda: ControllersDir("controllers", self.view)}


class BrokersDir(_ImageDir):
    def _entries(self):
        return {str(i): (lambda b=b: self._leaf(b)) for i, b in self.image.brokers.items()}

    def _leaf(self, b) -> Node:
        value = broker_registration(b)
        return TextLeaf(str(b.broker_id), value, text=lambda: kt.broker(value), change=b.change)


class ControllersDir(_ImageDir):
    def _entries(self):
        return {str(i): (lambda c=c: self._leaf(c)) for i, c in self.image.controllers.items()}

    def _leaf(self, c) -> Node:
        value = controller_value(c)
        return TextLeaf(str(c.controller_id), value, text=lambda: kt.controller(value),
                         change=c.change)


# -- topics -------------------------------------------------------------------------


# the most text of topics ``tree /image/topics`` keeps between its two indexes
KEEP_BYTES = 512 << 20


class TopicsDir(_ImageDir):
    def _entries(self):
        return {"byName": lambda: TopicIndexDir("byName", self.view, by_id=False),
                "byId": lambda: TopicIndexDir("byId", self.view, by_id=True)}

    def tree_lines(self, indent):
        return self._tree_lines(indent)

    def _tree_lines(self, indent):
        """``byId`` and ``byName`` as walking them prints them, each topic's
        text made once: the second index shows it again from the first's,
        kept (up to ``KEEP_BYTES`` of it; the rest is made again), not folded
        again."""
        pad, deeper = " " * indent, " " * (indent + 2)
        made: "dict[str, list[str]]" = {}
        room = KEEP_BYTES
        for index in self.children():
            yield f"{pad}{index}:"
            topics = self.child(index)
            for name in topics.children():
                topic = topics.topic(name)
                if topic is None:
                    continue
                yield f"{deeper}{name}:"
                pieces = made.pop(topic.topic_id, None)
                if pieces is None:
                    pieces = TopicDir(name, self.view, topic).tree_lines(indent + 4)
                    size = sum(map(len, pieces))
                    if size <= room:
                        made[topic.topic_id] = pieces
                        room -= size
                yield from pieces


class TopicIndexDir(ViewDir):
    def __init__(self, name, view, by_id: bool):
        super().__init__(name, view)
        self.by_id = by_id

    def children(self):
        return kt.java_sorted(self.image.topics if self.by_id else self.image.topic_names)

    def topic(self, name):
        """The topic (``TopicState``) named ``name`` here, or None."""
        img = self.image
        return img.topics.get(name) if self.by_id else img.topic_by_name(name)

    def child(self, name):
        t = self.topic(name)
        return TopicDir(name, self.view, t) if t is not None else None


class TopicDir(ViewDir, Bulk):
    """``id``, ``name`` and one file per partition (its :class:`Bulk`: its
    partitions' names and Kafka's text of them made at once)."""

    def __init__(self, name, view, topic):
        super().__init__(name, view)
        self.topic = topic
        self._states: dict | None = None   # partition name -> folded state, once listed

    def children(self):
        self._states = {str(p): state for p, state in self.topic.partitions().items()}
        return kt.java_sorted([*self._states, "id", "name"])

    def child(self, name):
        t = self.topic
        if name in ("id", "name"):
            value = t.topic_id if name == "id" else t.name
            return TextLeaf(name, value, text=value, change=t.change)
        if self._states is not None:
            state = self._states.get(name)
        elif not name.isdigit() or name != str(int(name)):
            return None
        else:
            state = t.partition(int(name)) if int(name) in t.partition_records else None
        if state is None:
            return None
        return TextLeaf(name, compute=state.to_json, text=lambda: kt.partition(state),
                        change=state.change)

    def bulk(self):
        return self

    def subtree_names(self, memo):
        """Its files as a walk reaches them (partitions, ``id`` and ``name``
        in Java's order; all files), from :func:`existing_partitions`
        (shared by the walk's views of the topic). Assumes the listing is
        the topic's existing partitions, as :meth:`children` gives them."""
        names = [str(p) for p in existing_partitions(self.topic, memo)]
        return [(name, False) for name in kt.java_sorted([*names, "id", "name"])]

    def tree_lines(self, indent):
        """What walking the topic prints, without a node per partition
        (``tree /image/topics`` shows every partition twice, by name and by
        id), in pieces of up to a thousand lines."""
        t = self.topic
        partition = kt.partition
        # Kafka's text, made from a run's bytes where it can be (kafka_text.RUN_REGISTRATIONS)
        texts = {str(p): got if type(got) is str else partition(got)
                 for p, got in t.texts_made_by(kt.RUN_REGISTRATIONS).items()}
        pad, inner = " " * indent, "\n" + " " * (indent + 2)
        out = []
        for name in kt.java_sorted([*texts, "id", "name"]):
            text = texts.get(name)
            if text is None:
                text = t.topic_id if name == "id" else t.name
            out.append(f"{pad}{name}:{inner}{text}")
        return ["\n".join(out[i:i + 500]) for i in range(0, len(out), 500)]

    def last_change(self):
        return self.topic.change


# -- configs and quotas --------------------------------------------------------------


def config_dir_name(rtype: str, rname: str) -> str:
    """``TOPIC:foo``, or the bare type for the default resource (empty name)."""
    kafka = CONFIG_TYPES.get(rtype, "UNKNOWN")
    return f"{kafka}:{rname}" if rname else kafka


class ConfigsDir(_ImageDir):
    def _entries(self):
        return {config_dir_name(rtype, rname): (lambda k=(rtype, rname): self._dir(k))
                for rtype, rname in self.image.configs()}

    def _dir(self, key) -> Node:
        return ConfigDir(config_dir_name(*key), self.view, key)


class ConfigDir(_ImageDir):
    def __init__(self, name, view, key: tuple):
        super().__init__(name, view)
        self.key = key

    def _entries(self):
        keys = self.image.configs().get(self.key, {})
        return {k: (lambda k=k, e=e: self._leaf(k, e)) for k, e in keys.items()}

    def _leaf(self, key, ent) -> Node:
        value = ent.value
        if enums.is_sensitive_config(key):
            value = self.view.secret(value)
        return TextLeaf(key, value, text="null" if value is None else value, change=ent.change)


def quota_entity_name(entity: tuple) -> str:
    """``clientId(x)_ip(y)_user(z)`` (that order, absent types left out; ``\\``,
    ``(`` and ``)`` escaped); a default name is ``<default>``, where Kafka's
    shell leaves the type out (``user`` alone becomes an empty name)."""
    names = dict(entity)
    parts = []
    for etype, label in ENTITY_TYPES:
        if etype in names:
            name = names[etype]
            parts.append(f"{label}({DEFAULT_NAME if name is None else _escape(name)})")
    return "_".join(parts)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


class QuotasDir(_ImageDir):
    def _entries(self):
        return {quota_entity_name(e): (lambda e=e: self._dir(e)) for e in self.image.quotas()}

    def _dir(self, entity) -> Node:
        return QuotaDir(quota_entity_name(entity), self.view, entity)


class QuotaDir(_ImageDir):
    def __init__(self, name, view, entity: tuple):
        super().__init__(name, view)
        self.entity = entity

    def _entries(self):
        values = self.image.quotas().get(self.entity, {})
        return {k: (lambda k=k, e=e: TextLeaf(k, e.value, text=lambda: kt.java_double(e.value),
                                               change=e.change))
                for k, e in values.items()}


# -- ACLs, features, producer ids, SCRAM, tokens -------------------------------------


class AclsDir(_ImageDir):
    def _entries(self):
        return {"byId": lambda: AclsByIdDir("byId", self.view)}


class AclsByIdDir(ViewDir):
    def children(self):
        return kt.java_sorted(self.image.acls())

    def child(self, name):
        ent = self.image.acls().get(name)
        if ent is None:
            return None
        value = acl_value(ent.value)
        return TextLeaf(name, value, text=lambda: kt.acl(value), change=ent.change)


class FeaturesDir(_ImageDir):
    """``metadataVersion`` (plain, where Kafka 4.x prints ``Optional[…]``) and
    ``finalized_<name>`` per other feature (a name that is not there does
    not exist, where Kafka answers 0)."""

    def _entries(self):
        features = self.image.features
        out = {"metadataVersion": self._version}
        for name, ent in features.items():
            if name != METADATA_VERSION_FEATURE:
                out[FINALIZED + name] = (lambda n=FINALIZED + name, e=ent:
                                         TextLeaf(n, e.value, text=str(e.value), change=e.change))
        return out

    def _version(self) -> Node:
        ent = self.image.features.get(METADATA_VERSION_FEATURE)
        if ent is None:
            return TextLeaf("metadataVersion", None, text="null")
        name = enums.METADATA_VERSIONS.get(ent.value, f"UNKNOWN({ent.value})")
        return TextLeaf("metadataVersion", name, text=name, change=ent.change)


class ProducerIdsDir(_ImageDir):
    def _entries(self):
        ent = self.image.producer_ids
        value = -1 if ent is None else ent.value["nextProducerId"]
        change = None if ent is None else ent.change
        return {"nextProducerId": lambda: TextLeaf("nextProducerId", value, text=str(value),
                                                    change=change)}


class ScramDir(_ImageDir):
    MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

    def _entries(self):
        return {m: (lambda m=m: ScramMechanismDir(m, self.view)) for m in self.MECHANISMS}


class ScramMechanismDir(_ImageDir):
    def _entries(self):
        return {user: (lambda u=user, e=ent: self._leaf(u, e))
                for (mech, user), ent in self.image.scram().items() if mech == self.name}

    def _leaf(self, user, ent) -> Node:
        value = scram_value(ent.value, self.view)
        return TextLeaf(user, value, text=lambda: kt.scram(value), change=ent.change)


class TokensDir(ViewDir):
    def children(self):
        return kt.java_sorted(self.image.tokens())

    def child(self, name):
        ent = self.image.tokens().get(name)
        if ent is None:
            return None
        value = token_value(ent.value)
        return TextLeaf(name, value, text=lambda: kt.token(name, value), change=ent.change)


# -- /image paths <-> native paths (changes, watch) ---------------------------------

_NATIVE_CONFIG_TYPES = {kafka: tree for tree, kafka in CONFIG_TYPES.items()}
_LABEL_TYPES = {label: etype for etype, label in ENTITY_TYPES}


def native_parts(parts: list[str]) -> "list[str] | None":
    """The native tree's path of the entity an ``/image`` path (components
    after ``image``) shows, or None when it shows none."""
    if len(parts) < 2:
        return None
    head, rest = parts[0], parts[1:]
    if head == "topics" and rest[0] in ("byName", "byId") and len(rest) >= 2:
        return ["topics" if rest[0] == "byName" else "topicIds", *rest[1:]]
    if head == "cluster" and len(rest) >= 2:
        return [rest[0], rest[1]]
    if head == "configs":
        kafka, _, name = rest[0].partition(":")
        rtype = _NATIVE_CONFIG_TYPES.get(kafka)
        return None if rtype is None else ["configs", rtype, name or DEFAULT_NAME, *rest[1:]]
    if head == "clientQuotas":
        entity = decode_entity(rest[0])
        return None if entity is None else ["clientQuotas", *entity, *rest[1:]]
    if head == "acls" and rest[0] == "byId" and len(rest) >= 2:
        return ["acls", rest[1]]
    if head == "features":
        name = rest[0]
        return ["features", METADATA_VERSION_FEATURE if name == "metadataVersion"
                else name[len(FINALIZED):]]
    simple = {"producerIds": "producerIds", "scram": "scram", "delegationToken": "delegationTokens"}
    return [simple[head], *rest] if head in simple else None


def decode_entity(text: str) -> "list[str] | None":
    """``clientId(a)_user(b)`` -> ``["client-id", "a", "user", "b"]`` (the
    native tree's components), or None if ``text`` is not an entity name."""
    out, i = [], 0
    while i < len(text):
        label, paren, _ = text[i:].partition("(")
        if not paren or label not in _LABEL_TYPES:
            return None
        i += len(label) + 1
        name, escaped = [], False
        while i < len(text) and (escaped or text[i] != ")"):
            escaped = not escaped and text[i] == "\\"
            if not escaped:
                name.append(text[i])
            i += 1
        if i >= len(text):
            return None
        out += [_LABEL_TYPES[label], "".join(name)]
        i += 1
        if i < len(text):
            if text[i] != "_":
                return None
            i += 1
    return out or None


def image_parts(native: list[str]) -> "list[str]":
    """Where the entity at a native path (``watch``'s changes) shows under
    ``/image``; empty when it shows nowhere there."""
    if not native:
        return []
    head, rest = native[0], native[1:]
    if head in ("topics", "topicIds"):
        return ["image", "topics", "byName" if head == "topics" else "byId", *rest]
    if head in ("brokers", "controllers"):
        return ["image", "cluster", head, *rest[:1]]
    if head == "configs" and len(rest) >= 2:
        name = "" if rest[1] == DEFAULT_NAME else rest[1]
        return ["image", "configs", config_dir_name(rest[0], name)]
    if head == "clientQuotas":
        pairs = tuple(zip(rest[::2], (None if n == DEFAULT_NAME else n for n in rest[1::2])))
        return ["image", "clientQuotas", quota_entity_name(pairs)]
    if head == "acls":
        return ["image", "acls", "byId", *rest]
    if head == "features" and rest:
        name = "metadataVersion" if rest[0] == METADATA_VERSION_FEATURE else FINALIZED + rest[0]
        return ["image", "features", name]
    simple = {"producerIds": "producerIds", "scram": "scram", "delegationTokens": "delegationToken"}
    return ["image", simple[head], *rest] if head in simple else []
