"""The partition model, made from the catalog's PartitionRecord and
PartitionChangeRecord (``kraft/catalog.py``) once, when this module is
imported.

Every field of ``PartitionRecord`` (in every version the catalog has) is
an attribute of :class:`PartitionState`, a key of its JSON (the tree's
``/topics/<name>/<id>/data``), a column of the Spark ``partitions`` table
and, where a ``PartitionChangeRecord`` carries the same field, something a
change replaces. The rules:

* attribute: the field's name in snake_case (``LeaderEpoch`` ->
  ``leader_epoch``), in the catalog's order, then ``change`` and
  ``unknown_tags``; JSON key: the field's JSON name (``leaderEpoch``);
  Spark column: the attribute, typed from the field's type;
* from a PartitionRecord: the record's value; an array null in some layout
  (2.8) or by default is an empty list; a field some layout lacks takes
  its default;
* a change's field replaces the partition's field of the same name when it
  is not the field's default (its "unchanged" sentinel: null, or ``-1`` for
  ``leaderRecoveryState``); every change adds one to ``partitionEpoch``;
  tagged fields the catalog does not know are kept (the last value of each
  tag) and shown in the JSON as ``_unknownTaggedFields``;
* ``describe`` (``changes``, ``log``) names each field a change sets.

:func:`merge_change` is the one definition of what a change does (Kafka's
``PartitionRegistration.merge``): the shortcuts that read a change's effect
from its bytes (``fast/partition_change.EFFECT``,
``fast/partition_change.change_counts``) are checked against it on
every catalog version (``tests/unit/test_partition_change_definition.py``).

:data:`SPECIAL` lists the exceptions: the fields Kafka's
``PartitionRegistration`` treats otherwise. Adding a field to either record
in the catalog is enough for the model; ``tests/unit/test_partition_model.py``
checks that every field of every catalog version is represented, and
fails for a change field this model cannot place.

The code on the hot path (:class:`PartitionState`; :func:`partition_state`,
which the fast path calls per partition of a run;
:meth:`PartitionState.to_json`, which ``tree -o json`` calls per partition;
:func:`merge_change`; ``text_args``, what :func:`data_text` formats) is
generated from these rules by :func:`generated_source`, so that it runs as
hand-written code would: no loop over fields per record. It is the module
:mod:`.partition_generated`, real ``def``s to read and what runs;
``python -m metashell.replay.partition_model`` writes it again after the
catalog or these rules change (until then the source made at import runs:
see :func:`_load_generated`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Mapping

from ..kraft import enums
from ..kraft.catalog import METADATA, METADATA_2_8
from ..kraft.fields import MISSING, UNKNOWN_TAGS, Field
from ..fast.door import TEXT_TOPIC, RunTextMaker, RunTexts
from .partition_values import MIGRATING_DIR, SHORT_ARRAY, encode_str, ints_text, named_text, uuids_text

PARTITION_RECORD = METADATA[3]
PARTITION_CHANGE_RECORD = METADATA[5]
#: every layout of each record a reader may hand over (the 2.8 one lacks fields)
_LAYOUTS = {3: (PARTITION_RECORD, METADATA_2_8[3]), 5: (PARTITION_CHANGE_RECORD, METADATA_2_8[5])}

NO_LEADER_CHANGE = -2                      # PartitionChangeRecord.Leader: unchanged


@dataclass(frozen=True)
class Special:
    """How a field departs from the rules of the module's docstring."""

    why: str
    attr: "str | None" = None      # the attribute (and Spark column), when not the snake_case name
    column: "str | None" = None    # the Spark column, when not the attribute
    build: "str | None" = None     # the value from a PartitionRecord ``d`` (source)
    merge: "tuple[str, ...] | None" = None   # what a change does with it (source lines; () none)
    merge_first: bool = False      # merged before any other field (it may reject the change)
    local: bool = False            # read from a PartitionRecord once, into a local of its
                                   # attribute's name that other fields' ``build`` use
    names: "Mapping[int, str] | None" = None   # text output shows these names for its codes


