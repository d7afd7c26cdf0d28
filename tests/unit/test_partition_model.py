"""The partition model follows the catalog (``metashell/replay/partition_model.py``).

Every field of every catalog version of PartitionRecord is a
``PartitionState`` attribute, a key of the partition's JSON and a Spark
column, with the record's value; every field of every version of
PartitionChangeRecord changes the partition's field of the same name, and
``describe`` names it; what is left out is listed, with a reason. A field
added to the catalog is taken up without another edit (the last test adds
one)."""

from __future__ import annotations

import copy
import importlib.util
import sys
from types import SimpleNamespace

import pytest

from metashell.kraft import catalog
from metashell.kraft.catalog import METADATA, METADATA_2_8
from metashell.kraft.fields import Field, Versions
from metashell.kraft.schema import Message
from metashell.replay import partition_model as pm
from metashell.queries.describe import describe
from metashell.replay.partition_model import (BY_NAME, FIELDS, SPARK_COLUMNS, SPECIAL,
                                              PartitionState, merge_change, partition_state,
                                              spark_state_values)
from metashell.spark.schemas import ddl
from tests.support.records import uid

KEYS = ("PartitionId", "TopicId")


class Reads(dict):
    """A decoded record that notes which of its fields were read."""

    def __init__(self, data: dict):
        super().__init__(data)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)


def versions(message: Message) -> list[tuple[Message, int]]:
    return [(message, v) for v in range(64) if v in message.valid_range]


RECORD_LAYOUTS = versions(METADATA[3]) + versions(METADATA_2_8[3])
CHANGE_LAYOUTS = versions(METADATA[5]) + versions(METADATA_2_8[5])


def in_version(message: Message, version: int) -> list[Field]:
    return [f for f in message.fields if version in Versions(f.versions)]


def sample(f: Field, i: int):
    """A value of ``f``'s type that is no field's default (three replicas'
    worth for an array)."""
    t = f.type
    if t == "int8":
        return 1
    if t in ("int16", "int32", "int64"):
        return 100 + i
    if t == "uuid":
        return uid(50 + i)
    if t == "string":
        return f"s{i}"
    if t == "bool":
        return True
    if t == "[]int32":
        return [i, i + 1, i + 2]
    if t == "[]uuid":
        return [uid(60 + i), uid(61 + i), uid(62 + i)]
    raise AssertionError(f"no sample for {f.name}: {t}; add one here")


def decoded(message: Message, version: int, values: dict) -> dict:
    d, _ = message.decode(version, message.encode(version, values))
    return d


def record_values(message: Message, version: int) -> dict:
    return {f.json: sample(f, i) for i, f in enumerate(in_version(message, version))}


def start() -> PartitionState:
    m = METADATA[3]
    newest = max(v for v in range(64) if v in m.valid_range)
    return partition_state(decoded(m, newest, record_values(m, newest)), (0, 0))


@pytest.mark.parametrize("message,version", RECORD_LAYOUTS,
                         ids=[f"{m.name}-frame{m.frame}-v{v}" for m, v in RECORD_LAYOUTS])
def test_every_partition_record_field_is_an_attribute_a_json_key_and_a_column(message, version):
    values = record_values(message, version)
    state = partition_state(decoded(message, version, values), (7, 8))
    data = state.to_json()
    columns = dict(zip((json for _, _, json in SPARK_COLUMNS), spark_state_values(state)))
    assert list(data) == [m.json for m in FIELDS]   # the catalog's order
    for f in in_version(message, version):
        m = BY_NAME[f.name]
        assert getattr(state, m.attr) == values[f.json], f.name
        assert data[f.json] == values[f.json], f.name
        assert columns[f.json] == values[f.json], f.name
    assert state.change == (7, 8)


def test_every_catalog_field_has_a_spark_column_of_its_type():
    names = [column for column, _, _ in SPARK_COLUMNS]
    assert len(set(names)) == len(names) == len(FIELDS)
    assert {json for _, _, json in SPARK_COLUMNS} == {m.json for m in FIELDS}
    assert ddl("partitions") == ("cluster STRING, cluster_id STRING, topic STRING, "
                                 + ", ".join(f"{c} {t}" for c, t, _ in SPARK_COLUMNS)
                                 + ", last_change_offset BIGINT, last_change_time TIMESTAMP")
    # the released columns keep their place
    assert names[:13] == ["topic_id", "partition", "leader", "leader_epoch", "partition_epoch",
                          "replicas", "isr", "removing_replicas", "adding_replicas",
                          "directories", "elr", "last_known_elr", "leader_recovery_state"]


@pytest.mark.parametrize("message,version", CHANGE_LAYOUTS,
                         ids=[f"{m.name}-frame{m.frame}-v{v}" for m, v in CHANGE_LAYOUTS])
