"""The other side of a ``diff``: what the loaded image is compared with.

One function, :func:`open_baseline`, opens it, whichever way it is named:

* ``from_offset`` / ``from_time``: the same source at an earlier point. For
  an offset inside the log this replay already covers, the image is rewound
  from the loaded replay (:mod:`metashell.replay.rewind`: only entities
  changed since are rebuilt); otherwise the source is replayed again up to
  that point, as ``--until-offset`` / ``--until-time`` would.
* ``against``: another source (snapshot, segment, log dir), loaded whole.

Whatever cannot be opened raises :class:`MetashellError` with a one-line
message.
"""

from __future__ import annotations

from .replay.image import Image
from .replay.rewind import rewind
from .session import Session, open_session


def open_baseline(session: Session, *, from_offset: int | None = None,
                  from_time: int | None = None, against=None,
                  rewinding: bool = True) -> tuple[Image, list[str]]:
    """The image to compare ``session``'s with, and the warnings its loading
    gave (the rewound image gives none). ``rewinding=False`` always replays
    again (to check the rewound image against)."""
    if against is not None:
        other = open_session(against)
        return other.image, other.warnings
    if from_offset is not None and rewinding:
        image = _rewound(session, from_offset)
        if image is not None:
            return image, []
    other = open_session(session.source, until_offset=from_offset, until_time=from_time)
    return other.image, other.warnings


def _rewound(session: Session, offset: int) -> Image | None:
    plan, engine = session.plan, session.engine
    if plan.kind not in ("logdir", "partition-dir", "segment"):
        return None
    snap = plan.snapshot
    if snap is not None and snap.bootstrap:
        return None
    limited = engine.until_offset is not None or engine.until_time is not None
    if limited and offset > engine.image.last_offset:
        return None   # past what this replay read: the source may hold more
    files = engine.store.file_numbers(s.path for s in plan.segments)
    return rewind(engine, offset, files, snap.end_offset if snap is not None else None)