#: the exceptions, by the catalog's field name (a field of either record)
SPECIAL: dict[str, Special] = {
    "PartitionId": Special("which partition: a change names it, never changes it",
                           column="partition", merge=()),
    "TopicId": Special("which topic: a change names it, never changes it", merge=()),
    "Replicas": Special("a change's replicas are checked against its directories first: "
                        "merged with Directories; Directories' default needs their count",
                        merge=(), local=True),
    "Directories": Special(
        "Kafka's defaultToMigrating: none, or all MIGRATING, is MIGRATING for every replica; "
        "a change whose directories do not match its replicas is rejected, nothing changed",
        build='default_to_migrating(d.get("directories"), len(replicas))',
        merge=('replicas = {replicas}',
               'if replicas is None:',
               '    replicas = s.replicas',
               'dirs = d.get("directories")',
               'directories = default_to_migrating(s.directories if dirs is None else dirs, '
               'len(replicas))',
               'if len(directories) != len(replicas):',
               '    return f"{{len(directories)}} directories for {{len(replicas)}} replicas"',
               's.replicas = replicas',
               's.directories = directories'),
        merge_first=True),
    "Leader": Special("a new leader (anything but -2, unchanged) starts a new leader epoch",
                      merge=('leader = {value}',
                             f'if leader != {NO_LEADER_CHANGE}:',
                             '    s.leader = leader',
                             '    s.leader_epoch += 1')),
    "LeaderRecoveryState": Special("an enum: text output shows its name, JSON its code",
                                   names=enums.LEADER_RECOVERY_STATES),
    "EligibleLeaderReplicas": Special("Kafka's PartitionRegistration calls it elr", attr="elr"),
}

#: the Spark ``partitions`` table's columns as first released; a field not
#: named here gets a column after them, in the catalog's order
SPARK_RELEASED_ORDER = ("TopicId", "PartitionId", "Leader", "LeaderEpoch", "PartitionEpoch",
                        "Replicas", "Isr", "RemovingReplicas", "AddingReplicas", "Directories",
                        "EligibleLeaderReplicas", "LastKnownElr", "LeaderRecoveryState")

#: what ``describe`` shows of a change, in this order as first released; a
#: field not named here (nor a key) follows them, in the catalog's order
DESCRIBE_CHANGE_RELEASED_ORDER = ("Leader", "Isr", "Replicas", "AddingReplicas",
                                  "RemovingReplicas", "EligibleLeaderReplicas", "LastKnownElr",
                                  "Directories", "LeaderRecoveryState")

#: PartitionRecord fields its one-line ``describe`` leaves out, and why
DESCRIBE_RECORD_LEAVES_OUT = {
    "TopicId": "the line is about a partition; the topic is its path's",
    "RemovingReplicas": "one line: the partition's data shows a reassignment",
    "AddingReplicas": "one line: the partition's data shows a reassignment",
    "Directories": "one line: a 22-character UUID per replica",
    "EligibleLeaderReplicas": "one line: the partition's data shows ELRs",
    "LastKnownElr": "one line: the partition's data shows ELRs",
}

_SPARK_TYPES = {"int8": "INT", "int16": "INT", "uint16": "INT", "int32": "INT",
                "int64": "BIGINT", "uuid": "STRING", "string": "STRING", "bool": "BOOLEAN",
                "float64": "DOUBLE"}


def snake(name: str) -> str:
    """``LeaderRecoveryState`` -> ``leader_recovery_state``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True)
class ModelField:
    """One PartitionRecord field as the model holds it."""

    field: Field
    attr: str          # PartitionState attribute
    json: str          # key of its JSON
    column: str        # Spark column
    spark_type: str
    names: "Mapping[int, str] | None"

    @property
    def name(self) -> str:
        return self.field.name


def _special(name: str) -> Special:
    return SPECIAL.get(name) or Special("")


def _spark_type(f: Field) -> str:
    if f.is_array:
        return f"ARRAY<{_SPARK_TYPES[f.element_type]}>"
    return _SPARK_TYPES[f.type]


def _model_field(f: Field) -> ModelField:
    sp = _special(f.name)
    attr = sp.attr or snake(f.name)
    return ModelField(f, attr, f.json, sp.column or attr, _spark_type(f), sp.names)


#: the PartitionRecord's fields, in the catalog's order
FIELDS: tuple[ModelField, ...] = tuple(_model_field(f) for f in PARTITION_RECORD.fields)
BY_NAME: dict[str, ModelField] = {m.name: m for m in FIELDS}


def _in_every_layout(api_key: int, f: Field) -> bool:
    return all(any(g.name == f.name for g in m.fields) for m in _LAYOUTS[api_key])


def _nullable_somewhere(api_key: int, f: Field) -> bool:
    return any(g.name == f.name and (g.nullable_range.text != "none" or g.default is None)
               for m in _LAYOUTS[api_key] for g in m.fields)


def _read(api_key: int, f: Field, default) -> str:
    """Source reading field ``f`` of a decoded record ``d``."""
    if _in_every_layout(api_key, f):
        return f"d[{f.json!r}]"
    return f"d.get({f.json!r})" if default is None else f"d.get({f.json!r}, {default!r})"


def _build_expr(m: ModelField) -> str:
    sp = _special(m.name)
    if sp.build is not None:
        return sp.build
    f = m.field
    if f.is_array:
        read = _read(3, f, None)
        return f"({read} or [])" if (_nullable_somewhere(3, f) or read.startswith("d.get")) else read
    if _in_every_layout(3, f):
        return _read(3, f, None)
    default = f.default_value()
    return _read(3, f, default)


def _sentinel(f: Field):
    """A change field's "unchanged" value: its default."""
    return None if f.default is MISSING and f.is_array else f.default_value()


