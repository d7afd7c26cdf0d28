"""metashell's ``/image`` against Kafka's own shell (the newest release on
Maven Central), byte for byte: ``find /image`` and ``tree /image`` (every
path, every value) on the same files, one JVM for all of them.

Inputs: every file of the shared corpus, a few hundred random cluster
histories written by the project's writer, and every snapshot and segment
under ``METASHELL_KAFKA_FILES`` (a directory, such as the metadata log dirs
real-Kafka clusters left behind). The only differences allowed are
the README's "Coming from Kafka's shell" list (``image_shell``
applies them to Kafka's text); a file Kafka's shell cannot load (it hangs on
a file without metadata records, or refuses a layout older than it reads)
must be one the list names too.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_histories import history
from test_replay_support import Log, write_snapshot

from .image_shell import differences, kafka_dumps, loaded_nothing, our_dumps
from .jars import require_java_and_maven

CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "corpora"
# files Kafka's 4.3 shell may not load: it waits forever on a file without
# metadata records or whose only data batch is at offset 0, and shows the
# empty image of a log without metadata.version (3.2: 4.x refuses it) and of
# a later segment alone; on a one-batch file it does either, or loads it
KAFKA_MAY_NOT_LOAD = {"empty-log/00000000000000000000.log",
                      "kafka-3.2-three-brokers/00000000000000000000.log",
                      "kafka-3.7-logdir/bootstrap.checkpoint",
                      "kafka-3.7-segment-nonzero-base/00000000000000099329.log"}


def corpus_files() -> list[Path]:
    """Every snapshot and segment of the corpus, each on its own (Kafka's shell
    takes one file)."""
    if not CORPORA.is_dir():
        return []
    return sorted(p for p in CORPORA.rglob("*")
                  if p.is_file() and p.suffix in (".log", ".checkpoint"))


@pytest.fixture(scope="module")
def corpus_dumps(tmp_path_factory):
    require_java_and_maven()
    files = corpus_files()
    if not files:
        pytest.skip(f"shared corpus not found at {CORPORA} (not shipped with the project)")
    return files, kafka_dumps(files, tmp_path_factory.mktemp("kafka"))


def test_every_corpus_file_shows_as_in_kafkas_shell(corpus_dumps):
    files, dumps = corpus_dumps
    problems, nodes, compared = [], 0, 0
    for path, kafka in zip(files, dumps):
        rel = str(path.relative_to(CORPORA))
        if rel in KAFKA_MAY_NOT_LOAD and (kafka.status == "hang" or loaded_nothing(kafka)):
            continue
        ours = our_dumps(path)
        problems += differences(rel, kafka, ours, snapshot=path.suffix == ".checkpoint")
        nodes += ours.find.count("\n")
        compared += 1
    assert not problems, "\n".join(problems)
    assert compared >= len(files) - len(KAFKA_MAY_NOT_LOAD)
    print(f"\n{compared} of {len(files)} corpus files, {nodes} /image nodes compared")


HISTORIES = 300


@pytest.fixture(scope="module")
def history_dumps(tmp_path_factory):
    """A few hundred random histories (hypothesis picks each one's seed and
    length), every other one written as a snapshot, all shown by Kafka's
    shell in one JVM."""
    require_java_and_maven()
    root = tmp_path_factory.mktemp("histories")
    files = []

    @settings(max_examples=HISTORIES, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(seed=st.integers(0, 2**64), steps=st.integers(1, 30))
    def write(seed, steps):
        batches = history(random.Random(seed), steps)
        directory = root / str(len(files))
        if len(files) % 2:
            records = [r for batch in batches for r in batch]
            files.append(write_snapshot(directory, len(records) + 7, records, epoch=3))
        else:
            log = Log(epoch=2)
            for batch in batches:
                log.add(*batch)
            files.append(log.write(directory))

    write()
    return files, kafka_dumps(files, tmp_path_factory.mktemp("kafka"))


def test_random_histories_show_as_in_kafkas_shell(history_dumps):
    files, dumps = history_dumps
    problems, nodes = [], 0
    for path, kafka in zip(files, dumps):
        ours = our_dumps(path)
        problems += differences(str(path), kafka, ours, snapshot=path.suffix == ".checkpoint")
        nodes += ours.find.count("\n")
    assert not problems, f"{len(problems)} of {len(files)} differ:\n" + "\n".join(problems[:20])
    print(f"\n{len(files)} random histories, {nodes} /image nodes compared")


SHAPE_PARTITIONS = 2_000
BENCH = Path(__file__).resolve().parents[2] / "bench"


def shape_files() -> list[Path]:
    """The bench's generated shapes (bench/shapes.py) at a size CI affords,
    cached where the bench caches them: each snapshot and segment."""
    sys.path.insert(0, str(BENCH))
    try:
        import shapes
    finally:
        sys.path.remove(str(BENCH))
    files = []
    for shape in shapes.SHAPES:
        path, _ = shapes.shape_path(shape, SHAPE_PARTITIONS)
        # a log dir's segment changes partitions of its snapshot: alone, Kafka's
        # shell cannot apply it, so only its snapshot is compared
        files += sorted(path.rglob("*.checkpoint")) if path.is_dir() else [path]
    return files


def given_files() -> list[Path]:
    """Every snapshot and segment under ``METASHELL_KAFKA_FILES`` (unset: none)."""
    root = os.environ.get("METASHELL_KAFKA_FILES")
    if not root:
        return []
    return sorted(p for p in Path(root).rglob("*")
                  if p.is_file() and p.suffix in (".log", ".checkpoint"))


@pytest.mark.parametrize("source", ["shapes", "given"])
def test_generated_shapes_and_given_files_show_as_in_kafkas_shell(source, tmp_path):
    require_java_and_maven()
    files = shape_files() if source == "shapes" else given_files()
    if not files:
        pytest.skip("METASHELL_KAFKA_FILES names no directory of KRaft metadata files")
    problems, nodes, compared = [], 0, 0
    for path, kafka in zip(files, kafka_dumps(files, tmp_path / "kafka")):
        if kafka.status == "hang" or loaded_nothing(kafka):
            # a segment after a snapshot, a bootstrap file, or a file of few batches
            # on which Kafka's load races kept losing: see the corpus test
            continue
        ours = our_dumps(path)
        problems += differences(str(path), kafka, ours, snapshot=path.suffix == ".checkpoint")
        nodes += ours.find.count("\n")
        compared += 1
    assert not problems, "\n".join(problems[:20])
    assert source == "given" or compared >= len(files) - 2
    print(f"\n{compared} of {len(files)} {source} files, {nodes} /image nodes compared")
