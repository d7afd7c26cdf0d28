"""The next producer id block (Kafka's ``ProducerIdsDelta``)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity


def producer_ids(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    value = {"nextProducerId": d.get("nextProducerId", d.get("producerIdsEnd"))}
    if d["brokerId"] >= 0:   # a snapshot writes -1 for both: not known
        value["lastBrokerId"] = d["brokerId"]
        value["lastBrokerEpoch"] = d["brokerEpoch"]
    delta.image.producer_ids = Entity(value, (rec.offset, rec.timestamp))
    delta.history(("producerIds",), rec)


REPLAY = {"ProducerIdsRecord": producer_ids}