def _merge_lines(f: Field) -> list[str]:
    """Source of what a change's field ``f`` does (``s``: the state, ``d``: the change)."""
    sp = _special(f.name)
    m = BY_NAME.get(f.name)
    value = _read(5, f, _sentinel(f))
    if sp.merge is not None:
        replicas = _read(5, PARTITION_CHANGE_RECORD.fields[_index(5, "Replicas")], None)
        return [line.format(value=value, replicas=replicas) for line in sp.merge]
    if m is None:
        raise TypeError(f"PartitionChangeRecord.{f.name} has no PartitionRecord field to change: "
                        f"say what it does in partition_model.SPECIAL")
    sentinel = _sentinel(f)
    test = "is not None" if sentinel is None else f"!= {sentinel!r}"
    var = m.attr
    return [f"{var} = {value}", f"if {var} {test}:", f"    s.{m.attr} = {var}"]


def _index(api_key: int, name: str) -> int:
    return [f.name for f in _LAYOUTS[api_key][0].fields].index(name)


def _class_lines() -> list[str]:
    """Source of :class:`PartitionState`, its ``to_json`` included."""
    return [
        "@dataclass",
        "class PartitionState:",
        '    """A partition\'s registration after folding its records: one attribute',
        '    per PartitionRecord field (see metashell.replay.partition_model)."""',
        "",
        *[f"    {m.attr}: {'list' if m.field.is_array else 'int' if m.field.type != 'uuid' else 'str'}"
          for m in FIELDS],
        "    change: tuple   # (offset, timestamp) of the record that last changed it",
        "    # tagged fields of its records the catalog does not know: [[tag, raw bytes]], by tag",
        '    unknown_tags: "list | None" = None',
        "",
        "    def to_json(self):",
        '        """The partition as the tree shows it (``/topics/<name>/<id>/data``)."""',
        "        out = {",
        *[f"            {m.json!r}: self.{m.attr}," for m in FIELDS],
        "        }",
        "        if self.unknown_tags:   # shown, not dropped: a newer Kafka's field this catalog lacks",
        f"            out[{UNKNOWN_TAGS!r}] = self.unknown_tags",
        "        return out",
    ]


def _state_lines() -> list[str]:
    """Source of :func:`partition_state`."""
    local = [m for m in FIELDS if _special(m.name).local]
    return [
        "def partition_state(d, change):",
        '    """A partition\'s state from a PartitionRecord\'s fields ``d``, changed at ``change``."""',
        *[f"    {m.attr} = {_build_expr(m)}" for m in local],
        "    state = PartitionState(   # positional, in field order: -6% time for a full walk",
        *[f"        {m.attr if m in local else _build_expr(m)}," for m in FIELDS],
        "        change)",
        f"    unknown = d.get({UNKNOWN_TAGS!r})",
        "    if unknown:",
        "        state.unknown_tags = [[tag, raw] for tag, raw in sorted(unknown)]",
        "    return state",
    ]