def test_every_change_field_changes_its_partition_field_and_is_described(message, version):
    for i, f in enumerate(in_version(message, version)):
        if f.name in KEYS:
            continue
        assert f.name in BY_NAME, f"PartitionChangeRecord.{f.name}: no PartitionRecord field"
        value = sample(f, 20 + i)
        d = decoded(message, version, {"partitionId": 0, "topicId": uid(7), f.json: value})
        before = start()
        after = copy.deepcopy(before)
        assert merge_change(after, d) is None, f.name
        expected = before.to_json()
        expected[f.json] = value
        expected["partitionEpoch"] += 1
        if f.name == "Leader":
            expected["leaderEpoch"] += 1
        assert after.to_json() == expected, f.name
        text = describe(SimpleNamespace(name=message.name, data=d, error=None))
        assert f" {f.json} " in text, (f.name, text)


def test_a_change_of_nothing_bumps_the_epoch_only():
    for message, version in CHANGE_LAYOUTS:
        d = decoded(message, version, {"partitionId": 0, "topicId": uid(7)})
        before = start()
        after = copy.deepcopy(before)
        assert merge_change(after, d) is None
        assert after.partition_epoch == before.partition_epoch + 1
        after.partition_epoch -= 1
        assert after == before
        assert describe(SimpleNamespace(name=message.name, data=d, error=None)) == \
            "partition 0: epoch bump only"


def test_describe_of_a_record_reads_every_field_it_does_not_leave_out():
    m = METADATA[3]
    newest = max(v for v in range(64) if v in m.valid_range)
    seen = Reads(decoded(m, newest, record_values(m, newest)))
    describe(SimpleNamespace(name="PartitionRecord", data=seen, error=None))
    every = {f.json for f in m.fields}
    left_out = {BY_NAME[name].json for name in pm.DESCRIBE_RECORD_LEAVES_OUT}
    assert every - left_out <= seen.read
    assert all(why for why in pm.DESCRIBE_RECORD_LEAVES_OUT.values())


def test_the_exceptions_name_catalog_fields_and_say_why():
    names = {f.name for f in METADATA[3].fields} | {f.name for f in METADATA[5].fields}
    assert set(SPECIAL) <= names
    assert all(s.why for s in SPECIAL.values())
    assert set(pm.SPARK_RELEASED_ORDER) <= names
    assert set(pm.DESCRIBE_CHANGE_RELEASED_ORDER) <= names
    assert set(pm.DESCRIBE_RECORD_LEAVES_OUT) <= names


def test_text_names_the_codes_kafka_names():
    state = start()
    state.leader_recovery_state = 1
    assert pm.shown(state.to_json())["leaderRecoveryState"] == "RECOVERING"
    assert state.to_json()["leaderRecoveryState"] == 1
    state.leader_recovery_state = 7   # a code no release has: shown as it is
    assert pm.shown(state.to_json())["leaderRecoveryState"] == 7


def _model_over(monkeypatch, record: Message, change: Message):
    """The partition model made afresh over a catalog holding these two records."""
    monkeypatch.setitem(catalog.METADATA, 3, record)
    monkeypatch.setitem(catalog.METADATA, 5, change)
    name = "metashell.replay._partition_model_probe"
    spec = importlib.util.spec_from_file_location(name, pm.__file__)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_a_field_added_to_the_catalog_is_taken_up(monkeypatch):
    """What adding a field costs: the catalog entry. A new tagged int32 in
    both records (a version 3 of each) is an attribute, a JSON key, a Spark
    column; a change sets it; ``describe`` shows it."""
    record = METADATA[3]
    change = METADATA[5]
    new = dict(name="HighWatermarkHint", type="int32", versions="3+", tagged="3+", default=-1)
    record = Message(record.name, 3, "0-3", list(record.fields) + [Field(**new, tag=3)])
    change = Message(change.name, 5, "0-3", list(change.fields) + [Field(**new, tag=9)])
    probe = _model_over(monkeypatch, record, change)

    d = decoded(record, 3, {**record_values(METADATA[3], 2), "highWatermarkHint": 42})
    state = probe.partition_state(d, (0, 0))
    assert state.high_watermark_hint == 42
    assert state.to_json()["highWatermarkHint"] == 42
    assert probe.SPARK_COLUMNS[-1] == ("high_watermark_hint", "INT", "highWatermarkHint")
    assert ("highWatermarkHint", False) in probe.DESCRIBE_RECORD_TAIL
    older = probe.partition_state(decoded(record, 2, record_values(METADATA[3], 2)), (0, 0))
    assert older.high_watermark_hint == -1   # the catalog's default

    unchanged = decoded(change, 3, {"partitionId": 0, "topicId": uid(7)})
    assert probe.merge_change(state, unchanged) is None and state.high_watermark_hint == 42
    assert probe.merge_change(state, decoded(change, 3, {"partitionId": 0, "topicId": uid(7),
                                                          "highWatermarkHint": 5})) is None
    assert state.high_watermark_hint == 5
    assert ("highWatermarkHint", -1, False, None) in probe.DESCRIBE_CHANGE


