"""Every node's bulk answers (``Node.bulk()``, :class:`metashell.fs.bulk.Bulk`)
equal what walking the node gives, byte for byte: the contract that lets
whole-tree commands take them instead of the walk. The walk here is the node
protocol only (``children()``, ``child(name)``, ``value()``,
``shown_value()``, ``text()``: ``tests/support/walked.py``), never a bulk
answer."""

from __future__ import annotations

import pytest

from metashell.fs.compare import subtree_value   # children() and child(), node by node
from metashell.render import json_text, value_text
from metashell.session.files import open_session
from tests.support.corpora import corpus_cases
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.walked import walked_entries, walked_names, walked_text


def file_text(leaf) -> str:
    """A file's text as ``cat`` prints it before any colour, walked."""
    text = leaf.text()
    return text if text is not None else value_text(leaf.shown_value())


def check_bulk(node) -> list:
    """Each bulk answer of ``node`` against its walk; the calls answered."""
    bulk = node.bulk()
    if bulk is None:
        return []
    answered = []
    made = bulk.entries()
    if made is not None:
        made = list(made)
        assert [n for n, _ in made] == [n for n, _ in walked_entries(node)]
        assert [subtree_value(c) for _, c in made] == [subtree_value(c) for _, c in walked_entries(node)]
        answered.append("entries")
    if not node.is_dir:
        text = bulk.shown_text()
        if text is not None:
            assert text == value_text(node.shown_value())
            answered.append("shown_text")
        return answered
    made = bulk.tree_json()
    if made is not None:
        assert made == json_text(subtree_value(node))
        answered.append("tree_json")
    for indent in (0, 4):
        made = bulk.tree_lines(indent)
        if made is not None:
            assert "\n".join(made).split("\n") == walked_text(node, indent)
            answered.append("tree_lines")
    made = bulk.subtree_names({})
    if made is not None:
        assert made == walked_names(node)
        answered.append("subtree_names")
    for name in {n for _, c in walked_entries(node) if c.is_dir for n in c.children()}:
        made = bulk.file_texts(name)
        if made is not None:
            assert list(made) == [(n, file_text(c.child(name))) for n, c in walked_entries(node)
                                  if c.is_dir and c.child(name) is not None]
            answered.append("file_texts")
    return answered


def check_tree(root) -> set:
    """:func:`check_bulk` on every node under ``root``; the calls answered."""
    answered = set()
    stack = [root]
    while stack:
        node = stack.pop()
        answered.update(check_bulk(node))
        if node.is_dir:
            stack.extend(child for _, child in walked_entries(node))
    return answered


def _inputs() -> list:
    return [EXAMPLE] + corpus_cases(lambda: sorted(p for p in CORPORA.iterdir() if p.is_dir()))


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: p.name)
def test_bulk_answers_are_the_walk(path):
    session = open_session(path)
    try:
        answered = check_tree(session.root)
    finally:
        session.close()
    if path == EXAMPLE:   # every kind of answer is checked somewhere
        assert answered == {"entries", "shown_text", "tree_json", "tree_lines", "subtree_names",
                            "file_texts"}