def _merge_change_lines() -> list[str]:
    """Source of :func:`merge_change`."""
    lines = [
        "def merge_change(s, d):",
        '    """Merge a PartitionChangeRecord\'s fields ``d`` into state ``s`` (Kafka\'s',
        "    PartitionRegistration.merge); returns why Kafka would reject it instead",
        '    (nothing is changed then), else None."""',
    ]
    change_fields = PARTITION_CHANGE_RECORD.fields
    ordered = ([f for f in change_fields if _special(f.name).merge_first]
               + [f for f in change_fields if not _special(f.name).merge_first])
    for f in ordered:
        lines += ["    " + line for line in _merge_lines(f)]
    return lines + [
        f"    unknown = d.get({UNKNOWN_TAGS!r})",
        "    if unknown:   # the last value of each tag the catalog does not know",
        "        merged = {**dict(s.unknown_tags or ()), **dict(unknown)}",
        "        s.unknown_tags = [[tag, merged[tag]] for tag in sorted(merged)]",
        "    s.partition_epoch += 1",
        "    return None",
    ]


GENERATED = Path(__file__).with_name("partition_generated.py")
_HEADER = '''"""The partition model's code, generated from the catalog's PartitionRecord
and PartitionChangeRecord by ``metashell.replay.partition_model.generated_source``:
do not edit. ``python -m metashell.replay.partition_model`` writes it again (after
a change to the catalog or to the model's rules; tests/unit/test_partition_model.py
fails until then, while the model runs the source it makes at import).

What a partition holds (:class:`PartitionState`), how a PartitionRecord makes
it (:func:`partition_state`), what a PartitionChangeRecord does to it
(:func:`merge_change`, Kafka's ``PartitionRegistration.merge``), its JSON
(``PartitionState.to_json``) and the values of its text (:func:`text_args`).
"""

from __future__ import annotations

from dataclasses import dataclass

'''


def generated_source() -> str:
    """The source of :mod:`.partition_generated`: the model's hot code, as
    these rules make it from the catalog."""
    text = _text_fields()
    imports = ["default_to_migrating"]
    if text is not None:
        imports += ["encode_str", "ints_text", "named_text", "uuids_text"]
    parts = [_HEADER]
    if text is not None and any(m.names for m in FIELDS):
        parts.append("from ..kraft import enums\n")
    parts.append(f"from .partition_values import {', '.join(imports)}\n\n\n")
    blocks = [_class_lines(), _state_lines(), _merge_change_lines()]
    if text is not None:
        blocks.append(text[0])
    parts.append("\n\n\n".join("\n".join(b) for b in blocks) + "\n")
    return "".join(parts)


def shown(partition_json: dict) -> dict:
    """A partition's JSON (:meth:`to_json`) as text output shows it: enum
    codes by name (``leaderRecoveryState: RECOVERED``); an unknown code
    stays a number."""
    out = dict(partition_json)
    for key, names in _NAMED:
        value = out[key]
        out[key] = names.get(value, value)
    return out


_NAMED = tuple((m.json, m.names) for m in FIELDS if m.names)


# -- a partition's text ---------------------------------------------------------------------

_INTS = {"int8", "int16", "int32", "int64", "uint16"}
def _names_table(names: Mapping) -> str:
    """The ``enums`` table an enum field's names are (for the generated source)."""
    return next(f"enums.{name}" for name, value in vars(enums).items() if value is names)


def _text_fields() -> "tuple[list[str], tuple] | None":
    """Source of ``text_args(s, nl)``, each field of a state as
    :func:`data_text`'s format takes it, and each field's conversion
    (``d``: an int as is, ``s``: its text); None if a field is of a type it
    does not write."""
    args, kinds = [], []
    for m in FIELDS:
        f, value = m.field, f"s.{m.attr}"
        if m.names:
            args.append(f"named_text({value}, {_names_table(m.names)})")
            kinds.append("s")
        elif f.is_array and f.element_type in _INTS:
            args.append(f"ints_text({value}, nl)")
            kinds.append("s")
        elif f.is_array and f.element_type == "uuid":
            args.append(f"uuids_text({value}, nl)")
            kinds.append("s")
        elif not f.is_array and f.type in _INTS:
            args.append(value)
            kinds.append("d")
        elif not f.is_array and f.type == "uuid":
            args.append(f"encode_str({value})")
            kinds.append("s")
        else:
            return None
    return (["def text_args(s, nl):",
             '    """The values of a state\'s text, in field order, as data_text\'s format takes them."""',
             "    return (",
             *[f"        {arg}," for arg in args],
             "    )"], tuple(kinds))


_TEXT_KINDS = (_text_fields() or (None, None))[1]
#: "{\n  "partitionId": %d,\n ... }" per line break (``nl``: a newline and the indentation)
_TEXT_FORMATS: dict = {}


