"""The other side of a ``diff``: what the loaded image is compared with.

One function, :func:`open_baseline`, opens it, whichever way it is named:

* ``from_offset`` / ``from_time``: the same source at an earlier point. For
  a point inside the log this replay already covers, the image is rewound
  from the loaded replay (:mod:`metashell.replay.rewind`: only entities
  changed since are rebuilt; a time is first turned into the offset where
  ``--until-time`` would stop, from the batch headers); otherwise the source
  is replayed again up to that point, as ``--until-offset`` /
  ``--until-time`` would.
* ``against``: another source (snapshot, segment, log dir), loaded whole.

Whatever cannot be opened raises :class:`MetashellError` with a one-line
message.
"""

from __future__ import annotations

from typing import Callable

from ..errors import MetashellError
from ..loader.reader import snapshot_timestamp
from ..replay.image import Image
from ..replay.rewind import rewind
from .findings import Findings
from .travel import Limit, Point, beyond_end, check_not_before

#: how diff's options name an earlier point of the same source in messages
FROM_OPTIONS = ("--from-offset", "--from-time")


def open_baseline(session, open_session: Callable, *, from_offset: int | None = None,
                  from_time: int | None = None, against=None,
                  rewinding: bool = True) -> tuple[Image, Findings]:
    """The image to compare ``session``'s (a :class:`~metashell.session.files.ImageSession`)
    with, and what its loading had to say (the rewound image: only a point past
    the end of the data). ``open_session`` loads a source
    (:func:`metashell.session.files.open_session`, passed in by the session: this
    module is imported by it).
    ``rewinding=False`` always replays again (to check the rewound image
    against)."""
    if against is not None:
        return _settled(open_session(against))
    check_not_before(session.source, Limit(from_offset, from_time, *FROM_OPTIONS))
    if rewinding:
        image = _rewound(session, from_offset, from_time)
        if image is not None:
            _check_exists(session.engine, from_offset, from_time)
            return image, Findings()
    other = open_session(session.source, until_offset=from_offset, until_time=from_time,
                         limit_options=FROM_OPTIONS)
    _check_exists(other.engine, from_offset, from_time)
    return _settled(other)


def _check_exists(engine, offset: int | None, time: int | None) -> None:
    """Raise :class:`MetashellError` for a point after everything ``engine``
    replayed (when nothing stopped it early): the data has no image there,
    and comparing the last one with itself would say "equal" of a point
    that does not exist."""
    limited = engine.until_offset is not None or engine.until_time is not None
    stopped = limited and (engine.reached_limit or engine.until_offset != offset
                           or engine.until_time != time)
    image = engine.image
    beyond = beyond_end(Limit(offset, time, *FROM_OPTIONS), Point(image.last_offset, image.last_time),
                        read_to_end=not stopped)
    if beyond is not None:
        raise MetashellError(f"{beyond}: there is no image at that point to compare with")


def _settled(other) -> tuple[Image, Findings]:
    """``other``'s image and remarks, its pending partition changes filed
    first (fast/pending.py): the problems they have are its loading's."""
    loaded = len(other.engine.problems)
    other.engine.settle()
    findings = Findings()
    problems = set(other.problems())
    for line in other.warnings:
        findings.problem(line) if line in problems else findings.note(line)
    findings.extend(other.new_problems(loaded), problems=True)
    return other.image, findings


def _rewound(session, offset: int | None, time: int | None) -> Image | None:
    """The image at ``offset`` or ``time`` rewound from ``session``'s replay,
    or None when it must be replayed again."""
    plan, engine = getattr(session, "plan", None), session.engine
    if (offset is None and time is None or plan is None
            or plan.kind not in ("logdir", "partition-dir", "segment")):
        return None
    snap = plan.snapshot
    if snap is not None and snap.bootstrap:
        return None
    limited = engine.until_offset is not None or engine.until_time is not None
    store = engine.store
    files = store.file_numbers(s.path for s in plan.segments)
    if time is not None:
        # a replay up to `time` would start from this snapshot only if it is not newer
        stamp = snapshot_timestamp(snap.path) if snap is not None else None
        if snap is not None and (stamp is None or stamp > time):
            return None
        offset = store.offset_before_time(time, files)
        if offset is None:
            if limited:
                return None   # this replay stopped early: the source may hold more
            offset = engine.image.last_offset
    if limited and offset > engine.image.last_offset:
        return None   # past what this replay read: the source may hold more
    return rewind(engine, offset, files, snap.end_offset if snap is not None else None)