def test_a_change_field_the_model_cannot_place_fails_at_import(monkeypatch):
    change = METADATA[5]
    change = Message(change.name, 5, "0-3", list(change.fields) + [
        Field("NoSuchPartitionField", "int32", "3+", tag=9, tagged="3+", default=-1)])
    with pytest.raises(TypeError, match="NoSuchPartitionField"):
        _model_over(monkeypatch, METADATA[3], change)


def test_describe_names_the_tags_the_catalog_does_not_know():
    from metashell.kraft.fields import UNKNOWN_TAGS

    for name, api in (("PartitionRecord", 3), ("PartitionChangeRecord", 5)):
        message = METADATA[api]
        values = record_values(message, 2) if api == 3 else {"partitionId": 0, "topicId": uid(7)}
        d = decoded(message, 2, {**values, UNKNOWN_TAGS: [[90, b"\x01"], [91, b""]]})
        text = describe(SimpleNamespace(name=name, data=d, error=None))
        assert text.endswith("unknown tags [90,91]"), text


def _text_as_value_text(state, nl: str = "\n") -> str:
    from metashell.render import value_text
    return value_text(pm.shown(state.to_json())).replace("\n", nl)


@pytest.mark.parametrize("nl", ["\n", "\n      "])
def test_a_partitions_text_is_value_texts(nl):
    """``data_text`` (cat, text tree) writes what value_text writes of the
    shown value, at any indentation: short and long arrays, codes by name
    and unnamed, directories and none; None where it must not guess."""
    state = start()
    assert pm.data_text(state, nl) == _text_as_value_text(state, nl)
    state.replicas = list(range(1, 17))           # on one line
    state.isr = list(range(-1, 40))               # one per line
    state.directories = []
    state.leader_recovery_state = 7               # a code no release has: a number
    state.elr = [2147483647]
    assert pm.data_text(state, nl) == _text_as_value_text(state, nl)
    state.leader_recovery_state = 1
    state.directories = [uid(1), uid(2)]
    assert pm.data_text(state, nl) == _text_as_value_text(state, nl)
    for field, odd in (("replicas", None), ("leader", None), ("leader", "1"),
                       ("leader_recovery_state", None)):
        bad = copy.copy(state)
        setattr(bad, field, odd)
        assert pm.data_text(bad, nl) is None, field
    state.unknown_tags = [[9, b"\x01"]]
    assert pm.data_text(state, nl) is None


def test_a_partitions_text_of_a_field_added_to_the_catalog(monkeypatch):
    """A new int field is written too; a field of a type the format does
    not write (a string) leaves every partition to value_text."""
    record, change = METADATA[3], METADATA[5]
    new = dict(name="HighWatermarkHint", type="int32", versions="3+", tagged="3+", default=-1)
    probe = _model_over(monkeypatch, Message(record.name, 3, "0-3", list(record.fields) + [Field(**new, tag=3)]),
                        Message(change.name, 5, "0-3", list(change.fields) + [Field(**new, tag=9)]))
    from metashell.render import value_text
    state = probe.partition_state(decoded(probe.PARTITION_RECORD, 3, {
        **record_values(METADATA[3], 2), "highWatermarkHint": 42}), (0, 0))
    assert probe.data_text(state) == value_text(probe.shown(state.to_json()))
    assert '"highWatermarkHint": 42' in probe.data_text(state)
    text = dict(name="Note", type="string", versions="3+", tagged="3+", default="")
    probe = _model_over(monkeypatch, Message(record.name, 3, "0-3", list(record.fields) + [Field(**text, tag=3)]),
                        Message(change.name, 5, "0-3", list(change.fields)))
    state = probe.partition_state(decoded(probe.PARTITION_RECORD, 3, record_values(METADATA[3], 2)), (0, 0))
    assert probe.data_text(state) is None


def test_the_generated_code_is_what_the_catalog_and_the_rules_give(tmp_path):
    """``partition_generated.py`` holds the model's code as real ``def``s to
    read, and is what runs; where it is not what the catalog gives (a field
    just added: the test above), the source made now runs, and this fails
    until ``python -m metashell.replay.partition_model`` writes it again."""
    assert pm.GENERATED.read_text(encoding="utf-8") == pm.generated_source(), (
        "run python -m metashell.replay.partition_model")
    assert merge_change.__module__ == PartitionState.__module__ == "metashell.replay.partition_generated"
    stale = tmp_path / "partition_generated.py"
    stale.write_text(pm.generated_source().replace("s.partition_epoch += 1", "pass"))
    real = pm.GENERATED
    pm.GENERATED = stale
    try:
        made_now = pm._load_generated()
    finally:
        pm.GENERATED = real
    state = made_now["partition_state"](record_values(METADATA[3], 2) | {"directories": None}, (0, 0))
    epoch = state.partition_epoch
    assert made_now["merge_change"](state, {**record_values(METADATA[5], 0), "leader": -2,
                                            "isr": None}) is None
    assert state.partition_epoch == epoch + 1 and made_now["merge_change"].__module__ == pm.__name__
