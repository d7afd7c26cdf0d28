"""Brokers and controllers (Kafka's ``ClusterDelta``): their registrations,
fencing and changes."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import BrokerState, ControllerState
from ..problems import ApplyError


def register_broker(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    bid = d["brokerId"]
    delta.image.brokers[bid] = BrokerState(
        broker_id=bid, epoch=d["brokerEpoch"], registration=d,
        fenced=d.get("fenced", True), in_controlled_shutdown=d.get("inControlledShutdown", False),
        # a snapshot does not say when a broker registered
        registered_at=None if delta.in_snapshot else rec.timestamp, log_dirs=list(d.get("logDirs", [])),
        change=(rec.offset, rec.timestamp), cordoned_log_dirs=d.get("cordonedLogDirs"))
    delta.history(("broker", bid), rec)


def unregister_broker(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    delta.image.brokers.pop(d["brokerId"], None)
    delta.history(("broker", d["brokerId"]), rec)


def _broker(delta, bid: int, epoch: int, action: str) -> BrokerState:
    """The registered broker a record names, at the epoch it names."""
    b = delta.image.brokers.get(bid)
    if b is None:
        raise ApplyError(f"tried to {action} broker {bid}, but that broker was not registered")
    if b.epoch != epoch:
        raise ApplyError(f"tried to {action} broker {bid}, but the given epoch, {epoch}, did not "
                         f"match the current broker epoch, {b.epoch}")
    return b


def fence_broker(delta, rec: Record) -> None:
    _set_fenced(delta, rec, True)


def unfence_broker(delta, rec: Record) -> None:
    _set_fenced(delta, rec, False)


def _set_fenced(delta, rec: Record, fenced: bool) -> None:
    """A FenceBrokerRecord or UnfenceBrokerRecord: the broker of that id and epoch."""
    d = rec.data
    if d is None:
        return
    b = _broker(delta, d["id"], d["epoch"], "fence" if fenced else "unfence")
    b.fenced = fenced
    delta.touch(b, ("broker", b.broker_id), rec)


def change_broker_registration(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    b = _broker(delta, d["brokerId"], d["brokerEpoch"], "change")
    fenced, ics = d.get("fenced", 0), d.get("inControlledShutdown", 0)
    if fenced not in (-1, 0, 1):
        raise ApplyError(f"unknown value for fenced field: {fenced}")
    if ics not in (0, 1):
        raise ApplyError(f"unknown value for inControlledShutdown field: {ics}")
    if fenced:
        b.fenced = fenced == 1
    if ics:
        b.in_controlled_shutdown = True
    if d.get("logDirs"):
        b.log_dirs = list(d["logDirs"])
    if d.get("cordonedLogDirs") is not None:
        b.cordoned_log_dirs = list(d["cordonedLogDirs"])
    delta.touch(b, ("broker", b.broker_id), rec)


def register_controller(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    cid = d["controllerId"]
    delta.image.controllers[cid] = ControllerState(cid, d, (rec.offset, rec.timestamp))
    delta.history(("controller", cid), rec)


def unregister_controller(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    delta.image.controllers.pop(d["controllerId"], None)
    delta.history(("controller", d["controllerId"]), rec)


REPLAY = {
    "RegisterBrokerRecord": register_broker,
    "UnregisterBrokerRecord": unregister_broker,
    "FenceBrokerRecord": fence_broker,
    "UnfenceBrokerRecord": unfence_broker,
    "BrokerRegistrationChangeRecord": change_broker_registration,
    "RegisterControllerRecord": register_controller,
    "UnregisterControllerRecord": unregister_controller,
}
