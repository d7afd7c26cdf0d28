"""Shape-specialised decoders (kraft/shapes.py): whatever shapes a decoder has
learned, it returns exactly what the general decoder returns -- the same dict
(key order and value types included) or the same error -- for valid, truncated
and garbled bodies, in every kind of buffer."""

from __future__ import annotations

import mmap
import struct
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from metashell.errors import RecordDecodeError
from metashell.kraft import catalog, shapes
from metashell.kraft.codegen import compile_decoder
from metashell.kraft.fields import UNKNOWN_TAGS
from metashell.kraft.primitives import uuid_to_str
from metashell.kraft.schema import Message
from tests.support.catalog_checks import outcome
from tests.support.records import partition

U1 = "AQIDBAUGBwgJCgsMDQ4PEA"
U2 = "EA8ODQwLCgkIBwYFBAMCAQ"


def _all_messages():
    for m in catalog.METADATA.values():
        yield "f1", m
    for m in catalog.METADATA_2_8.values():
        yield "f0", m
    for alts in catalog.SUPERSEDED.values():
        for m in alts:
            yield f"old-{m.layout}", m
    for m in catalog.CONTROL.values():
        yield "ctl", m


def _shaped_cases():
    out = []
    for where, m in _all_messages():
        r = m.valid_range
        for v in range(r.lo, r.hi + 1):
            if shapes.shape_plan(m, v) is not None:
                out.append(pytest.param(m, v, id=f"{where}-{m.name}-v{v}"))
    return out


CASES = _shaped_cases()


def test_which_messages_have_shapes():
    names = {(p.values[0].name, p.values[0].frame, p.values[1]) for p in CASES}
    for v in (0, 1, 2):
        assert ("PartitionRecord", 1, v) in names
        assert ("PartitionChangeRecord", 1, v) in names
        assert ("BrokerRegistrationChangeRecord", 1, v) in names
    assert ("PartitionRecord", 0, 0) in names          # 2.8: not flexible, int32 counts
    assert ("PartitionChangeRecord", 0, 0) in names
    # a string in the body, or a layout that never varies: the general decoder alone
    for m, v in ((catalog.METADATA[2], 0), (catalog.METADATA[7], 0), (catalog.METADATA[9], 0)):
        assert shapes.shape_plan(m, v) is None
        assert not hasattr(m.decoder(v), "shapes")


def fresh(m: Message, version: int):
    """A decoder that has learned nothing yet (``Message.decoder`` is shared)."""
    dec = compile_decoder(m, version)
    assert dec.shapes.shapes == []
    return dec, dec.shapes.general


def same(dec, general, buf, pos=0, end=None):
    """Assert that both decoders do the same with ``buf[pos:end]``."""
    end = len(buf) if end is None else end
    got = outcome(dec, buf, pos, end)
    assert got == outcome(general, buf, pos, end)
    return got


@contextmanager
def only_shapes(dec):
    """Within, a body that no learned shape matches fails loudly, so that a
    test can tell a hit from the general decoder answering."""
    def no_miss(buf, pos, end):
        raise AssertionError("no learned shape matched")
    ns = dec.shapes.gen.ns
    saved = ns["_miss"]
    ns["_miss"] = no_miss
    try:
        yield
    finally:
        ns["_miss"] = saved


def walk(m: Message, version: int, body: bytes):
    """The layout the learner finds in ``body`` (None: no shape)."""
    return shapes._layout(shapes.shape_plan(m, version), shapes._body_values(body, 0, len(body)))


# ---------------------------------------------------------------------------
# Data generated from the schema
# ---------------------------------------------------------------------------

