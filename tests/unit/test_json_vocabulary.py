"""One name per field in every command's ``-o json``: each key is a field
name of Kafka's record schemas (camelCase, as Kafka's JSON and the tree
write them) or one of the project's own keys listed in the README's "JSON
field names" table, so that a script's ``jq`` reads the same field under
the same name whatever the command. Run on the bundled example cluster:
every command with ``-o json``, and ``cat`` of every file of the tree."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from metashell.commands import COMMANDS, Context, run_words
from metashell.kraft import catalog
from metashell.session.files import open_session

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cluster"
SECTION = "## JSON field names"

#: keys whose values map names of data to values (their keys are data, not fields):
#: feature names, record type names, voter ids, top-level directories (diff --stat)
DATA_MAPS = {"features", "byType", "voters"}
#: keys whose values are the tree's own values, checked file by file through cat
TREE_VALUES = {"old", "new", "value"}


def kafka_names() -> set[str]:
    """Every field name of the record schemas, as Kafka's JSON writes it."""
    names: set[str] = set()

    def walk(fields):
        for f in fields:
            names.add(f.name[0].lower() + f.name[1:])
            walk(f.fields)
    for message in (*catalog.METADATA.values(), *catalog.CONTROL.values()):
        walk(message.fields)
    return names


def readme_keys() -> set[str]:
    """The keys of the README's table of the project's own JSON keys."""
    text = (REPO / "README.md").read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end >= 0 else None]
    return set(re.findall(r"^\| `([A-Za-z]+)` \|", section, re.M))


VOCABULARY = kafka_names() | readme_keys()


@pytest.fixture(scope="module")
def session():
    return open_session(EXAMPLE)


def run_json(session, *words) -> list:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output="json")
    status = run_words(ctx, list(words))
    assert status in (0, 1), (words, err.getvalue())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def strange_keys(value, where: str, found: dict) -> dict:
    """``found``: each key outside the vocabulary -> where it was seen."""
    if isinstance(value, list):
        for item in value:
            strange_keys(item, where + "[]", found)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in VOCABULARY:
                found.setdefault(key, where)
            if key in DATA_MAPS and isinstance(item, dict):
                for name, inner in item.items():
                    strange_keys(inner, f"{where}.{key}.{name}", found)
            elif key == "fields":      # diff: the changed fields, each {old, new}
                for name, change in item.items():
                    if name not in VOCABULARY:
                        found.setdefault(name, where + ".fields")
                    strange_keys({k: None for k in change}, where + ".fields." + name, found)
            elif key not in TREE_VALUES:
                strange_keys(item, f"{where}.{key}", found)
    return found


#: every command with -o json, and what of its output is fields (not the tree's names)
RUNS = {
    "summary": [("summary",)],
    "brokers": [("brokers",)],
    "partitions": [("partitions",), ("partitions", "--reassigning")],
    "log": [("log",), ("log", "--batches"), ("log", "--snapshots", "--to-offset", "5")],
    "changes": [("changes", "/brokers/1"), ("changes", "/topics/orders", "/acls/*")],
    "diff": [("diff", "--from-offset", "100"), ("diff", "--from-offset", "100", "--stat")],
    "ls": [("ls", "-l", "/brokers"), ("ls", "-l", "/brokers", "/topics")],
    "cat": [("cat", "--with-path", "/brokers/1/registration", "/topics/orders/0/data")],
}
#: commands whose JSON holds no field names (names of nodes or commands, paths, text), or
#: only the tree's (quorum: /metadataQuorum/live, -C only)
NO_FIELDS = {"cd", "exit", "find", "help", "history", "man", "pwd", "quorum", "tree", "watch"}


def test_every_command_is_checked():
    assert set(COMMANDS) == set(RUNS) | NO_FIELDS


@pytest.mark.parametrize("command", sorted(RUNS))
def test_every_key_of_a_command_is_in_the_vocabulary(session, command):
    for words in RUNS[command]:
        found: dict = {}
        documents = run_json(session, *words)
        assert documents, words
        for doc in documents:
            if "--stat" in words or (words[0] in ("ls", "changes") and isinstance(doc, dict)):
                doc = list(doc.values())   # directory or path -> what is said of it
            strange_keys(doc, " ".join(words), found)
        assert found == {}, words


def test_every_file_of_the_tree_is_in_the_vocabulary(session):
    """What tree and diff print of a file is what cat prints of it. /image
    is Kafka's own shell's tree, printed as Kafka's shell prints it."""
    [files] = run_json(session, "find", "/", "-type", "f")
    found: dict = {}
    for path in files:
        if not path.startswith("/image/"):
            for doc in run_json(session, "cat", path):
                if path.rsplit("/", 1)[-1] in DATA_MAPS:   # /metadataQuorum/voters
                    doc = list(doc.values())
                strange_keys(doc, path, found)
    assert found == {}


@pytest.mark.parametrize("synonym", ["partition", "elr", "broker", "topic", "leaders"])
def test_no_synonym_of_a_kafka_name_is_in_the_vocabulary(synonym):
    assert synonym not in VOCABULARY
