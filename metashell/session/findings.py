"""What a load had to say, split into notes and problems.

Every remark is one line on stderr. A *problem* means the image may be
missing something or be wrong (a damaged batch skipped, a record that
could not be applied, an incomplete or unusable snapshot, a fallback, a
gap in the log, time travel outside the data); ``--strict`` turns any of
them into exit status 1, and ``summary`` lists them under ``problems``. A
*note* describes the input without casting doubt on the image: a torn last
batch of the newest segment (what a running broker's directory looks
like), ignored leftovers such as ``*.checkpoint.part``, snapshots or
segments left out for ``--until-offset``.
"""

from __future__ import annotations


class Findings:
    """The remarks of one load, in the order they were made."""

    def __init__(self):
        self.lines: list[str] = []      # every remark, notes and problems, in order
        self.problems: list[str] = []   # the remarks that are problems

    def note(self, text: str) -> None:
        self.lines.append(text)

    def problem(self, text: str) -> None:
        self.lines.append(text)
        self.problems.append(text)

    def extend(self, texts, *, problems: bool) -> None:
        for text in texts:
            self.problem(text) if problems else self.note(text)
