"""The contract's virtual tree (spec/metadata-shell-contract.md section 3) as
a view over an :class:`~metashell.replay.image.Image`.

One node class per directory kind; values are computed when read, so
listing ``/topics`` builds no partition and reading a partition folds only
its own records. Secrets (SCRAM salts and keys, sensitive config values)
are replaced by ``[redacted]`` unless the tree is built with
``show_secrets=True``.
"""

from __future__ import annotations

import base64
from typing import Any

from ..gcpause import kept_old
from ..kraft import enums
from ..kraft.secrets import REDACTED
from ..queries.registration import registration_offset, registration_time
from ..render import json_text, value_text
from ..replay import partition_model
from ..timefmt import iso_time
from .bulk import Bulk
from .node import DictDir, Leaf, Node, TextLeaf, sort_names
from .old_paths import PRODUCER_IDS
from .paths import plain_id

DEFAULT_NAME = "<default>"




class View:
    """What every node of one tree shares: the image, the engine (for folding
    partitions) and the display options."""

    def __init__(self, image, *, show_secrets: bool = False, local: dict | None = None,
                 times=None, live=None):
        self.image = image   # a live session swaps in the image of each new snapshot
        self.show_secrets = show_secrets
        self.local = local or {}
        # append times by offset, for brokers registered before what was replayed
        self.times = times
        self.live = live     # live mode: callable() -> the quorum's view (/metadataQuorum/live)

    def secret(self, value: Any) -> Any:
        return value if self.show_secrets else REDACTED


class ViewDir(Node):
    """A directory whose children are computed from the image."""

    is_dir = True

    def __init__(self, name: str, view: View):
        super().__init__(name)
        self.view = view

    @property
    def image(self):
        return self.view.image


# -- brokers and controllers ---------------------------------------------------------


# Kafka keys a registration's listeners and features by name and writes them
# to a snapshot in hash-map order, to the log in the broker's order: sorted by
# name, the same registration reads the same from either.
def _listeners(endpoints: list) -> list:
    return [{"name": e["name"], "host": e["host"], "port": e["port"],
             "securityProtocol": enums.name_of(enums.SECURITY_PROTOCOLS, e["securityProtocol"])}
            for e in sorted(endpoints, key=lambda e: e["name"])]


def _features(features: list) -> dict:
    return {f["name"]: {"min": f["minSupportedVersion"], "max": f["maxSupportedVersion"]}
            for f in sorted(features, key=lambda f: f["name"])}


def broker_registration(b) -> dict:
    r = b.registration
    return {
        "brokerId": b.broker_id,
        "brokerEpoch": b.epoch,
        "incarnationId": r.get("incarnationId"),
        "listeners": _listeners(r.get("endPoints", [])),
        "features": _features(r.get("features", [])),
        "rack": r.get("rack"),
        "fenced": b.fenced,
        "inControlledShutdown": b.in_controlled_shutdown,
        "isMigratingZkBroker": r.get("isMigratingZkBroker", False),
        "logDirs": b.log_dirs,
        **({} if b.cordoned_log_dirs is None else {"cordonedLogDirs": b.cordoned_log_dirs}),
    }


class BrokersDir(ViewDir):
    def children(self):
        return [str(i) for i in sorted(self.image.brokers)]

    def child(self, name):
        b = self.image.brokers.get(plain_id(name))
        if b is None:
            return None
        ch = b.change
        last, times = self.image.last_offset, self.view.times
        offset, offset_why = registration_offset(b, last)

        def start():   # looked up only when asked: it may read segment headers
            return registration_time(b, last, times)

        return DictDir(name, {
            "registration": Leaf("registration", compute=lambda: broker_registration(b), change=ch),
            "isFenced": Leaf("isFenced", b.fenced, change=ch),
            "inControlledShutdown": Leaf("inControlledShutdown", b.in_controlled_shutdown, change=ch),
            "registeredAt": Leaf("registeredAt", compute=lambda: iso_time(start()[0]), change=ch,
                                 note=lambda: start()[1], fields=lambda: _why(start()[1])),
            "registeredAtOffset": Leaf("registeredAtOffset", offset, change=ch, note=offset_why,
                                       fields=lambda: _why(offset_why)),
        }, change=ch, note=lambda: start_note(offset, *start()),
            fields=lambda: start_fields(offset, *start()), attention=b.fenced)


