"""Client quotas (Kafka's ``ClientQuotasDelta``)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity


def client_quota(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    quotas = delta.image.quotas()   # a snapshot's kept ones applied first: history in order
    entity = tuple(sorted((e["entityType"], e["entityName"]) for e in d["entity"]))
    delta.history(("quota", entity), rec)
    quota = quotas.get(entity)
    if d["remove"]:
        if quota is not None:
            quota.pop(d["key"], None)
            if not quota:
                del quotas[entity]
        return
    if quota is None:
        quota = quotas[entity] = {}
    quota[d["key"]] = Entity(d["value"], (rec.offset, rec.timestamp))


REPLAY = {
    "ClientQuotaRecord": client_quota,
    "QuotaRecord": client_quota,   # Kafka 2.8's name of apiKey 14
}
