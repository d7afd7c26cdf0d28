"""Rendering helpers: Kafka's ls column layout (ported LsCommandHandlerTest
cases), tables, values, tree JSON streaming, summary."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from metashell.fs.node import Node, from_json
from metashell.fs.walk import tree_text_lines, write_tree_json
from metashell.render import (ColumnSchema, column_lines, column_schema, json_text,
                              scalar_text, summary_lines, table_lines, value_text)

ENTRIES = ["alphabet", "beta", "gamma", "theta", "zeta"]


# --------------------------------------------- LsCommandHandlerTest.calculateColumnSchema

def test_schema_without_terminal_is_one_column():
    assert column_schema(None, ["abc", "def", "ghi"]) == ColumnSchema(1, 3, [0])


def test_schema_width_zero_is_one_column():
    assert column_schema(0, ["abc", "def"]) == ColumnSchema(1, 2, [0])


def test_schema_width_80():
    schema = column_schema(80, ["a", "abcdef", "beta"])
    assert (schema.num_columns, schema.entries_per_column, schema.widths) == (3, 1, [3, 8, 6])


def test_schema_width_18():
    schema = column_schema(18, ENTRIES)
    assert (schema.num_columns, schema.entries_per_column, schema.widths) == (2, 3, [10, 7])


def test_schema_skips_layouts_with_an_empty_last_column():
    # 5 entries in 4 columns of 2 leaves the 4th empty: 3 columns is the answer
    schema = column_schema(200, ["a", "b", "c", "d", "e"])
    assert schema.num_columns == 5
    schema = column_schema(16, ["aa", "bb", "cc", "dd", "ee"])
    assert schema.num_columns == 3 and schema.widths == [4, 4, 4]


def _kafka_schema(width, entries):
    """A direct port of Kafka's per-entry loop, to check the fast version."""
    if width is None:
        return (1, len(entries))
    max_columns = width // 4
    if max_columns <= 1:
        return (1, len(entries))
    schemas = [ColumnSchema(c, (len(entries) + c - 1) // c) for c in range(1, max_columns + 1)]
    for i, entry in enumerate(entries):
        for schema in schemas:
            schema.process(i, entry)
    for schema in reversed(schemas[1:]):
        if schema.widths[-1] != 0 and schema.total_width() <= width:
            return (schema.num_columns, schema.entries_per_column, schema.widths)
    return (1, len(entries))


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=120),
       st.lists(st.text(alphabet="abcdefghij.-_0123", max_size=25), max_size=60))
def test_schema_matches_kafkas_loop(width, entries):
    expected = _kafka_schema(width, entries)
    schema = column_schema(width, entries)
    if len(expected) == 2:
        assert (schema.num_columns, schema.entries_per_column) == expected
    else:
        assert (schema.num_columns, schema.entries_per_column, schema.widths) == expected


def test_schema_of_a_huge_directory():
    names = [f"partition-{i}" for i in range(1_000_000)]
    schema = column_schema(200, names)
    assert schema.num_columns == 11 and sum(schema.widths) == 197


# --------------------------------------------- LsCommandHandlerTest.printEntries

def test_print_entries_width_18():
    assert column_lines(ENTRIES, 18) == ["alphabet  theta", "beta      zeta", "gamma     "]


def test_print_entries_pads_every_column_but_the_last():
    # Kafka's test expects the trailing "foobarbaz  " (padding of a non-last column)
    assert column_lines(["x", "foobarbaz", "y"], 16) == ["x          y", "foobarbaz  "]


def test_print_entries_one_per_line_without_terminal():
    assert column_lines(ENTRIES, None) == ENTRIES
    assert column_lines([], 80) == []


def test_print_entries_decorate_keeps_alignment():
    out = column_lines(["ab", "c"], 80, lambda i, t: f"<{t}>")
    assert out == ["<ab>  <c>"]


# --------------------------------------------- other helpers

def test_table_lines():
    assert table_lines([["d", "3", "10", "x"], ["-", "12", "-", "yy"]], right=(1, 2)) == [
        "d   3  10  x", "-  12   -  yy"]
    assert table_lines([]) == []


def test_value_and_scalar_text():
    assert value_text({"a": [1, None]}) == '{\n  "a": [\n    1,\n    null\n  ]\n}'
    assert value_text([]) == "[]"
    assert value_text("é") == "é"
    assert scalar_text(True) == "true" and scalar_text(False) == "false"
    assert scalar_text(None) == "null"
    assert scalar_text(1000.0) == "1000.0" and scalar_text(1e20) == "100000000000000000000.0"
    assert scalar_text(0.25) == "0.25" and scalar_text(float("inf")) == "inf"
    assert json_text({"a": [1, "b"]}) == '{"a":[1,"b"]}'
    assert json_text(b"\x01") == '"01"'


def test_tree_json_streams_in_chunks():
    tree = from_json("", {"d": {f"k{i:05d}": "v" * 10 for i in range(20000)}, "e": {}})
    chunks = []
    write_tree_json(tree, chunks.append)
    assert len(chunks) > 1
    doc = json.loads("".join(chunks))
    assert len(doc["d"]) == 20000 and doc["e"] == {}


def test_tree_text_skips_unresolvable_children():
    class Liar(Node):
        is_dir = True

        def children(self):
            return ["a", "ghost"]

        def child(self, name):
            return from_json("a", 1) if name == "a" else None

    assert list(tree_text_lines(Liar("liar"))) == ["a:", "  1"]


def test_summary_lines():
    assert summary_lines({"a": 1, "long-key": [1, 2], "empty": {}, "none": None,
                          "objs": [{"x": 1}], "g": {"x": True}}) == [
        "a:        1",
        "long-key: 1, 2",
        "empty:    -",
        "none:     -",
        'objs:     [{"x":1}]',
        "g:",
        "  x: true",
    ]