def start_fields(offset, ms, why) -> dict:
    """A broker's start as ``ls -l -o json`` shows it: the fields of its note."""
    return {"registeredAt": iso_time(ms), "registeredAtOffset": offset, "why": why}


def _why(reason) -> "dict | None":
    """Why a value is null, as a field (None when it is not)."""
    return {"why": reason} if reason else None


def start_note(offset, ms, why) -> str:
    """A broker's start, as ``ls -l /brokers`` shows it."""
    at = "" if offset is None else f" at offset {offset}"
    if ms is None:
        return f"registered{at}, time unknown: {why}"
    return f"registered {iso_time(ms)}{at}"


class ControllersDir(ViewDir):
    def children(self):
        return [str(i) for i in sorted(self.image.controllers)]

    def child(self, name):
        c = self.image.controllers.get(plain_id(name))
        if c is None:
            return None
        value = controller_value(c)
        return DictDir(name, {"registration": Leaf("registration", value, change=c.change)},
                       change=c.change)


def controller_value(c) -> dict:
    r = c.registration
    return {
        "controllerId": c.controller_id,
        "incarnationId": r["incarnationId"],
        "zkMigrationReady": r["zkMigrationReady"],
        "listeners": _listeners(r["endPoints"]),
        "features": _features(r["features"]),
    }


# -- topics and partitions ------------------------------------------------------------


class TopicsDir(ViewDir):
    def __init__(self, name, view, by_id: bool):
        super().__init__(name, view)
        self.by_id = by_id

    def children(self):
        return kept_old(sorted(self.image.topics if self.by_id else self.image.topic_names))

    def topic(self, name):
        """The topic (``TopicState``) named ``name`` here, or None."""
        return self.image.topics.get(name) if self.by_id else self.image.topic_by_name(name)

    def child(self, name):
        t = self.topic(name)
        return TopicDir(name, self.view, t) if t is not None else None


class TopicDir(ViewDir, Bulk):
    """``id``, ``name`` and one directory per partition (partitions first,
    numerically; a topic may have thousands): its :class:`Bulk` answers make
    every partition at once, from its runs' bytes where they can."""

    def __init__(self, name, view, topic):
        super().__init__(name, view)
        self.topic = topic
        self._states: dict | None = None   # pid -> folded state, once listed

    def children(self):
        # listing folds every partition (one whose records are all undecodable does not
        # exist); the states are kept for child(), so a walk folds each partition once here
        states = self._states = self.topic.partitions()
        return [str(p) for p in states] + ["id", "name"]

    def child(self, name):
        t = self.topic
        if name == "id":
            return Leaf("id", t.topic_id, change=t.change)
        if name == "name":
            return Leaf("name", t.name, change=t.change)
        pid = plain_id(name)
        if self._states is not None:
            state = self._states.get(pid)
        elif pid is None or pid not in t.partition_records:
            return None
        else:
            state = t.partition(pid)
        if state is None:   # only undecodable PartitionRecords: Kafka never created it
            return None
        return PartitionDir(name, self.view, t, pid, state)

    def bulk(self):
        return self

    def entries(self):
        """Every partition folded at once (as a listing does), then id and name."""
        view, t = self.view, self.topic
        states = self._states = t.partitions()
        for pid, state in states.items():
            name = str(pid)
            yield name, PartitionDir(name, view, t, pid, state)
        yield "id", Leaf("id", t.topic_id, change=t.change)
        yield "name", Leaf("name", t.name, change=t.change)

    def subtree_names(self, memo):
        """Each existing partition and its ``data``, then ``id`` and ``name``
        (what walking the topic reaches: a listed partition always has
        ``data``), from :func:`existing_partitions` (shared by the walk's
        views of the topic). Assumes the listing is the topic's existing
        partitions in id order, as :meth:`entries` gives them."""
        out = []
        for pid in existing_partitions(self.topic, memo):
            name = str(pid)
            out.append((name, True))
            out.append((name + "/data", False))
        out.append(("id", False))
        out.append(("name", False))
        return out

    def file_texts(self, name):
        """Each partition's ``data`` (the topic's ``id`` and ``name`` have
        no children) as ``cat`` shows it, the topic's partitions made at once
        (``TopicState.partition_texts``)."""
        if name != "data":
            return None
        return [(str(pid), _data_text(got, "\n"))
                for pid, got in self.topic.partition_texts().items()]

    def tree_lines(self, indent):
        """What walking the topic prints (each partition's ``data`` as
        ``cat`` prints it), without three nodes per partition, in pieces of
        up to a hundred partitions."""
        t = self.topic
        pad, deeper = " " * indent, "\n" + " " * (indent + 4)
        data = f":\n{pad}  data:{deeper}"
        out = [f"{pad}{pid}{data}{_data_text(got, deeper)}"
               for pid, got in t.partition_texts(deeper).items()]
        inner = "\n" + pad + "  "
        out.append(f"{pad}id:{inner}{value_text(t.topic_id).replace(chr(10), inner)}")
        out.append(f"{pad}name:{inner}{value_text(t.name).replace(chr(10), inner)}")
        return ["\n".join(out[i:i + 100]) for i in range(0, len(out), 100)]

    def tree_json(self):
        """The topic as one document: ``-o json tree /topics`` writes a topic
        at a time, its partitions' JSON read from its runs' bytes where it
        can (``TopicState.partition_texts``), instead of walking nodes per
        partition."""
        t = self.topic
        out = [f'"{pid}":{{"data":{got if type(got) is str else json_text(got.to_json())}}}'
               for pid, got in t.partition_texts(None).items()]
        out.append(f'"id":{json_text(t.topic_id)}')
        out.append(f'"name":{json_text(t.name)}')
        return "{" + ",".join(out) + "}"

    def last_change(self):
        return self.topic.change


