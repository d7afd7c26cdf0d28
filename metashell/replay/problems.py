"""What a load reports: the records applied, skipped and why.

:class:`Tally` is shared by everything that applies records (the delta,
the fast path's entries, kept runs and pending changes, folding) and holds
no image, so that the image's lazy parts can report without holding
their engine.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_PROBLEMS = 10_000   # reported problems kept (the count goes on)


@dataclass
class Problem:
    """A record that could not be decoded or applied."""

    offset: int
    message: str
    source: str = ""

    def __str__(self) -> str:
        where = f"{self.source} " if self.source else ""
        return f"{where}offset {self.offset}: {self.message}"


class ApplyError(Exception):
    """Raised by a record's replay rule: the record is skipped and reported."""


class Tally:
    """Counts of records applied by type, and problems, of one load."""

    def __init__(self):
        self.problems: list[Problem] = []
        self.applied = 0           # metadata records applied
        self.skipped = 0           # records reported as problems
        self.by_type: dict[str, int] = {}
        self.source = ""           # label for problems (file name)
        # None, or called as on_change(entity key, record) for each record the
        # general path applies (``watch`` in live mode; see replay/delta.py)
        self.on_change = None

    def count(self, name: str, n: int) -> None:
        """``n`` records of type ``name`` applied (negative: taken back)."""
        self.applied += n
        by_type = self.by_type
        by_type[name] = by_type.get(name, 0) + n

    def problem(self, offset: int, message: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(offset, message, self.source))

    def undecodable(self, rec) -> None:
        self.problem(rec.offset, f"undecodable {rec.name}"
                     f"{'' if rec.version is None else ' v' + str(rec.version)}: {rec.error}")