_RANGES = {
    "int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
    "int64": (-2**63, 2**63 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}


def _scalar(t: str):
    if t in _RANGES:
        # mostly small numbers, so that bodies of one shape repeat values too
        return st.integers(-3, 3) | st.integers(*_RANGES[t])
    return {
        "bool": st.booleans(),
        "float64": st.floats(),
        "uuid": st.sampled_from([U1, U2]) | st.binary(min_size=16, max_size=16).map(uuid_to_str),
        "string": st.text(max_size=6),
        "bytes": st.binary(max_size=6),
    }[t]


def _value(m: Message, version: int, odd: bool = True):
    """A value for every field, arrays of 0-3 elements (so that shapes recur);
    with ``odd``, sometimes arrays of 30-40 elements (too long for a tagged
    int32 array's one-byte size) and an unknown tag."""
    key = (id(m), version, odd)
    if key not in _VALUES:
        _VALUES[key] = _make_value(m, version, odd)
    return _VALUES[key]


_VALUES: dict = {}


def _make_value(m: Message, version: int, odd: bool):
    parts = {}
    for f in m.fields:
        if version not in f.versions_range:
            parts[f.json] = st.just(f.default_value())
            continue
        if f.is_array:
            elem = _scalar(f.element_type)
            s = st.lists(elem, max_size=3)
            if odd:   # one element repeated: drawing 40 would be slow
                s = s | st.tuples(elem, st.integers(30, 40)).map(lambda p: [p[0]] * p[1])
        else:
            s = _scalar(f.type)
        if version in f.nullable_range:
            s = st.none() | s
        if f.tag is not None and m.is_flexible(version):
            s = st.just(f.default_value()) | s
        parts[f.json] = s
    value = st.fixed_dictionaries(parts)
    if odd and m.is_flexible(version):
        # a tag this version does not know: kept raw
        unknown = st.just([[100, b"\x01\x02"]])
        value = st.one_of(value, st.tuples(value, unknown).map(lambda p: {**p[0], UNKNOWN_TAGS: p[1]}))
    return value


def _shapeable(value: dict) -> bool:
    """Sure to be a shape: no unknown tag, and every array short enough for
    one-byte counts and tagged sizes."""
    return UNKNOWN_TAGS not in value and all(
        len(v) <= 3 for v in value.values() if isinstance(v, list))


_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------
# Differential tests
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("m,version", CASES)
@_SETTINGS
@given(data=st.data())
def test_same_as_general_decoder_while_learning_and_after(m, version, data):
    values = data.draw(st.lists(_value(m, version), min_size=1, max_size=5))
    bodies = [bytes(m.encode(version, v)) for v in values]
    order = data.draw(st.permutations(list(range(len(bodies))) * 2))
    dec, general = fresh(m, version)
    for i in order:
        got = same(dec, general, bodies[i])
        assert got.startswith("({")            # encoder output always decodes
    # every body sure to be a shape was seen twice: learned, and a hit now
    learned = [b for b, v in zip(bodies, values) if _shapeable(v)]
    with only_shapes(dec):
        for b in learned:
            same(dec, general, b)
    # a result is fresh every time: changing one changes no later one
    for b in bodies:
        first = dec(b, 0, len(b))[0]
        for v in first.values():
            if isinstance(v, list):
                v.append("changed")
        same(dec, general, b)


@pytest.mark.parametrize("m,version", CASES)
@_SETTINGS
@given(data=st.data())
def test_garbled_bodies_fail_or_decode_as_in_the_general_decoder(m, version, data):
    value = data.draw(_value(m, version, odd=False))
    raw = bytes(m.encode(version, value))
    dec, general = fresh(m, version)
    for _ in range(2):
        same(dec, general, raw)
    assert dec.shapes.shapes
    # a few bytes changed: counts, tags and sizes among them, often to a
    # neighbouring value (one more or one fewer element, another tag)
    body = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(body) - 1))
        body[i] = data.draw(st.sampled_from([(body[i] + 1) % 256, (body[i] - 1) % 256, 0, 0x80, 0xff])
                            | st.integers(0, 255))
    same(dec, general, bytes(body))
    # garbled, then learned too: still the same as the general decoder
    for _ in range(2):
        same(dec, general, bytes(body))
    same(dec, general, raw)


@pytest.mark.parametrize("m,version", CASES)
@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_truncated_bodies_and_odd_ends(m, version, data):
    value = data.draw(_value(m, version, odd=False))
    raw = bytes(m.encode(version, value))
    dec, general = fresh(m, version)
    for _ in range(2):
        same(dec, general, raw)
    for cut in range(len(raw)):
        same(dec, general, raw[:cut])
        # end inside a larger buffer: the bytes after it are not the body's
        same(dec, general, raw, 0, cut)
    # trailing bytes, and an end beyond the buffer's last byte
    same(dec, general, raw + b"\x00")
    same(dec, general, raw + b"\x00", 0, len(raw) + 1)
    same(dec, general, raw[:-1], 0, len(raw))
    same(dec, general, raw, 1, len(raw) + 1)


# ---------------------------------------------------------------------------
# Hand-made cases
# ---------------------------------------------------------------------------

