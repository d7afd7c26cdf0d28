"""When each broker registered its current incarnation: its start time.

A KRaft controller takes a broker's epoch from the log offset of the write
that registers it, so the epoch is the registration offset even where the
RegisterBrokerRecord itself was not replayed (a snapshot keeps the record,
not its offset or time). On real logs it is the record's own offset, or the
one before when the same write put another record first or a Raft control
batch the controller did not count came first: either way the batch
appended at the epoch (or the first metadata batch after it) holds the
registration. The time is the record's own when it was replayed, else the
append time a source of batch times gives for that offset (see
:mod:`metashell.loader.append_times`; the session chooses the source).

Every answer is ``(value, None)`` or ``(None, why)``, so the tree and
``summary`` can say why a value is null.
"""

from __future__ import annotations

from ..timefmt import iso_time

#: why a time is unknown when the source gives no append times (a live session
#: that started from a snapshot, an image without its files)
NO_TIMES = "no log before the snapshot was read; a snapshot keeps the epoch, not the time"


def registration_offset(broker, last_offset: int) -> tuple:
    """The log offset that registered ``broker`` (a ``BrokerState``), given the
    last offset of the log replayed into the image."""
    if broker.registration.get("isMigratingZkBroker"):
        return None, ("a ZooKeeper broker being migrated: its epoch comes from ZooKeeper, "
                      "not from a log offset")
    epoch = broker.epoch
    if epoch < 0 or 0 <= last_offset < epoch:
        return None, f"broker epoch {epoch} is not an offset of this log (last offset {last_offset})"
    return epoch, None


def registration_time(broker, last_offset: int, times) -> tuple:
    """The append time (ms) of the registration, from the replayed record or
    from ``times`` (an object with ``write_time(offset) -> (ms, why)``, or
    None for a source without a log)."""
    if broker.registered_at is not None:
        return broker.registered_at, None
    offset, why = registration_offset(broker, last_offset)
    if offset is None:
        return None, why
    if times is None:
        return None, NO_TIMES
    return times.write_time(offset)


def started(image, times) -> list[dict]:
    """Every broker's start: id, registeredAt (ISO-8601), registeredAtOffset,
    ageMs (before the image's last applied batch) and why a value is null;
    newest first, by offset (the log's order, immune to clock steps between
    controllers), brokers without an offset last."""
    rows = []
    for bid, b in image.brokers.items():
        offset, offset_why = registration_offset(b, image.last_offset)
        ms, time_why = registration_time(b, image.last_offset, times)
        age = image.last_time - ms if ms is not None and image.last_time >= 0 else None
        rows.append({"brokerId": bid, "registeredAt": iso_time(ms), "registeredAtOffset": offset,
                     "ageMs": age, "note": time_why or offset_why})
    rows.sort(key=lambda r: (r["registeredAtOffset"] is None, -(r["registeredAtOffset"] or 0),
                             r["brokerId"]))
    return rows
