"""``METASHELL_FAST_PATH=0`` opens every source through the general path
only, and on every input the tests have, the fast path prints the same:
trees, ``summary``, ``changes``, ``diff`` (``tests.support.fast_path``). The
inputs: every corpus file and log dir (``../shared/corpora``), the example
cluster, and each of the bench's shapes (``bench/shapes.py``) generated
small."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fast_path import assert_fast_path_agrees, fast_path
from tests.support.paths import CORPORA
from tests.support.corpora import corpus_cases
from metashell.fast.store import RecordStore
from bench import shapes   # the bench's generators


def corpus_inputs() -> list[Path]:
    files = [p for p in CORPORA.rglob("*") if p.suffix in (".log", ".checkpoint") and p.stat().st_size]
    dirs = [d for d in CORPORA.iterdir() if d.is_dir()]
    return sorted(files + dirs)


@pytest.mark.parametrize("path", corpus_cases(corpus_inputs), ids=lambda p: str(p.relative_to(CORPORA)))
def test_every_corpus_input(path):
    assert_fast_path_agrees(path)


@pytest.mark.parametrize("shape", shapes.SHAPES)
def test_every_bench_shape(tmp_path, shape):
    path = tmp_path / f"00000000000000000000{shapes.shape_suffix(shape)}"
    if shapes.shape_suffix(shape) == ".checkpoint":
        path = tmp_path / "00000000000000002000-0000000007.checkpoint"
    info = shapes.generate(shape, path, 400)
    assert_fast_path_agrees(path)
    if "until" in info:
        assert_fast_path_agrees(path, until_offset=info["until"])


def test_the_general_path_defers_nothing(tmp_path):
    path = tmp_path / "00000000000000002000-0000000007.checkpoint"
    shapes.generate("snap-configs", path, 200)
    with fast_path(False):
        batches = list(RecordStore().open(path))
    assert batches and all(type(b.records) is list for b in batches)
    assert not any(type(r) is tuple for b in batches for r in b.records)
    with fast_path(True):
        assert any(type(r) is tuple for b in RecordStore().open(path) for r in b.records)
