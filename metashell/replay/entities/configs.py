"""Configs of topics, brokers, loggers, client metrics and groups (Kafka's
``ConfigurationsDelta``)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity

#: a ConfigRecord's resourceType -> the name the image keys its resources by
CONFIG_TYPES = {0: "unknown", 2: "topic", 4: "broker", 8: "broker_logger",
                16: "client_metrics", 32: "group"}


def config_key(rtype: int, rname: str) -> tuple:
    """The image's key of a config resource: ``(type name, resource name)``."""
    return (CONFIG_TYPES.get(rtype) or f"type_{rtype}", rname)


def config(delta, rec: Record) -> None:
    d = rec.data
    if d is not None:
        set_config(delta, d["resourceType"], d["resourceName"], d["name"], d["value"],
                   (rec.offset, rec.timestamp), rec)


def set_config(delta, rtype: int, rname: str, name: str, value, change: tuple, rec) -> None:
    """A ConfigRecord's fields applied (``rec``: it, or its ref, for the
    history; the fast path applies a snapshot's kept ones from their bytes)."""
    configs = delta.image.configs()   # a snapshot's kept ones applied first: history in order
    key = config_key(rtype, rname)
    delta.history(("config", *key), rec)
    res = configs.get(key)
    if value is None:
        if res is not None:
            res.pop(name, None)
            if not res:
                del configs[key]
        return
    if res is None:
        res = configs[key] = {}
    res[name] = Entity(value, change)


REPLAY = {"ConfigRecord": config}