def data_text(state, nl: str = "\n") -> "str | None":
    """``render.value_text(shown(state.to_json()))`` with each newline
    followed by ``nl``'s indentation (``nl``: a newline then spaces), made
    in one format per partition (``cat`` of every partition's data, text
    ``tree /topics``: 40% less time than encoding and re-indenting it);
    None where the general path must write it (unknown tagged fields, a
    value of a type not expected).

    Assumes what the decoders and the fold give: an int field holds an
    int (not a bool), an array of ints holds ints, a uuid is base64 text
    (no character to escape but as JSON escapes it), and that value_text writes an
    object of such fields as ``json.dumps(indent=2)`` would, arrays of at
    most ``SHORT_ARRAY`` numbers on one line (tests/unit/test_partition_model.py
    and test_fold_topic.py check it against value_text)."""
    if state.unknown_tags or _TEXT_KINDS is None:
        return None
    fmt = _TEXT_FORMATS.get(nl)
    if fmt is None:
        if len(_TEXT_FORMATS) >= 64:
            _TEXT_FORMATS.clear()
        fmt = _TEXT_FORMATS[nl] = ("{" + nl + ("," + nl).join(
            "  " + encode_str(m.json).replace("%", "%%") + ": %" + kind
            for m, kind in zip(FIELDS, _TEXT_KINDS)) + nl + "}")
    try:   # %d takes an int, and refuses None or text
        return fmt % text_args(state, nl)
    except (TypeError, AttributeError):
        return None

# -- a run's texts, from the values read from its bytes --------------------------------------


def _value_text(m: ModelField, value, nl: "str | None") -> str:
    """One field's value as :func:`data_text` writes it (``m``'s kind as
    ``_text_fields`` gives it), or, ``nl`` None, as compact JSON writes it
    (:meth:`PartitionState.to_json`: codes as numbers)."""
    if nl is None:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    f = m.field
    if m.names:
        return named_text(value, m.names)
    if f.is_array:
        return uuids_text(value, nl) if f.element_type == "uuid" else ints_text(value, nl)
    return encode_str(value) if f.type == "uuid" else str(value)


def _placeholders(m: ModelField, count: int, nl: "str | None") -> str:
    """The format of a field of ``count`` values read from the bytes (in
    text, or ``nl`` None compact JSON)."""
    f = m.field
    if not f.is_array:
        return "%d" if f.type in _INTS else "%s"
    one = '"%s"' if f.element_type == "uuid" else "%d"
    if nl is None:
        return "[" + ",".join([one] * count) + "]"
    if f.element_type != "uuid" and count <= SHORT_ARRAY:
        return "[" + ", ".join([one] * count) + "]"
    return "[" + nl + "    " + ("," + nl + "    ").join([one] * count) + nl + "  ]"


def _object_format(keys, parts: list, nl: "str | None") -> str:
    """An object of ``parts`` (formats) under ``keys``, in text (each newline
    followed by ``nl``'s indentation) or, ``nl`` None, compact JSON."""
    keys = [encode_str(k).replace("%", "%%") for k in keys]
    if nl is None:
        return "{" + ",".join(k + ":" + part for k, part in zip(keys, parts)) + "}"
    return "{" + nl + ("," + nl).join("  " + k + ": " + part for k, part in zip(keys, parts)) \
        + nl + "}"


def run_format(layout: tuple, nl: "str | None") -> "str | None":
    """The printf-style format of :func:`data_text` (``nl`` None: of
    :meth:`~PartitionState.to_json` as compact JSON) of each partition of a
    run whose values :func:`~metashell.fast.run_values.run_values` read as
    ``layout``, for :data:`RUN_TEXTS` (the topic id at
    the door's ``TEXT_TOPIC``): a field read with values takes
    them, integers then UUIDs in the layout's order; any other field (or an
    empty array) is the value :func:`partition_state` gives a record with
    these values (a tagged field's default, MIGRATING directories when none
    are given). None when the layout is not so (a field the model lacks,
    another kind, another order)."""
    d = {m.json: m.field.default_value() for m in FIELDS}
    for name, kind, count in layout:
        m = _BY_JSON.get(name)
        if m is None or m.names or kind != ("uuid" if _element(m) == "uuid" else "int"):
            return None
        d[name] = [MIGRATING_DIR if kind == "uuid" else 0] * count if m.field.is_array else 0
    model = partition_state(d, None)
    read = {name: count for name, _, count in layout}
    parts, order = [], []
    for m in FIELDS:
        count = read.get(m.json, 0)
        if m.json == "topicId":   # a UUID's text (base64url) needs no escape: quoted as it is
            parts.append('"' + TEXT_TOPIC + '"')
        elif count == 0:
            parts.append(_value_text(m, getattr(model, m.attr), nl).replace("%", "%%"))
        else:
            order.append(m.json)
            parts.append(_placeholders(m, count, nl))
    kinds = [_element(_BY_JSON[name]) == "uuid" for name in order]
    if order != [name for name, _, count in layout if count] or kinds != sorted(kinds):
        return None
    return _object_format([m.json for m in FIELDS], parts, nl)


