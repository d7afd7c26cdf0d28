"""Timestamps as users see them: Kafka's epoch milliseconds as ISO-8601 UTC
with milliseconds (``2024-05-10T20:06:51.486Z``). Shared by every layer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso_time(ms: "int | None") -> "str | None":
    """ISO-8601 UTC text for ``ms``; None when unknown (None or negative)."""
    if ms is None or ms < 0:
        return None
    try:
        t = EPOCH + timedelta(milliseconds=int(ms))
    except (OverflowError, ValueError):
        return str(ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000))


def duration(ms: "int | None") -> "str | None":
    """A span of ms as its two largest units, the second also when it is 0
    (``3d 4h``, ``3d 0h``: a day and a few minutes is not "3d"; ``5m 2s``;
    under a second ``0s``); None when unknown. A negative span (a clock
    stepped back between controllers) keeps its sign."""
    if ms is None:
        return None
    sign, rest = ("-", -ms) if ms < 0 else ("", ms)
    parts = []
    for unit, size in _UNITS:
        n, rest = divmod(rest, size)
        if n or parts:
            parts.append(f"{n}{unit}")
        if len(parts) == 2:
            break
    return sign + (" ".join(parts) or "0s")
