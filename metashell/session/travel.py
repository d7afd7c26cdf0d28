"""Time travel's range: the oldest and the newest point a source can rebuild.

``--until-offset`` / ``--until-time`` (and ``diff --from-offset`` /
``--from-time``, which load the source up to that point) before the oldest
point would give an empty or partial image that no broker ever had: that is
an error naming the oldest offset and time there are. A point past the end
loads everything, with a warning naming the last offset and time (the image
is then not "as of" the time asked for, only the newest there is).

The oldest point is the first record of a log that starts at offset 0 (or
of a log with no snapshot at all), else the oldest snapshot's last offset
and the time its header gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import MetashellError
from ..loader import inputs
from ..loader.reader import FileReader, snapshot_timestamp
from ..timefmt import iso_time

#: below this, an --until-time in epoch ms is before 1973: likely epoch seconds
_SECONDS_LOOKALIKE = 100_000_000_000


@dataclass(frozen=True)
class Limit:
    """A time-travel limit as the user gave it: which options name it (for
    messages) and the offset or time asked for."""

    offset: int | None = None
    time: int | None = None
    offset_option: str = "--until-offset"
    time_option: str = "--until-time"

    @property
    def given(self) -> bool:
        return self.offset is not None or self.time is not None


@dataclass(frozen=True)
class Point:
    """A point of the data: a record's offset and its batch's append time."""

    offset: int
    time: int | None

    def __str__(self) -> str:
        at = iso_time(self.time) if self.time is not None and self.time >= 0 else None
        return f"offset {self.offset}" + (f" at {at}" if at else "")


def check_not_before(path, limit: Limit) -> None:
    """Raise :class:`MetashellError` when ``limit`` is before the oldest
    point ``path`` can rebuild."""
    if not limit.given:
        return
    plan = inputs.plan(path, offset_option=limit.offset_option)
    oldest = oldest_point(plan)
    if oldest is None:
        return
    if limit.offset is not None and limit.offset < oldest.offset:
        asked = f"{limit.offset_option} {limit.offset}"
    elif limit.time is not None and oldest.time is not None and limit.time < oldest.time:
        asked = f"{limit.time_option} {iso_time(limit.time)} ({limit.time} ms)"
    else:
        return
    hint = ("; a snapshot loads whole: pass the log directory to travel further back"
            if plan.kind == "snapshot" else "")
    if asked.startswith(limit.time_option) and 0 <= limit.time < _SECONDS_LOOKALIKE:
        hint += f" (epoch seconds? {limit.time_option} takes milliseconds)"
    raise MetashellError(f"{path}: {asked} is before the oldest point this source can "
                         f"rebuild: {oldest}{hint}")


def past_end(limit: Limit, last: Point, read_to_end: bool) -> str | None:
    """The warning for a limit past ``last``, the last point of the data
    (``read_to_end``: the load read all of it, no limit stopped it)."""
    beyond = beyond_end(limit, last, read_to_end)
    return None if beyond is None else f"{beyond}; the image is as of then"


def beyond_end(limit: Limit, last: Point, read_to_end: bool) -> str | None:
    """What is past the end of the data in ``limit`` (``last``: the data's
    last point), said as ``--option VALUE is past the end ...``, or None."""
    if not read_to_end or last.offset < 0:
        return None
    if limit.offset is not None and limit.offset > last.offset:
        asked = f"{limit.offset_option} {limit.offset}"
    elif limit.time is not None and last.time is not None and limit.time > last.time:
        asked = f"{limit.time_option} {iso_time(limit.time)}"
    else:
        return None
    return f"{asked} is past the end of the data: the last record is {last}"


def oldest_point(plan) -> Point | None:
    """The oldest point ``plan``'s files can rebuild (None: no records, or
    only a bootstrap.checkpoint)."""
    snapshots = ([] if plan.snapshot is None or plan.snapshot.bootstrap
                 else [s for s in plan.snapshot_candidates if s.end_offset is not None])
    points = [Point(s.end_offset - 1, snapshot_timestamp(s.path)) for s in snapshots]
    segments = plan.all_segments
    if segments and (not points or segments[0].base_offset == 0):
        first = _first_batch(segments[0].path)
        if first is not None:
            points.append(first)
    return min(points, key=lambda p: p.offset) if points else None


def _first_batch(path: Path) -> Point | None:
    """The first record of a segment: its offset and its batch's time."""
    try:
        for batch in FileReader(path, skip_damage=True, lazy=True):
            return Point(batch.base_offset, batch.append_time)
    except MetashellError:
        return None
    return None
