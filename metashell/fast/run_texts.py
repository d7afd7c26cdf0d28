"""The texts of a run's partitions, written straight from the values read of
its bytes: the fast path's door for the views that show partitions.

``cat '/topics/*/*/data'``, ``tree /topics`` and ``tree /image/topics`` show
every field of every partition; decoding a million PartitionRecords into
dicts and folding each into a state costs more than the rest of such a
command (-65% of ``cat``'s time at a million partitions without it). Where
a partition's only record is still its run's PartitionRecord, the store
reads the run's values field by field (:func:`.run_values.run_values`:
``(layout, ints, uuids)``, its integers in the layout's order record after
record, then its directories), and :class:`RunTexts` writes each
partition's text with one format per run layout.

The format is the view's, made from the layout's field names alone (no
byte here): the partition model's text and JSON
(``replay/partition_model.run_format``) and Kafka's ``PartitionRegistration``
(``fs/kafka_text.registration_format``); what they write is checked against
the text of the folded state on every layout, change and corpus input
(``tests/unit/test_fold_topic.py``, ``check_texts``). The replay hands a
writer to ``PartitionFolder.topic_texts``, which asks it per run.
"""

from __future__ import annotations

from typing import Callable

from ..kraft.primitives import UUID_TEXT

#: where a run's topic id goes in a printf-style format (a run's topic is its own)
TOPIC = "\x00topic\x00"

#: run layouts whose formats one writer keeps (a load has a handful)
KEPT_FORMATS = 256


class RunTexts:
    """Writes the texts of a run's partitions, one format per run layout.

    ``formats(layout, nl)`` gives the format of a partition's text for a
    ``layout`` (``run_values``': ``(JSON name, "int" or "uuid", count)`` per
    field), or None where it writes none; ``nl`` is each newline and the
    indentation after it (None: compact JSON; a one-line text ignores it).
    A format is printf-style (``format % values``, the run's topic id at
    :data:`TOPIC`) or, ``numbered``, ``str.format``'s numbered fields
    (``{0}``: the partition's first value). A partition's values are its
    integers, then the text of its UUIDs."""

    __slots__ = ("_formats", "_numbered", "_made")

    def __init__(self, formats: "Callable[[tuple, str | None], str | None]", *,
                 numbered: bool = False):
        self._formats = formats
        self._numbered = numbered
        self._made: dict = {}   # (layout, nl) -> (format, integers per partition) or None

    def __call__(self, topic_id: str, layout: tuple, ints: tuple, uuids: tuple,
                 nl: "str | None" = "\n") -> "list[str] | None":
        """The text of each partition of a run of topic ``topic_id`` (its
        text) whose values read as ``layout``, ``ints`` and ``uuids``, in the
        run's order; None when ``formats`` writes no format for the layout."""
        key = (layout, nl)
        got = self._made.get(key, False)
        if got is False:
            if len(self._made) >= KEPT_FORMATS:
                self._made.clear()
            fmt = self._formats(layout, nl)
            got = self._made[key] = None if fmt is None else (
                fmt, sum(count for _, kind, count in layout if kind == "int"))
        if got is None:
            return None
        fmt, a = got
        if self._numbered:
            return _numbered(fmt.format, a, ints, uuids)
        return _printf(fmt.replace(TOPIC, topic_id), a, ints, uuids)


def _printf(fmt: str, a: int, ints: tuple, uuids: tuple) -> list:
    """``fmt % values`` of each partition (``a`` integers each)."""
    if not uuids:
        return [fmt % ints[j:j + a] for j in range(0, len(ints), a)]
    texts = tuple(map(UUID_TEXT.__getitem__, uuids))
    d = len(texts) * a // len(ints)
    return [fmt % (ints[j:j + a] + texts[k:k + d])
            for j, k in zip(range(0, len(ints), a), range(0, len(texts), d))]


def _numbered(fmt: Callable, a: int, ints: tuple, uuids: tuple) -> list:
    """``fmt(*values)`` of each partition (``a`` integers each)."""
    if not uuids:
        return [fmt(*ints[j:j + a]) for j in range(0, len(ints), a)]
    texts = tuple(map(UUID_TEXT.__getitem__, uuids))
    d = len(texts) * a // len(ints)
    return [fmt(*ints[j:j + a], *texts[k:k + d])
            for j, k in zip(range(0, len(ints), a), range(0, len(texts), d))]
