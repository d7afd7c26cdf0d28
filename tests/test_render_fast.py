"""The fast ways of printing values and walking the tree give exactly what
the plain ways give: ``value_text`` against ``json.dumps(indent=2)``,
``json_text`` against the compact ``json.dumps``, a topic's ``tree_value``
and ``entries`` against walking it node by node."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from metashell.render import _flat_object_text, json_text, value_text, write_tree_json
from metashell.session import open_session

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cluster"

_scalars = st.one_of(st.integers(-2**63, 2**63 - 1), st.text(), st.booleans(), st.none())
_values = st.recursive(
    _scalars | st.lists(st.integers(-2**31, 2**31)) | st.lists(st.text(max_size=5)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=5),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _values, max_size=8))
def test_value_text_is_json_dumps_indent_2(value):
    plain = json.dumps(value, indent=2, ensure_ascii=False)
    assert value_text(value) == plain
    flat = _flat_object_text(value)
    assert flat is None or flat == plain


@settings(max_examples=300, deadline=None)
@given(_values)
def test_json_text_is_compact_json_dumps(value):
    assert json_text(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _walked(node):
    """The JSON tree of ``node`` made node by node, with children() and child()."""
    if not node.is_dir:
        return node.value()
    out = {}
    for name in node.children():
        child = node.child(name)
        if child is not None:
            out[name] = _walked(child)
    return out


def test_topic_tree_value_and_entries_are_the_walk():
    root = open_session(EXAMPLE).root
    topics = root.child("topics")
    for name in topics.children():
        topic = topics.child(name)
        assert topic.tree_value() == _walked(topic)
        assert [n for n, _ in topic.entries()] == topic.children()
    out = io.StringIO()
    write_tree_json(topics, out.write)
    assert json.loads(out.getvalue()) == _walked(topics)
