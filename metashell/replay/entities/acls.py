"""ACLs (Kafka's ``AclsDelta``)."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity
from ..problems import ApplyError


def access_control_entry(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    delta.image.acls()[d["id"]] = Entity(d, (rec.offset, rec.timestamp))
    delta.history(("acl", d["id"]), rec)


def remove_access_control_entry(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    acls = delta.image.acls()   # a snapshot's kept ones applied first: history in order
    delta.history(("acl", d["id"]), rec)
    if acls.pop(d["id"], None) is None:
        raise ApplyError(f"failed to find existing ACL with ID {d['id']}")


def access_control(delta, rec: Record) -> None:
    raise ApplyError("AccessControlRecord (apiKey 6) was removed before any release wrote it; ignored")


REPLAY = {
    "AccessControlEntryRecord": access_control_entry,
    "RemoveAccessControlEntryRecord": remove_access_control_entry,
    "AccessControlRecord": access_control,
}
