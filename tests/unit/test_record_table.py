"""docs/architecture.md's "Find a record type in one minute" table names,
for every record type of the catalog, every module of the package that
mentions the record's name: a new reader, shortcut or view of a record that
is not added to its row fails here, so the table stays the one place to
start from."""

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


def mentions(name: str) -> set[str]:
    """The modules whose text names ``name`` (or its plural)."""
    word = re.compile(rf"\b{name}s?\b")
    return {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if word.search(p.read_text())}


def test_every_record_type_has_one_row():
    assert sorted(table()) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_row_names_every_module_that_mentions_its_record(name):
    missing = mentions(name) - table()[name]
    assert not missing, f"{name}: add {sorted(missing)} to its row in {DOC.name}"


def test_every_module_the_table_names_exists():
    named = set().union(*table().values())
    assert sorted(m for m in named if not (PACKAGE / m).is_file()) == []
