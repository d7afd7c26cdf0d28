"""The fast path's shortcuts: each reads one shape of records straight from their bytes.

Each module declares, in ``VERSIONS``, the versions of each record type it
reads (:class:`Decided`); the reader and the shortcut take no other version
(one comparison per shape), so a record of any other version takes the
general path, decoded by its schema. ``tests/unit/test_fast_versions.py`` fails
when the catalog has a version of such a record that a shortcut has not
decided on. ``METASHELL_FAST_PATH=0`` in the environment turns every
shortcut off (:func:`enabled`): every source is then read through the
general path only, which the tests compare with the fast one.
"""

from __future__ import annotations

import os
from typing import NamedTuple


class Decided(NamedTuple):
    """The versions of one record type a shortcut reads from their bytes
    (``reads``: the layouts it was written for), and those its author
    looked at and leaves to the general path (``refuses``)."""

    reads: range
    refuses: tuple = ()

    @property
    def last(self) -> int:
        """The newest version read: the one comparison a shape is checked by."""
        return self.reads[-1]


def enabled() -> bool:
    """Whether the fast path is on (``METASHELL_FAST_PATH``, default 1); read
    when a reader is opened."""
    return os.environ.get("METASHELL_FAST_PATH", "1") != "0"
