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
