"""The fast ways of printing values and walking the tree give exactly what
the plain ways give: ``value_text`` against ``json.dumps(indent=2)``,
``json_text`` against the compact ``json.dumps``, a topic's bulk
``tree_json`` and ``entries`` against walking it node by node."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import EXAMPLE
from metashell.fs.compare import subtree_value as walked   # children() and child(), node by node
from metashell.fs.walk import write_tree_json
from metashell.render import _flat_object_text, json_text, value_text
from metashell.session.files import open_session


_scalars = st.one_of(st.integers(-2**63, 2**63 - 1), st.text(), st.booleans(), st.none())
_values = st.recursive(
    _scalars | st.lists(st.integers(-2**31, 2**31), max_size=20) | st.lists(st.text(max_size=5))
    | st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=5),
    max_leaves=12)


def _has_float(v) -> bool:
    if isinstance(v, dict):
        return any(map(_has_float, v.values()))
    if isinstance(v, list):
        return any(map(_has_float, v))
    return isinstance(v, float)


def _reference(v, pad=""):
    """json.dumps(indent=2), but arrays of at most 16 numbers on one line."""
    inner = pad + "  "
    if isinstance(v, dict) and v:
        return "{\n" + ",\n".join(f"{inner}{json.dumps(k, ensure_ascii=False)}: "
                                   f"{_reference(x, inner)}" for k, x in v.items()) + f"\n{pad}}}"
    if isinstance(v, list) and v:
        if len(v) <= 16 and all(type(x) in (int, float) for x in v):
            return "[" + ", ".join(json.dumps(x) for x in v) + "]"
        return "[\n" + ",\n".join(inner + _reference(x, inner) for x in v) + f"\n{pad}]"
    return json.dumps(v, ensure_ascii=False)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _values, max_size=8))
def test_value_text_is_indented_json_with_short_number_arrays_inline(value):
    """The reference text; where there are floats, orjson (when installed)
    may spell them otherwise (6.1e-05 as 0.000061): the same lines, the
    same numbers. (Each example holds up to eight trees of values, drawing
    them is nearly all of the test's time: 100 examples show as many
    values as the 300 single trees below.)"""
    expected = _reference(value)
    text = value_text(value)
    assert json.loads(text) == value
    if _has_float(value):
        assert len(text.splitlines()) == len(expected.splitlines())
    else:
        assert text == expected
    flat = _flat_object_text(value)
    assert flat is None or flat == expected


def test_value_text_of_a_partition():
    data = {"partitionId": 0, "replicas": [1, 2, 3], "isr": [], "directories": ["a", "b"],
            "leader": 1, "big": list(range(20))}
    assert value_text(data).splitlines()[:5] == [
        "{", '  "partitionId": 0,', '  "replicas": [1, 2, 3],', '  "isr": [],',
        '  "directories": [']
    assert '  "big": [\n    0,\n    1,' in value_text(data)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_json_text_is_compact_json_dumps(value):
    """The same text, but that orjson (when installed) may spell a float
    otherwise (1e-05 as 0.00001): the same number."""
    text = json_text(value)
    assert json.loads(text) == value
    if not _has_float(value):
        assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_topic_tree_json_and_entries_are_the_walk():
    root = open_session(EXAMPLE).root
    topics = root.child("topics")
    for name in topics.children():
        topic = topics.child(name)
        assert topic.bulk().tree_json() == json_text(walked(topic))
        assert [n for n, _ in topic.bulk().entries()] == topic.children()
    out = io.StringIO()
    write_tree_json(topics, out.write)
    assert json.loads(out.getvalue()) == walked(topics)


def test_warnings_alike_are_collapsed_after_three():
    from metashell.render import collapse_repeats
    lines = [f"f.log (byte {100 * i}, offset {i}): expected a batch CRC" for i in range(33)]
    lines.insert(1, "ignored x.checkpoint.part: a snapshot being written")
    out = collapse_repeats(lines)
    assert out == [lines[0], lines[1], lines[2], lines[3], "... and 30 more like it"]
    assert collapse_repeats(lines[:3]) == lines[:3]
