"""The interpreted decoder (kraft/interpreter.py) that answers for a decoder
until it is compiled: for every record type and version, whatever body it
answers for, it answers exactly what the compiled decoder returns (dict, key
order, value types); any other body it leaves to the compiled decoder,
whose answer or error is then the one given (Message.decode, Message.interpret,
and the reader's stand-ins in records.RESOLVED)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from metashell.errors import RecordDecodeError
from metashell.kraft import catalog, interpreter
from metashell.kraft.codegen import compile_decoder
from metashell.kraft.records import RESOLVED, decode_value, encode_value
from tests.support.catalog_checks import CASE_IDS, CASE_PARAMS, outcome, record_values

_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.large_base_example])


def inline_struct(fields) -> bool:
    """Whether a struct (not an array of them) is among ``fields``, at any depth."""
    return any(f.is_struct and (not f.is_array or inline_struct(f.fields)) for f in fields)


def answers(m, version, buf, pos=0, end=None):
    """The interpreted decoder's answer (None: it leaves the body to the
    compiled one), checked against the compiled decoder's."""
    end = len(buf) if end is None else end
    if inline_struct(m.fields):   # no metadata record has one: it never interprets them
        with pytest.raises(interpreter.Unsure):
            interpreter.interpreted(m, version)
        return None
    try:
        got = interpreter.interpreted(m, version)(buf, pos, end)
    except interpreter.INTERPRETER_GIVES_UP:
        return None
    assert got[1] == end
    assert repr(got) == outcome(compile_decoder(m, version), buf, pos, end)
    return got


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
@_SETTINGS
@given(data=st.data())
def test_every_body_the_encoder_writes(m, version, data):
    value = data.draw(record_values(m.fields, version, long=data.draw(st.booleans())))
    raw = bytes(m.encode(version, value))
    if inline_struct(m.fields):
        assert m.kind == "control" and answers(m, version, raw) is None
        return
    assert answers(m, version, raw) == (value, len(raw))
    buf = memoryview(b"\xff" * 3 + raw + b"\xee" * 5)
    assert answers(m, version, buf, 3, 3 + len(raw)) == (value, 3 + len(raw))


@pytest.mark.parametrize("m,version", CASE_PARAMS, ids=CASE_IDS)
@_SETTINGS
@given(data=st.data())
def test_garbled_truncated_and_odd_ends(m, version, data):
    raw = bytes(m.encode(version, data.draw(record_values(m.fields, version))))
    body = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3)) if body else 0):
        i = data.draw(st.integers(0, len(body) - 1))
        body[i] = data.draw(st.sampled_from([(body[i] + 1) % 256, (body[i] - 1) % 256, 0, 0x80, 0xff])
                            | st.integers(0, 255))
    answers(m, version, bytes(body))
    cut = data.draw(st.integers(0, len(raw)))
    answers(m, version, raw[:cut])
    answers(m, version, raw, 0, cut)
    answers(m, version, raw + b"\x00")
    answers(m, version, raw + b"\x00", 0, len(raw) + 1)


def fresh(m):
    """``m`` with nothing compiled nor interpreted yet (catalog messages are shared)."""
    return dataclasses.replace(m, _decoders={}, _interpreters={})


def test_interprets_a_few_bodies_then_compiles():
    m = fresh(catalog.METADATA[12])   # FeatureLevelRecord
    raw = bytes(m.encode(0, {"name": "metadata.version", "featureLevel": 7}))
    for _ in range(interpreter.INTERPRETED_USES - 1):
        assert m.interpret(0, raw, 0, len(raw)) == {"name": "metadata.version", "featureLevel": 7}
    assert not m._decoders
    assert m.interpret(0, raw, 0, len(raw)) is None
    assert m.decode(0, raw) == ({"name": "metadata.version", "featureLevel": 7}, len(raw))
    assert 0 in m._decoders


def test_a_body_it_does_not_read_whole_gets_the_compiled_decoders_error():
    m = fresh(catalog.METADATA[12])
    raw = bytes(m.encode(0, {"name": "metadata.version", "featureLevel": 7}))
    assert m.interpret(0, raw + b"\x00", 0, len(raw) + 1) is None
    assert not m._decoders
    compiled = fresh(m)
    compiled.decoder(0)
    with pytest.raises(RecordDecodeError) as e:
        m.decode(0, raw[:-1])
    with pytest.raises(RecordDecodeError) as expected:
        compiled.decode(0, raw[:-1])
    assert str(e.value) == str(expected.value)
    assert str(e.value).startswith("FeatureLevelRecord v0: ")
    assert 0 in m._decoders
    # not exact: the compiled decoder at once
    m = fresh(catalog.METADATA[12])
    assert m.decode(0, raw + b"\x00", exact=False) == ({"name": "metadata.version", "featureLevel": 7},
                                                      len(raw))
    assert 0 in m._decoders


def test_the_readers_stand_in_interprets_until_the_message_compiles(monkeypatch):
    m = fresh(catalog.METADATA[12])
    monkeypatch.setitem(catalog.METADATA, 12, m)
    key = (1, 12, 0)
    saved = dict.pop(RESOLVED, key, None)   # RESOLVED.get looks up (and resolves)
    try:
        value = encode_value(m, 0, {"name": "kraft.version", "featureLevel": 1})
        stand_in = RESOLVED.get(key)[1]
        assert stand_in(value, 3, len(value)) == ({"name": "kraft.version", "featureLevel": 1},
                                                  len(value))
        assert RESOLVED.get(key)[1] is stand_in and not m._decoders
        assert decode_value(value).data == {"name": "kraft.version", "featureLevel": 1}
        for _ in range(interpreter.INTERPRETED_USES):
            stand_in(value, 3, len(value))
        assert RESOLVED.get(key)[1] is m._decoders[0]
    finally:
        dict.pop(RESOLVED, key, None)
        if saved is not None:
            RESOLVED[key] = saved


PC = catalog.METADATA[5]   # PartitionChangeRecord
IDS = "000000010102030405060708090a0b0c0d0e0f10"   # partitionId 1, topicId


@pytest.mark.parametrize("tags,answered", [
    ("01" "01" "04" "00000003", True),                          # leader 3
    ("02" "01" "04" "00000003" "01" "04" "00000005", True),     # repeated: the last counts
    ("02" "01" "04" "00000003" "64" "02" "0102", True),         # an unknown tag, kept raw
    ("01" "01" "05" "0000000300", False),                       # a size its value does not use
    ("01" "01" "03" "000000", False),                           # a size too small for it
    ("01" "01" "09" "00000003", False),                         # a size past the end
    ("01" "00" "02" "0203", False),                             # an array past its size
])
def test_tagged_fields(tags, answered):
    body = bytes.fromhex(IDS + tags)
    got = answers(PC, 0, body)
    assert (got is not None) == answered
    m = fresh(PC)
    assert (m.interpret(0, body, 0, len(body)) is not None) == answered
