"""docs/architecture.md's "Find a record type in one minute" table names,
for every record type of the catalog, every module of the package that
reads it: a new reader, shortcut or view of a record that is not added to
its row fails here, so the table stays the one place to start from.

A module reads a record when its text names it (``PartitionChangeRecord``,
or its plural), names its snake_case stem when that is two words or more
(``partition_change``, the Spark table ``partition_changes``, the constant
``PARTITION_CHANGE``: one word, ``topic`` or ``config``, would name
everything), or compares an apiKey with the record's number (``api ==
5``, ``api_key in (3, 5)``, ``_API = 5``, ``_APIS = (3, 5)``, ``METADATA[5]``).
Both partition records make the partition model's state, so a module that
names the model is in both their rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metashell.kraft import catalog

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "metashell"
DOC = REPO / "docs" / "architecture.md"
SECTION = "## Find a record type in one minute"

NAMES = sorted({m.name for m in vars(catalog).values() if isinstance(m, catalog.Message)})
SOURCES = {str(p.relative_to(PACKAGE)): p.read_text() for p in PACKAGE.rglob("*.py")}

# an apiKey compared with numbers: the numbers are the group
API_KEY_NUMBERS = (re.compile(r"\bapi(?:_key)?\s*==\s*(\d+)"),
                   re.compile(r"\bapi(?:_key)?\s+in\s+\(([\d,\s]+)\)"),
                   re.compile(r"\bAPI_KEY\]\s*==\s*(\d+)"),
                   re.compile(r"\b\w*_APIS?\s*=\s*(\d+|\([\d,\s]+\))"),
                   re.compile(r"\bMETADATA(?:_2_8)?\[(\d+)\]"))
PARTITION_MODEL = re.compile(r"\b(?:partition_model|partition_generated|PartitionState|merge_change)\b")
PARTITION_RECORDS = ("PartitionRecord", "PartitionChangeRecord")
API_KEYS = {m.name: key for key, m in catalog.METADATA.items()}


def table() -> dict[str, set[str]]:
    """Record name -> the modules (paths under ``metashell/``) its row names."""
    text = DOC.read_text()
    assert SECTION in text
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` ", line)
        if m:
            assert m.group(1) not in rows, f"two rows for {m.group(1)}"
            rows[m.group(1)] = set(re.findall(r"`([\w/]+\.py)`", line))
    return rows


def snake_stem(name: str) -> str:
    """``PartitionChangeRecord`` -> ``partition_change``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return snake.removesuffix("_record").removesuffix("_message")


def api_keys_compared(text: str) -> set[int]:
    return {int(n) for pattern in API_KEY_NUMBERS for m in pattern.finditer(text)
            for n in re.findall(r"\d+", m.group(1))}


def mentions(name: str) -> set[str]:
    """The modules that read record ``name`` (see the module's docstring)."""
    words = [rf"{name}s?"]
    stem = snake_stem(name)
    if "_" in stem:   # the constant not quoted: "DELEGATION_TOKEN" is also an ACL resource
        words += [rf"{stem}s?", rf"(?<![\"']){stem.upper()}(?:_2_8)?"]
    word = re.compile(rf"\b(?:{'|'.join(words)})\b")
    key = API_KEYS.get(name)   # None for a control record and 2.8's QuotaRecord
    model = name in PARTITION_RECORDS
    return {path for path, text in SOURCES.items()
            if word.search(text) or key in api_keys_compared(text)
            or (model and PARTITION_MODEL.search(text))}


def test_every_record_type_has_one_row():
    assert sorted(table()) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_row_names_every_module_that_mentions_its_record(name):
    missing = mentions(name) - table()[name]
    assert not missing, f"{name}: add {sorted(missing)} to its row in {DOC.name}"


def test_every_module_the_table_names_exists():
    named = set().union(*table().values())
    assert sorted(m for m in named if not (PACKAGE / m).is_file()) == []


def test_each_way_of_reading_a_record_is_seen():
    """The rules above find what they are for (so a pattern that stops
    matching fails here, not quietly)."""
    assert "spark/source.py" in mentions("PartitionChangeRecord")        # the stem, as a table
    assert "kraft/secrets.py" in mentions("ConfigRecord")                # _CONFIG_API = 4
    assert "spark/history.py" in mentions("PartitionChangeRecord")      # _PARTITION_APIS = (3, 5)
    assert "replay/kept.py" in mentions("AccessControlEntryRecord")      # api == 18
    assert "spark/history.py" in mentions("RemoveTopicRecord")           # api == 9
    assert "spark/partition_columns.py" in mentions("PartitionChangeRecord")   # the model
    assert "fs/tree.py" not in mentions("ConfigRecord")