def _data_text(got, nl: str) -> str:
    """A partition's data as text output shows it (each newline followed by
    ``nl``'s indentation), from what ``TopicState.partition_texts`` gives:
    its text, or its state to write."""
    if type(got) is str:
        return got
    return (partition_model.data_text(got, nl)
            or value_text(partition_model.shown(got.to_json())).replace("\n", nl))


def existing_partitions(topic, memo: dict) -> list:
    """``topic.partition_ids()``, found once per ``memo`` (one walk): the
    walk's other views of the topic (``/topicIds``, ``/image/topics``) reuse
    it. Kept with the topic itself, so that a topic replaced meanwhile (a
    live image) is looked at anew."""
    got = memo.get(id(topic))
    if got is None or got[0] is not topic:
        got = memo[id(topic)] = (topic, topic.partition_ids())
    return got[1]


class PartitionDir(ViewDir, Bulk):
    """A partition: its ``data`` (its :class:`Bulk`: its one entry without
    a listing and a lookup, as a walk reaches a million of them)."""

    def __init__(self, name, view, topic, pid: int, state=None):
        super().__init__(name, view)
        self.topic = topic
        self.pid = pid
        self._state = state

    def _fold(self):
        if self._state is None:
            self._state = self.topic.partition(self.pid)
        return self._state

    def children(self):
        return ["data"]

    def child(self, name):
        if name != "data":
            return None
        state = self._fold()
        if state is None:
            return None
        # its JSON made when read (a walk that only names it, find, makes none); text
        # output names the codes Kafka prints by name (leaderRecoveryState)
        return Leaf("data", compute=state.to_json, shown=partition_model.shown, change=state.change,
                    shown_text=lambda: partition_model.data_text(state))

    def bulk(self):
        return self

    def entries(self):
        data = self.child("data")
        return () if data is None else (("data", data),)

    def last_change(self):
        state = self._fold()
        return state.change if state is not None else None


# -- configs and quotas -----------------------------------------------------------------


class ConfigsDir(ViewDir):
    def children(self):
        return sorted({rtype for rtype, _ in self.image.configs()})

    def child(self, name):
        if name not in self.children():
            return None
        return ConfigTypeDir(name, self.view, name)


