"""The entity a decoded metadata record is about, as a key: what ``log
--entity`` selects by and the Spark history table's entity columns are made
from (``spark.history._entity_columns``).

Keys are those of ``Image.history``: ``("topic", topic id)``,
``("partition", topic id, partition id)``, ``("broker", id)``, ``("config",
type, name)`` ...; records of any frame and layout.
"""

from __future__ import annotations

from ..kraft import enums

_SINGLETONS = {15: ("producerIds",), 21: ("zkMigrationState",)}


def _config_type(code: int) -> str:
    return enums.CONFIG_RESOURCE_TREE_NAMES.get(code, f"type_{code}")


def _scram_mechanism(code: int) -> str:
    return enums.SCRAM_MECHANISMS.get(code, f"UNKNOWN({code})") if code else "UNKNOWN"


def key_from_data(api_key: int, data: dict) -> tuple | None:
    """The entity key of a decoded metadata record (any frame, any layout)."""
    if api_key in (3, 5):
        return ("partition", data["topicId"], data["partitionId"])
    if api_key in (2, 9):
        return ("topic", data["topicId"])
    if api_key in (0, 1, 17):
        return ("broker", data["brokerId"])
    if api_key in (7, 8):
        return ("broker", data["id"])
    if api_key in (27, 29):
        return ("controller", data["controllerId"])
    if api_key == 4:
        return ("config", _config_type(data["resourceType"]), data["resourceName"])
    if api_key in (12, 16):
        return ("feature", data["name"])
    if api_key == 14:
        return ("quota", tuple(sorted((e["entityType"], e["entityName"]) for e in data["entity"])))
    if api_key in (18, 19):
        return ("acl", data["id"])
    if api_key in (11, 22):
        if "mechanism" not in data:   # the nested 3.0-3.4 layout: one record per user
            return ("scram", None, data["name"])
        return ("scram", _scram_mechanism(data["mechanism"]), data["name"])
    if api_key in (10, 26):
        return ("token", data["tokenId"])
    if api_key == 28:
        return ("clearElr", data["topicName"])
    return _SINGLETONS.get(api_key)
