"""SCRAM users' credentials (Kafka's ``ScramDelta``)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity
from ..problems import ApplyError

SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


def _mechanism(code: int) -> str:
    return SCRAM_MECHANISMS.get(code, f"UNKNOWN({code})")


def user_scram_credential(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    if "credentialInfos" in d:   # the never-written 3.0-3.4 layout
        raise ApplyError("UserScramCredentialRecord in the pre-3.5 layout is not replayed")
    key = (_mechanism(d["mechanism"]), d["name"])
    delta.image.scram()[key] = Entity(d, (rec.offset, rec.timestamp))
    delta.history(("scram", *key), rec)


def remove_user_scram_credential(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    mech = _mechanism(d["mechanism"])
    delta.image.scram().pop((mech, d["name"]), None)
    delta.history(("scram", mech, d["name"]), rec)


REPLAY = {
    "UserScramCredentialRecord": user_scram_credential,
    "RemoveUserScramCredentialRecord": remove_user_scram_credential,
}
