"""Every real Kafka file of the shared corpus decodes, counts match its README,
and re-encoding gives back the same bytes.

The corpus (``../shared/corpora`` next to the repository) is not part of the
project; these tests skip when it is absent. Its README is the source of
truth: the per-file table (bytes, records, offsets, metadata.version and
records by type) is parsed here at test time.

One row needs reading with care: ``kafka-trunk-prerelease-2023`` was written
by an unreleased 2023 trunk build whose PartitionRecord v1 has the ELR
tagged fields (tags 1 and 2) where every release's v1 has the
``Directories`` array. Its README row (24 records, offsets 0-23) describes
the records before the first of those: the file holds 94 records (0-93),
6 of them such PartitionRecords (offsets 24-28 and 42). Those must come out
``undecodable`` with their offset, raw bytes and a reason, and everything
else must decode.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.support.paths import CORPORA
from tests.support.corpora import needs_corpora
from metashell.kraft import catalog
from metashell.loader.reader import read_file
from metashell.kraft.writer import encode_batch

README = CORPORA / "README.md"

pytestmark = needs_corpora

PRERELEASE = "kafka-trunk-prerelease-2023/00000000000000000000.log"
# The odd PartitionRecord v1 records of the prerelease file (read from the file).
PRERELEASE_ODD_OFFSETS = [24, 25, 26, 27, 28, 42]
# Whole-file counts of the prerelease file (the README row covers offsets 0-23 only).
PRERELEASE_ALL = {
    "NoOp": 37, "PartitionChange": 24, "BrokerRegistrationChange": 13, "Partition": 6,
    "RegisterBroker": 3, "Config": 3, "Topic": 2, "LeaderChangeMessage": 1, "BeginTransaction": 1,
    "FeatureLevel": 1, "ZkMigrationState": 1, "EndTransaction": 1, "RegisterController": 1,
}


def _short(name: str) -> str:
    """The README's type names drop the ``Record`` suffix (``PartitionChange``)."""
    return name[:-len("Record")] if name.endswith("Record") else name


def _readme_rows() -> dict[str, dict]:
    """The README's per-file table: relative path -> parsed row."""
    if not README.is_file():
        return {}
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Per file"):]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(2).split("|")]
        size, records, offsets, mv, _topics, _brokers, types = cells[:7]
        counts = {}
        for part in filter(None, (p.strip() for p in types.split(","))):
            name, n = part.rsplit(" ", 1)
            counts[name] = int(n)
        first = last = None
        if offsets != "-":
            first, last = (int(x) for x in offsets.split("-"))
        rows[m.group(1)] = {
            "size": int(size), "records": int(records), "first": first, "last": last,
            "mv": None if mv == "-" else int(mv.split()[0]), "types": counts,
        }
    return rows


ROWS = _readme_rows()
FILES = sorted(ROWS)


def _records(path: Path):
    return [rec for batch in read_file(path) for rec in batch.records]


def test_readme_table_parsed_and_lists_every_file():
    assert len(ROWS) >= 20, "the README per-file table could not be parsed"
    on_disk = sorted(str(p.relative_to(CORPORA)) for p in CORPORA.rglob("*")
                     if p.is_file() and (p.suffix in (".log", ".checkpoint")))
    assert on_disk == FILES, "every segment/snapshot of the corpus is in the README table"


@pytest.mark.parametrize("rel", FILES)
def test_decodes_with_readme_counts(rel):
    path = CORPORA / rel
    row = ROWS[rel]
    assert path.stat().st_size == row["size"]
    reader = read_file(path)              # CRC-32C of every batch verified (the default)
    recs = [rec for batch in reader for rec in batch.records]
    assert reader.summary.end_reason == "end" and not reader.summary.problems

    if rel == PRERELEASE:
        # the README row describes the records before the first odd one
        prefix = [r for r in recs if r.offset <= row["last"]]
        assert all(r.kind != "undecodable" for r in prefix)
        counted, expected_total = prefix, row["records"]
    else:
        assert [r for r in recs if r.kind == "undecodable"] == []
        counted, expected_total = recs, row["records"]

    assert len(counted) == expected_total
    assert dict(Counter(_short(r.name) for r in counted)) == row["types"]
    offsets = [r.offset for r in counted]
    if row["first"] is None:
        assert offsets == []
    else:
        assert offsets[0] == row["first"] and offsets[-1] == row["last"]
        assert offsets == list(range(row["first"], row["last"] + 1))
    if row["mv"] is not None:
        levels = [r.data["featureLevel"] for r in counted
                  if r.name == "FeatureLevelRecord" and r.data["name"] == "metadata.version"]
        assert levels and levels[-1] == row["mv"]
    for r in counted:
        assert r.data is not None
        assert r.kind == ("control" if r.name in {m.name for m in catalog.CONTROL.values()} else "metadata")


def test_empty_log_decodes_to_nothing():
    path = CORPORA / "empty-log/00000000000000000000.log"
    reader = read_file(path)
    assert list(reader) == []
    assert reader.summary.end_reason == "end" and reader.summary.size == 0


def test_prerelease_odd_partition_records_are_undecodable_and_the_rest_decodes():
    path = CORPORA / PRERELEASE
    recs = _records(path)
    assert len(recs) == 94 and [r.offset for r in recs] == list(range(94))
    assert dict(Counter(_short(r.name) for r in recs)) == PRERELEASE_ALL

    odd = [r for r in recs if r.kind == "undecodable"]
    assert [r.offset for r in odd] == PRERELEASE_ODD_OFFSETS
    for r in odd:
        assert (r.name, r.api_key, r.version, r.data) == ("PartitionRecord", 3, 1, None)
        assert r.raw[:3] == b"\x01\x03\x01"          # frame 1, apiKey 3, version 1
        assert r.error and "\n" not in r.error and "PartitionRecord" in r.error
        assert r.position >= 0
        # why they are odd: the body is v0's fields plus ELR tags 1 and 2, no Directories
        body, _ = catalog.METADATA[3].decode(0, r.raw, 3)
        assert [t for t, _ in body["_unknownTaggedFields"]] == [1, 2]
    # every other PartitionRecord-free record decodes, including the later PartitionChanges
    assert all(r.data is not None for r in recs if r.kind != "undecodable")
    assert sum(r.name == "PartitionChangeRecord" for r in recs) == 24


@pytest.mark.parametrize("rel", FILES)
def test_reencoding_is_byte_exact(rel):
    """Re-encoding what was read gives the file back, byte for byte. Undecodable
    records keep their raw value bytes, so the prerelease file round-trips too."""
    path = CORPORA / rel
    data = path.read_bytes()
    assert b"".join(encode_batch(b) for b in read_file(path)) == data


@pytest.mark.parametrize("rel", FILES)
def test_lazy_reading_matches_eager(rel):
    path = CORPORA / rel
    eager = _records(path)
    lazy = [rec for batch in read_file(path, lazy=True) for rec in batch.records]
    assert [(r.offset, r.name) for r in lazy] == [(r.offset, r.name) for r in eager]
    # a lazy record learns that its body is odd only when it is decoded
    assert [r.data for r in lazy] == [r.data for r in eager]
    assert [(r.offset, r.name, r.kind, r.error) for r in lazy] == \
        [(r.offset, r.name, r.kind, r.error) for r in eager]
