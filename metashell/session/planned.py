"""A source planned, not yet loaded: what a one-shot ``log`` runs on.

``log`` prints the files as they are written, and nothing it prints comes
from the image (``kafka-dump-log`` replays nothing either): of a session it
needs the load plan (which files, in which order) and ``--show-secrets``.
Replaying the bench's 1 M-record segment first took 1.8 s of CPU; with it
and before ``log_walk.quick_records`` a one-shot ``log`` of it took 9.0 s,
without it and with them 5.1 s. A :class:`PlannedSession` has the plan at once and loads
the source (``session.open_session``) only when something else is asked of
it: the image (``log --entity`` names topics from it), the tree, the
load's problems.

The shell uses it for a one-shot ``log`` of files without ``--until-*`` or
``--strict`` (those are about the load); the load's warnings are then the
plan's remarks only, and ``log`` itself reports every damaged batch and how
each file ends.
"""

from __future__ import annotations

from pathlib import Path

from ..loader import inputs


class PlannedSession:
    """The plan of ``path`` now, the loaded session on first need."""

    # asked of every session by the shell and run_words: answered without a load
    error = None          # (a live session's: why following stopped)
    consistent = None     # (a live session's: hold the image while a command runs)
    fetched_log = None    # (a live session's: what log reads)

    def __init__(self, path, *, show_secrets: bool = False, progress=None):
        self.source = str(Path(path))
        self.plan = inputs.plan(path)
        self.show_secrets = show_secrets
        self.warnings = list(dict.fromkeys([*self.plan.notes, *self.plan.problems]))
        self._progress = progress
        self._loaded = None

    @property
    def root(self):
        """The loaded session's root; before the load, a stand-in that loads
        on first use. Made on each ask, not kept: a stand-in kept here would
        hold this session back (a cycle, which would keep the loaded files
        open after close until a full collection)."""
        return _LazyRoot(self) if self._loaded is None else self._loaded.root

    def loaded(self):
        """The source loaded (once), as ``-s`` loads it."""
        if self._loaded is None:
            from .files import open_session
            self._loaded = open_session(self.source, show_secrets=self.show_secrets,
                                        progress=self._progress)
        return self._loaded

    def close(self) -> None:
        if self._loaded is not None:
            self._loaded.close()

    def new_problems(self, since: int) -> list:
        """Problems found since ``since``: none until the source is loaded."""
        return [] if self._loaded is None else self._loaded.new_problems(since)

    def __getattr__(self, name):   # image, engine, summary, ...: the loaded session's
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.loaded(), name)


class _LazyRoot:
    """The loaded session's root, loaded when first used."""

    def __init__(self, session: PlannedSession):
        self._session = session

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._session.loaded().root, name)


def open_planned_session(path, *, until_offset=None, until_time=None, show_secrets: bool = False,
                         progress=None, **_) -> PlannedSession:
    """:class:`PlannedSession` of ``path`` (the shell's opener for a one-shot
    ``log``; it never passes ``until_offset``/``until_time``)."""
    assert until_offset is None and until_time is None
    return PlannedSession(path, show_secrets=show_secrets, progress=progress)