class ConfigTypeDir(ViewDir):
    def __init__(self, name, view, rtype: str):
        super().__init__(name, view)
        self.rtype = rtype

    def children(self):
        return sort_names(rname or DEFAULT_NAME for rtype, rname in self.image.configs()
                          if rtype == self.rtype)

    def child(self, name):
        rname = "" if name == DEFAULT_NAME else name
        keys = self.image.configs().get((self.rtype, rname))
        if keys is None:
            return None
        view = self.view
        entries = {}
        for key, ent in keys.items():
            value = ent.value
            if enums.is_sensitive_config(key):
                value = view.secret(value)
            entries[key] = Leaf(key, value, change=ent.change)
        change = max((e.change for e in keys.values()), default=None)
        return DictDir(name, entries, change=change)


class QuotaEntityDir(ViewDir):
    """``/clientQuotas[/<type>/<name>...]``: the quota keys of the entity named
    by the path so far, and the entity types that extend it."""

    def __init__(self, name, view, prefix: tuple):
        super().__init__(name, view)
        self.prefix = prefix

    def _extensions(self) -> set:
        n = len(self.prefix)
        return {entity[n][0] for entity in self.image.quotas()
                if len(entity) > n and entity[:n] == self.prefix}

    def children(self):
        keys = list(self.image.quotas().get(self.prefix, {}))
        return sorted(keys) + sorted(self._extensions())

    def child(self, name):
        values = self.image.quotas().get(self.prefix, {})
        if name in values:
            ent = values[name]
            return Leaf(name, ent.value, change=ent.change)
        if name in self._extensions():
            return QuotaTypeDir(name, self.view, self.prefix, name)
        return None


class QuotaTypeDir(ViewDir):
    def __init__(self, name, view, prefix: tuple, etype: str):
        super().__init__(name, view)
        self.prefix = prefix
        self.etype = etype

    def _names(self) -> dict:
        n = len(self.prefix)
        out = {}
        for entity in self.image.quotas():
            if len(entity) > n and entity[:n] == self.prefix and entity[n][0] == self.etype:
                ename = entity[n][1]
                out[DEFAULT_NAME if ename is None else ename] = ename
        return out

    def children(self):
        return sort_names(self._names())

    def child(self, name):
        names = self._names()
        if name not in names:
            return None
        return QuotaEntityDir(name, self.view, self.prefix + ((self.etype, names[name]),))


# -- ACLs, features, producer ids, SCRAM, tokens ----------------------------------------


def acl_value(d: dict) -> dict:
    return {
        "resourceType": enums.name_of(enums.ACL_RESOURCE_TYPES, d["resourceType"]),
        "resourceName": d["resourceName"],
        "patternType": enums.name_of(enums.PATTERN_TYPES, d["patternType"]),
        "principal": d["principal"],
        "host": d["host"],
        "operation": enums.name_of(enums.ACL_OPERATIONS, d["operation"]),
        "permissionType": enums.name_of(enums.ACL_PERMISSION_TYPES, d["permissionType"]),
    }


class AclsDir(ViewDir):
    def children(self):
        return sorted(self.image.acls())

    def child(self, name):
        ent = self.image.acls().get(name)
        return Leaf(name, acl_value(ent.value), change=ent.change) if ent else None


class FeaturesDir(ViewDir):
    def children(self):
        return sorted(self.image.features)

    def child(self, name):
        ent = self.image.features.get(name)
        return Leaf(name, ent.value, change=ent.change) if ent else None


def producer_ids_dir(view: View) -> Node:
    """``nextProducerId`` (and ``lastBrokerId``, ``lastBrokerEpoch`` when
    known); Kafka 2.8-3.4's names of them reach the same values unlisted,
    -1 where not known (as that shell shows a snapshot's record)."""
    ent = view.image.producer_ids
    values, change = ({"nextProducerId": -1}, None) if ent is None else (ent.value, ent.change)
    aliases = {old: Leaf(old, values.get(new, -1), change=change)
               for old, new in PRODUCER_IDS.items()}
    return DictDir("producerIds", {k: Leaf(k, v, change=change) for k, v in values.items()},
                   change=change, aliases=aliases)


