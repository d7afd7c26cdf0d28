"""The paths of Kafka 2.8-3.4's shell (the old design) that the native tree
names otherwise, as aliases.

The native tree keeps the old shell's layout (``/brokers``, ``/topics``,
``/configs``, ``/features``, ``/metadataQuorum``, ``/local``) but three names
follow the contract's camelCase: the old ``/client-quotas/...`` is
``/clientQuotas/...``, ``/acl/id/<id>`` is ``/acls/<id>``, and
``/producerIds/{nextBlockStartId,lastBlockBrokerId,lastBlockBrokerEpoch}``
are ``nextProducerId``, ``lastBrokerId`` and ``lastBrokerEpoch`` (-1 where
the native tree has none: not known, as a snapshot's record says). The old
names stay reachable: a path through them works everywhere a path does
(``cd``, ``cat``, ``ls``, ``tree``, ``find``, ``changes``) and shows the
same nodes, but no listing or glob shows them, so ``ls /``, ``find /`` and
``tree /`` name every entity once, under its native name.
"""

from __future__ import annotations

#: ``/producerIds``' old file names -> the native ones
PRODUCER_IDS = {"nextBlockStartId": "nextProducerId", "lastBlockBrokerId": "lastBrokerId",
                "lastBlockBrokerEpoch": "lastBrokerEpoch"}


def native_parts(parts: "list[str]") -> "list[str]":
    """The native path an old-shell path names (``parts`` itself when it
    goes through no alias); ``["acl"]`` alone, a directory the native tree
    does not have, stays as it is."""
    if not parts:
        return parts
    head = parts[0]
    if head == "client-quotas":
        return ["clientQuotas", *parts[1:]]
    if head == "acl" and parts[1:2] == ["id"]:
        return ["acls", *parts[2:]]
    if head == "producerIds" and len(parts) == 2 and parts[1] in PRODUCER_IDS:
        return ["producerIds", PRODUCER_IDS[parts[1]]]
    return parts
