"""Delegation tokens (Kafka's ``DelegationTokenDelta``)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity


def delegation_token(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    delta.image.tokens()[d["tokenId"]] = Entity(d, (rec.offset, rec.timestamp))
    delta.history(("token", d["tokenId"]), rec)


def remove_delegation_token(delta, rec: Record) -> None:
    d = rec.data
    if d is not None:
        delta.image.tokens().pop(d["tokenId"], None)
        delta.history(("token", d["tokenId"]), rec)


REPLAY = {
    "DelegationTokenRecord": delegation_token,
    "RemoveDelegationTokenRecord": remove_delegation_token,
}