P = catalog.METADATA[3]
PC = catalog.METADATA[5]


def partition_value(version=2, **kw) -> bytes:
    """A PartitionRecord's value (no frame) as the catalog's encoder writes
    it: partition 5 of ``U1``, replicas and ISR 1-3, leader 1, epochs 4 and
    6, each replica on ``U2`` (from version 1), unless ``kw`` says otherwise."""
    fields = dict(isr=[1, 2, 3], leader=1, leaderEpoch=4, partitionEpoch=6,
                  **({"directories": [U2] * 3} if version >= 1 else {}))
    fields.update(kw)
    out = partition(U1, 5, fields.pop("replicas", (1, 2, 3)), version=version, **fields)
    return bytes(P.encode(version, dict(P.defaults(version), **out.data)))


def test_shapes_of_the_same_size_never_answer_for_each_other():
    a = partition_value(isr=[1, 2, 3], removingReplicas=[])
    b = partition_value(isr=[1, 2], removingReplicas=[3])
    c = partition_value(isr=[1], removingReplicas=[3], addingReplicas=[2])
    assert len(a) == len(b) == len(c)
    dec, general = fresh(P, 2)
    for body in (a, b, c) * 2:
        same(dec, general, body)
    assert len(dec.shapes.shapes) == 3
    with only_shapes(dec):
        for body in (a, b, c, c, b, a, b):
            same(dec, general, body)
    assert dec(b, 0, len(b))[0]["isr"] == [1, 2]
    assert dec(b, 0, len(b))[0]["removingReplicas"] == [3]


def test_one_sighting_teaches_nothing_two_teach_a_shape():
    dec, general = fresh(P, 2)
    body = partition_value()
    same(dec, general, body)
    assert dec.shapes.shapes == []
    same(dec, general, body)
    assert dec.shapes.shapes == [(4, 4, 1, 1, 4, 0)]
    assert "# shape (4, 4, 1, 1, 4, 0)" in dec.__source__


def test_every_kind_of_buffer_and_position():
    dec, general = fresh(P, 2)
    body = partition_value()
    for _ in range(2):
        same(dec, general, body)
    framed = b"\x01\x03\x02" + body + b"\xee" * 4
    anon = mmap.mmap(-1, len(framed))
    anon.write(framed)
    expected = repr((general(body, 0, len(body))[0], 3 + len(body)))
    with only_shapes(dec):
        for buf in (framed, bytearray(framed), memoryview(framed), anon):
            assert same(dec, general, buf, 3, 3 + len(body)) == expected
    anon.close()


def test_non_canonical_varints_and_explicit_defaults_go_to_the_general_decoder():
    dec, general = fresh(P, 0)
    body = partition_value(0)
    for _ in range(2):
        same(dec, general, body)
    # Replicas count 4 as a two-byte varint (0x84 0x00): same values, one byte longer
    longer = body[:20] + b"\x84\x00" + body[21:]
    same(dec, general, longer)
    assert dec(longer, 0, len(longer)) == (general(body, 0, len(body))[0], len(longer))
    # LeaderRecoveryState 0 written out (tag 0, size 1, value 0): a shape of its own
    explicit = body[:-1] + b"\x01\x00\x01\x00"
    for _ in range(3):
        same(dec, general, explicit)
    assert len(dec.shapes.shapes) == 2


def test_the_2_8_layout_counts_are_int32_and_null_is_minus_one():
    m = catalog.METADATA_2_8[3]
    dec, general = fresh(m, 0)
    value = dict(m.defaults(0), partitionId=0, topicId=U1, replicas=[1], isr=[1],
                 removingReplicas=None, addingReplicas=[], leader=1)
    body = bytes(m.encode(0, value))
    for _ in range(2):
        same(dec, general, body)
    assert dec.shapes.shapes == [(1, 1, -1, 0)]
    with only_shapes(dec):
        assert dec(body, 0, len(body)) == (value, len(body))
    # -2 is null to the general decoder too: a shape of its own
    other = body[:36] + struct.pack(">i", -2) + body[40:]
    for _ in range(2):
        same(dec, general, other)
    assert dec.shapes.shapes == [(1, 1, -1, 0), (1, 1, -2, 0)]
    with only_shapes(dec):
        assert dec(other, 0, len(other)) == (value, len(body))