class ScramDir(ViewDir):
    MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

    def children(self):
        extra = {m for m, _ in self.image.scram()} - set(self.MECHANISMS)
        return list(self.MECHANISMS) + sorted(extra)

    def child(self, name):
        if name not in self.children():
            return None
        view = self.view
        users = {}
        for (mech, user), ent in self.image.scram().items():
            if mech == name:
                users[user] = Leaf(user, scram_value(ent.value, view), change=ent.change)
        return DictDir(name, users)


def scram_value(d: dict, view: View) -> dict:
    return {
        "iterations": d["iterations"],
        "salt": view.secret(_b64(d["salt"])),
        "storedKey": view.secret(_b64(d["storedKey"])),
        "serverKey": view.secret(_b64(d["serverKey"])),
    }


class TokensDir(ViewDir):
    def children(self):
        return sorted(self.image.tokens())

    def child(self, name):
        ent = self.image.tokens().get(name)
        if ent is None:
            return None
        return Leaf(name, token_value(ent.value), change=ent.change, shown=token_text_value)


#: a delegation token's times (epoch ms), ISO-8601 in text output
TOKEN_TIMES = ("issueTimestamp", "maxTimestamp", "expirationTimestamp")


def token_text_value(value: dict) -> dict:
    """A token as text output shows it: its times as ISO-8601 UTC (a
    negative one, never set, stays a number); JSON keeps epoch ms."""
    return {**value, **{k: iso_time(value[k]) or value[k] for k in TOKEN_TIMES if k in value}}


def token_value(d: dict) -> dict:
    return {
        "owner": d["owner"],
        "requester": d.get("requester", ""),
        "renewers": d["renewers"],
        "issueTimestamp": d["issueTimestamp"],
        "maxTimestamp": d["maxTimestamp"],
        "expirationTimestamp": d["expirationTimestamp"],
    }


# -- quorum and local -------------------------------------------------------------------


def quorum_dir(view: View) -> Node:
    img = view.image
    q = img.quorum
    ch = q.change if q.change[0] >= 0 else None
    values = {
        "leaderId": q.leader_id,
        "leaderEpoch": q.leader_epoch,
        "offset": img.last_offset,
        "time": iso_time(img.last_time),
        "kraftVersion": q.kraft_version,
        "voters": {str(k): v for k, v in sorted(q.voters.items())},
    }
    entries: dict = {k: Leaf(k, v, change=ch) for k, v in values.items()}
    entries["leader"] = TextLeaf("leader", {"leaderId": q.leader_id, "epoch": q.leader_epoch},
                                 text=leader_text(q.leader_id, q.leader_epoch), change=ch)
    if view.live is not None:   # asked of the quorum when someone looks
        entries["live"] = lambda: live_quorum_dir(view.live())
    return DictDir("metadataQuorum", entries, change=ch)


def leader_text(leader_id: int, epoch: int) -> str:
    """``/metadataQuorum/leader`` as Kafka 3.0-3.4's shell printed it."""
    leader = "OptionalInt.empty" if leader_id < 0 else f"OptionalInt[{leader_id}]"
    return f"LeaderAndEpoch(leaderId={leader}, epoch={epoch})"


def live_quorum_dir(values: dict) -> Node:
    """``/metadataQuorum/live`` (``-C`` only): the quorum as it answers now;
    one file per voter under ``voters/``, the rest plain files."""
    entries: dict = {k: Leaf(k, v) for k, v in values.items() if k != "voters"}
    if "leaderId" in entries:   # text says why there is none: "none (quorum lost)"
        why = values.get("state") or values.get("error") or "unknown"
        entries["leaderId"] = Leaf("leaderId", values["leaderId"],
                                   shown=lambda v: f"none ({why})" if v is not None and v < 0 else v)
    if "voters" in values:
        entries["voters"] = DictDir("voters", {k: Leaf(k, v) for k, v in values["voters"].items()})
    return DictDir("live", entries)


def local_dir(view: View) -> Node:
    return DictDir("local", {k: Leaf(k, compute=v) if callable(v) else Leaf(k, v)
                             for k, v in view.local.items()})


def _b64(raw) -> str:
    return base64.b64encode(bytes(raw)).decode("ascii")