def layout_state(layout: tuple, slot: Callable[[int], Any]) -> "PartitionState | None":
    """The state :func:`partition_state` gives a record whose fields read
    as ``layout`` (:func:`~metashell.fast.run_values.run_values`':
    ``(JSON name, "int" or "uuid", count)``) hold ``slot(i)``, ``i``
    numbering the values as a run's partition passes them (its integers in
    the layout's order, then its UUIDs), every other field at its default:
    a model state whose text is a format of the run's other texts, with a
    slot where each value goes (``fs.kafka_text.registration_format``). None
    for a field the model lacks, another kind, or an enum (its text is a
    name, not the value)."""
    next_slot = {"int": 0, "uuid": sum(count for _, kind, count in layout if kind == "int")}
    d = {m.json: m.field.default_value() for m in FIELDS}
    for name, kind, count in layout:
        m = _BY_JSON.get(name)
        if m is None or m.names or kind != ("uuid" if _element(m) == "uuid" else "int"):
            return None
        first = next_slot[kind]
        next_slot[kind] += count
        values = [slot(first + k) for k in range(count)]
        d[name] = values if m.field.is_array else values[0]
    return partition_state(d, None)


def _element(m: ModelField) -> str:
    return m.field.element_type if m.field.is_array else m.field.type


_BY_JSON = {m.json: m for m in FIELDS}

#: :func:`data_text` (or, ``nl`` None, the compact JSON) of each partition of
#: a run, written from the values read of its bytes (``PartitionFolder.topic_texts``'
#: ``make``; ``cat`` of every partition's data, each topic asked for all its
#: partitions at once)
RUN_TEXTS: RunTextMaker = RunTexts(run_format)


@dataclass(frozen=True)
class ReadField:
    """Where a field's values are among those a run's partition passes
    (:func:`~metashell.fast.run_values.run_values`: its integers, then its
    UUIDs): ``count`` values of ``kind`` (``"int"`` or ``"uuid"``) from
    ``start`` on, an array of them or (``array`` false) one value."""

    kind: str
    start: int
    count: int
    array: bool


@dataclass(frozen=True, eq=False)   # one per layout (layout_plan): compared by identity
class LayoutPlan:
    """What each field of :meth:`PartitionState.to_json` is for a partition
    of a run whose values were read as one layout: ``read`` holds the fields
    taken from the values (:class:`ReadField`), ``constant`` the value every
    other field has (a tagged field's default, MIGRATING directories when
    none are given), the topic id aside (the run's own); ``ints`` and
    ``uuids`` count a partition's values of each kind. Column-wise readers
    (the Spark ``partitions`` table) build each field of a whole run at
    once from it, no dict per partition."""

    read: Mapping[str, ReadField]
    constant: Mapping[str, Any]
    ints: int
    uuids: int


_LAYOUT_PLANS: dict = {}


def layout_plan(layout: tuple) -> "LayoutPlan | None":
    """The :class:`LayoutPlan` of a run's ``layout``
    (:func:`~metashell.fast.run_values.run_values`'), made once per layout;
    None for a field the model lacks, another kind, or an enum (as
    :func:`layout_state`)."""
    got = _LAYOUT_PLANS.get(layout, False)
    if got is False:
        if len(_LAYOUT_PLANS) >= 256:
            _LAYOUT_PLANS.clear()
        got = _LAYOUT_PLANS[layout] = _plan(layout)
    return got


