"""The fast path's one door: all that the layers above it (replay, queries,
fs, commands, session, spark) use of :mod:`metashell.fast`.

No module outside ``metashell/fast/`` imports any other module of the
package (``tests/unit/test_import_layers.py``). Nothing offered here reads a
record's bytes itself: the shortcuts that do (each declaring, in
``VERSIONS``, the record versions it reads) stay behind the door, reached
through the reader's plug-in point and the objects of one load, and what
must read bytes again is asked of the :class:`~.store.RecordStore` a load
was handed.

The door is a module of its own, not the package's ``__init__``: every
shortcut imports the package itself (``Decided``, ``enabled``), which would
then load the whole fast path into each of them, and back into itself.

A name is imported with its module the first time a layer imports it from
here (:func:`__getattr__`, once; then it is this module's own): the shell's
``log`` pays for the reader's shortcuts, not for the replay's objects, so
importing through the door costs what importing the modules did. The
importer binds the object itself (no wrapper): a record costs what it did.

Every method and attribute the layers above use of the offered objects is
declared in :mod:`.interface` (offered here too): the parts of the replay
are written against those protocols, and only ``replay/engine.py`` names the
classes that keep them.
"""

from __future__ import annotations

from importlib import import_module

#: name offered -> (module of ``metashell.fast`` it lives in, its name there), by who asks;
#: each with what the layer above uses it for
OFFERS: dict[str, tuple[str, str]] = {
    # -- the reader's plug-in point (commands' ``log``, Spark's history; the store's readers)
    # ``FileReader(..., shortcuts=shortcuts)``: a reader's shortcuts, None when the fast
    # path is off (``METASHELL_FAST_PATH=0``); without it a reader runs only the general path
    "shortcuts": ("reading", "shortcuts"),

    # -- what the replay asks: the objects one load is made of (``replay/engine.py`` wires them)
    # one load's files, records left in them: the session opens files (``open``) and finds a
    # time's offset (``file_numbers``, ``offset_before_time``); the batch loader asks
    # ``searchable``; folding reads back ``data``, ``run_data``, ``run_values``,
    # ``run_changes``, ``run_counts``, ``value_bytes``; kept runs ``run_refs``,
    # ``config_fields``, ``config_values``, ``acls_decode``; ``rewind`` ``refs_after``,
    # ``records_after``
    "RecordStore": ("store", "RecordStore"),
    # refs read back as records (``record``, ``records``), stamped as their snapshot's
    # (``stamp_file`` as it is read; ``stamp``, ``stamped``)
    "Refs": ("refs", "Refs"),
    # deferred entries applied as the general path's rules would: the batch loader asks
    # ``apply``, ``only_changes``, ``settle_before``, ``as_records``, ``defer_changes`` and
    # the pending changes (``changes``: ``batches``, ``add``); the engine ``pending_effects``,
    # ``pending_count``; the delta files a partition record by ``partition_key``
    "EntryReplay": ("replay_entries", "EntryReplay"),
    # deferred partition records and a log's pending changes filed: ``file_into`` (a new
    # image), ``file_topic`` (a topic looked at), ``settle`` (all of them), ``changes``
    "ChangeFiler": ("change_filing", "ChangeFiler"),
    # ``summary``'s counts of a topic's partitions from their bytes where it can:
    # ``run_counts`` (its runs untouched), ``filed_counts`` (the rest)
    "TopicCounts": ("topic_counts", "TopicCounts"),

    # -- what the replay and the queries read of a deferred entry they hold (the layouts
    # are ``deferred.py``'s alone): a kept run's first ref and count (``kept.py``)
    "REF": ("deferred", "REF"),
    "KEPT_COUNT": ("deferred", "KEPT_COUNT"),
    # a run's partition ids (the image's topics filing a run; ``queries/summary.py``'s rows)
    "RUN_PARTITION_IDS": ("deferred", "RUN_PARTITION_IDS"),
    # a run's (first ref, shape, partition ids, raw topic id) in one C call (folding)
    "run_fields": ("deferred", "run_fields"),
    # the refs of the records an entry stands for, in order (the image's topics)
    "entry_refs": ("deferred", "refs"),

    # -- what the views ask (``fs/kafka_text.py``, the partition model's texts)
    # the texts of a run's partitions from the values read of its bytes, one format per
    # layout, the format the view's: ``RunTexts(formats, numbered=...)``, called per run
    "RunTexts": ("run_texts", "RunTexts"),
    # where a run's topic id goes in a ``RunTexts`` printf-style format
    "TEXT_TOPIC": ("run_texts", "TOPIC"),

    # -- the interface the objects above keep, one protocol each (``interface.py``)
    "Store": ("interface", "Store"),
    "StoreRefs": ("interface", "StoreRefs"),
    "Entries": ("interface", "Entries"),
    "Filer": ("interface", "Filer"),
    "Counts": ("interface", "Counts"),
    "RunTextMaker": ("interface", "RunTextMaker"),
}

__all__ = list(OFFERS)


def __getattr__(name: str):
    """An offered name, imported with its module on first use and kept."""
    try:
        module, attr = OFFERS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} offers no {name!r} (see OFFERS)") from None
    value = globals()[name] = getattr(import_module(f".{module}", __package__), attr)
    return value