def test_learning_stops_when_the_set_is_full():
    dec, general = fresh(P, 1)
    bodies = [partition_value(1, replicas=list(range(n)), directories=[U1] * n) for n in range(1, 12)]
    for body in bodies + bodies:
        same(dec, general, body)
    assert len(dec.shapes.shapes) == shapes._SHAPES
    assert dec.shapes.gen.ns["_miss"] is general      # a miss costs the general decoder alone
    for body in bodies:
        same(dec, general, body)
    with only_shapes(dec):
        for body in bodies[:shapes._SHAPES]:
            same(dec, general, body)


def test_learning_stops_after_a_budget_of_unmatched_bodies(monkeypatch):
    monkeypatch.setattr(shapes, "_LEARN_WALKS", 5)
    dec, general = fresh(P, 2)
    odd = bytes(P.encode(2, dict(P.defaults(2), **{UNKNOWN_TAGS: [[100, b"x"]]})))
    for _ in range(5):
        same(dec, general, odd)
    assert dec.shapes.shapes == [] and dec.shapes.gen.ns["_miss"] is general


def test_message_decoder_keeps_its_identity_while_learning():
    """The reader keeps the function ``Message.decoder`` returned."""
    dec = PC.decoder(1)
    value = dict(PC.defaults(1), partitionId=1, topicId=U1, leader=3, isr=[3, 1])
    body = bytes(PC.encode(1, value))
    for _ in range(3):
        assert PC.decode(1, body) == (value, len(body))
    assert PC.decoder(1) is dec


def test_a_repeated_tag_counts_with_its_last_value():
    head = bytes.fromhex("00000003") + bytes(range(16))
    # Leader (tag 1) twice, then Isr (tag 0) twice with different lengths
    body = head + bytes.fromhex("04" "0104 00000007" "0104 00000009" "0005 0200000001" "0009 03000000020000000a")
    dec, general = fresh(PC, 0)
    for _ in range(2):
        same(dec, general, body)
    assert dec.shapes.shapes
    with only_shapes(dec):
        data, _ = dec(body, 0, len(body))
    assert (data["leader"], data["isr"]) == (9, [2, 10])


def test_a_shape_is_only_what_the_general_decoder_accepts():
    """The learner walks only bodies the general decoder accepted; the walk
    itself refuses the ones it would not, so that a shape always stands for
    a valid body."""
    null_replicas = partition_value()[:20] + b"\x00" + partition_value()[33:]     # Replicas null: not nullable
    head = bytes.fromhex("00000003") + bytes(16)
    long_leader = head + bytes.fromhex("01" "0105 0000000700")           # int32 Leader in 5 bytes
    for m, body in ((P, null_replicas), (PC, long_leader)):
        with pytest.raises(RecordDecodeError):
            m.decoder(2).shapes.general(body, 0, len(body))
        assert walk(m, 2, body) is None


def test_a_shape_holds_one_byte_varints_only():
    """Two-byte tagged counts and sizes are refused even where reading their
    first byte alone would happen to walk the body to its end."""
    head = bytes.fromhex("00000003") + bytes(16)
    assert walk(PC, 0, head + bytes.fromhex("01" "00" "05" "0200000001")) is not None
    # Isr (tag 0) with size varint 81 21 (4225); its first byte alone, 129,
    # is the size of 21 read as a count (32 elements) and the 128 bytes left
    size_129 = head + bytes.fromhex("01" "00" "81" "21") + bytes(128)
    assert walk(PC, 0, size_129) is None
    # tagged count byte 0x80 (the start of a longer varint), then 128
    # LeaderRecoveryState fields (tag 5, size 1): read alone, 128 would fit
    many = head + bytes.fromhex("80") + bytes.fromhex("050100") * 128
    assert walk(PC, 0, many) is None
    assert walk(PC, 0, head + bytes.fromhex("7f") + bytes.fromhex("050100") * 127) is not None


def test_long_arrays_are_left_to_the_general_decoder():
    for m, version in ((P, 2), (catalog.METADATA_2_8[3], 0)):
        value = dict(m.defaults(version), topicId=U1)
        for n, learned in ((shapes._SHAPE_ELEMENTS, 1), (shapes._SHAPE_ELEMENTS + 1, 0)):
            body = bytes(m.encode(version, dict(value, replicas=list(range(n)))))
            dec, general = fresh(m, version)
            for _ in range(2):
                same(dec, general, body)
            assert len(dec.shapes.shapes) == learned