def _plan(layout: tuple) -> "LayoutPlan | None":
    d = {m.json: m.field.default_value() for m in FIELDS}
    read, start = {}, {"int": 0, "uuid": 0}
    for name, kind, count in layout:
        m = _BY_JSON.get(name)
        if m is None or m.names or kind != ("uuid" if _element(m) == "uuid" else "int"):
            return None
        d[name] = [MIGRATING_DIR if kind == "uuid" else 0] * count if m.field.is_array else 0
        if count:
            read[name] = ReadField(kind, start[kind], count, m.field.is_array)
        start[kind] += count
    model = partition_state(d, None).to_json()
    constant = {k: v for k, v in model.items() if k not in read and k != "topicId"}
    return LayoutPlan(read, constant, start["int"], start["uuid"])


def _load_generated() -> dict:
    """The generated code's names: those of :mod:`.partition_generated` when
    it is what the catalog and these rules give (its ``def``s are what
    runs), else those of the source made now, run in this module's name (a
    field added to the catalog since it was written: the model takes it up
    at once, and tests/unit/test_partition_model.py fails until
    ``python -m metashell.replay.partition_model`` writes it again)."""
    source = generated_source()
    try:
        current = GENERATED.read_text(encoding="utf-8") == source
    except OSError:   # no source beside the module (a zipped install)
        current = False
    if current:
        from . import partition_generated
        return vars(partition_generated)
    namespace = {"__name__": __name__, "__package__": __package__}
    exec(compile(source, f"<{__name__} generated>", "exec"), namespace)
    return namespace


_generated = _load_generated()
PartitionState = _generated["PartitionState"]
partition_state = _generated["partition_state"]
merge_change = _generated["merge_change"]
text_args = _generated.get("text_args")


def partition_from_record(d: dict, rec) -> "PartitionState":
    """A partition's state from PartitionRecord ``rec`` (its fields ``d``),
    changed at the record: what the replay's folding and the Spark
    ``partition_changes`` table each start a partition from."""
    return partition_state(d, (rec.offset, rec.timestamp))


# -- what the other views take from the model ------------------------------------------------

#: the Spark ``partitions`` table's columns after ``topic``: (column, Spark type, JSON key)
SPARK_COLUMNS: tuple[tuple[str, str, str], ...] = tuple(
    (m.column, m.spark_type, m.json)
    for m in sorted(FIELDS, key=lambda m: (SPARK_RELEASED_ORDER.index(m.name)
                                           if m.name in SPARK_RELEASED_ORDER
                                           else len(SPARK_RELEASED_ORDER))))


def spark_ddl() -> str:
    """The Spark DDL of :data:`SPARK_COLUMNS`."""
    return ", ".join(f"{column} {kind}" for column, kind, _ in SPARK_COLUMNS)


#: a :class:`PartitionState` -> its Spark column values, in :data:`SPARK_COLUMNS` order:
#: read from its attributes (what its JSON holds under those keys, without making the JSON)
spark_state_values = attrgetter(*(_BY_JSON[json].attr for _, _, json in SPARK_COLUMNS))


def _describe_change_fields() -> tuple:
    keys = {"PartitionId", "TopicId"}
    fields = {f.name: f for f in PARTITION_CHANGE_RECORD.fields if f.name not in keys}
    order = [n for n in DESCRIBE_CHANGE_RELEASED_ORDER if n in fields]
    order += [n for n in fields if n not in order]
    out = []
    for n in order:
        f = fields[n]
        m = BY_NAME.get(n)
        out.append((f.json, _sentinel(f), f.is_array, m.names if m is not None else None))
    return tuple(out)


#: what ``describe`` shows of a change: (JSON key, unchanged value, is an array, enum names)
DESCRIBE_CHANGE: tuple = _describe_change_fields()

#: PartitionRecord fields ``describe`` shows beyond its fixed head (partitionId,
#: replicas, isr, leader, its recovery state, leaderEpoch, partitionEpoch):
#: the fields the catalog gained since, as ``key value``
DESCRIBE_RECORD_HEAD = ("PartitionId", "Replicas", "Isr", "Leader", "LeaderRecoveryState",
                        "LeaderEpoch", "PartitionEpoch")
DESCRIBE_RECORD_TAIL: tuple = tuple(
    (m.json, m.field.is_array) for m in FIELDS
    if m.name not in DESCRIBE_RECORD_HEAD and m.name not in DESCRIBE_RECORD_LEAVES_OUT)


if __name__ == "__main__":
    GENERATED.write_text(generated_source(), encoding="utf-8")
    print(f"wrote {GENERATED}")
