"""Each image table of the kraft-metadata source equals the shell's own
``-o json tree /`` (and ``summary``) of the same input, field by field
(:mod:`tests.support.shell_tree`): for every cluster directory and every
metadata file of the shared corpus, for the bundled example cluster, and
with ``untilOffset`` against ``--until-offset``."""

from __future__ import annotations

import pytest

from metashell.loader import inputs
from tests.support.paths import CORPORA, EXAMPLE
from tests.support.corpora import require_corpora
from tests.support.shell_tree import IMAGE, check_against_the_shell
from tests.support.spark import as_tree, by_cluster, from_tree, read_table, shell, shell_json

pytestmark = pytest.mark.usefixtures("spark")


def _inputs() -> list[str]:
    """The example cluster, every corpus folder and every metadata file in it."""
    out = [str(EXAMPLE)]
    if not CORPORA.is_dir():
        return out
    for folder in sorted(p for p in CORPORA.iterdir() if p.is_dir()):
        out.append(str(folder))
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                try:
                    inputs.classify(f)
                except Exception:
                    continue   # meta.properties, quorum-state ...
                out.append(str(f))
    return out


INPUTS = _inputs()


# -- the tests ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tables(spark):
    """Every image table of every input, read in one job per table."""
    return {t: by_cluster(read_table(spark, t, INPUTS)) for t in ("clusters",) + IMAGE}


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.replace(str(CORPORA), "corpora"))
def test_image_tables_equal_the_shells_tree(tables, path):
    status, _, err = shell(path, "tree", "/")
    (cluster,) = tables["clusters"][path]
    if status != 0:   # the shell cannot load it: neither can the source, and it says why
        assert [p["text"] for p in cluster["problems"]] == [err.split(": ", 1)[1].strip()]
        assert all(path not in tables[t] for t in IMAGE)
        return
    check_against_the_shell(tables, path, path)


UNTIL = [(str(EXAMPLE), 120), (str(EXAMPLE), 300), (str(EXAMPLE), 450),
         (str(CORPORA / "kafka-4.2-logdir"), 20000), (str(CORPORA / "kafka-4.1-logdir"), 3000),
         (str(CORPORA / "kafka-3.6-log-transactions"), 9000)]


@pytest.mark.parametrize("path,offset", UNTIL)
def test_until_offset_equals_the_shells(spark, path, offset):
    if path != str(EXAMPLE):
        require_corpora()
    tree = shell_json(path, "tree", "/", until_offset=offset)
    for table in ("partitions", "brokers", "configs", "quorum", "topics", "features"):
        rows = read_table(spark, table, path, untilOffset=offset)
        assert as_tree(table, rows) == from_tree(table, tree), table
    (row,) = read_table(spark, "clusters", path, untilOffset=offset)
    assert row["last_offset"] <= offset


def test_show_secrets_as_the_shell(spark):
    tree = shell_json(EXAMPLE, "tree", "/", show_secrets=True)
    rows = read_table(spark, "configs", str(EXAMPLE), showSecrets="true")
    assert as_tree("configs", rows) == from_tree("configs", tree)
    redacted = read_table(spark, "configs", str(EXAMPLE))
    assert any(r["value"] == "[redacted]" for r in redacted)
    assert not any(r["value"] == "[redacted]" for r in rows)
