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

from .loader.reader import snapshot_timestamp
from .replay.image import Image
from .replay.rewind import rewind


def open_baseline(session, open_session: Callable, *, from_offset: int | None = None,
                  from_time: int | None = None, against=None,
                  rewinding: bool = True) -> tuple[Image, list[str]]:
    """The image to compare ``session``'s (a :class:`~metashell.session.ImageSession`)
    with, and the warnings its loading gave (the rewound image gives none).
    ``open_session`` loads a source (:func:`metashell.session.open_session`,
    passed in by the session: this module is imported by it).
    ``rewinding=False`` always replays again (to check the rewound image
    against)."""
    if against is not None:
        return _settled(open_session(against))
    if rewinding:
        image = _rewound(session, from_offset, from_time)
        if image is not None:
            return image, []
    return _settled(open_session(session.source, until_offset=from_offset, until_time=from_time))


def _settled(other) -> tuple[Image, list[str]]:
    """``other``'s image and warnings, its pending partition changes filed
    first (replay/pending.py): the problems they have are its loading's."""
    loaded = len(other.engine.problems)
    other.engine.settle()
    return other.image, other.warnings + other.new_problems(loaded)


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
