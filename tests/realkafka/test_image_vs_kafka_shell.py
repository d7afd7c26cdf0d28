"""metashell's ``/image`` against Kafka's own shell (the newest release on
Maven Central), byte for byte: ``find /image`` and ``tree /image`` (every
path, every value) on the same files, one JVM for all of them.

Inputs: every file of the shared corpus, a few hundred random cluster
histories written by the project's writer, the bench's generated shapes, and
for each release the workload cluster (``kafka_run``, shared with
test_fidelity.py: one cluster run per release) wrote: every node's snapshots
and segments, each alone, and its whole metadata log dir (Kafka's shell takes
one file: its segments joined into one, without the control batches it may end
in, beside metashell on the dir itself).
The only differences allowed are
the README's "Coming from Kafka's shell" list (``image_shell``
applies them to Kafka's text); a file Kafka's shell cannot load (it hangs on
a file without metadata records, or refuses a layout older than it reads)
must be one the list names too.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cluster_histories import history
from tests.support.corpora import require_corpora
from tests.support.paths import CORPORA
from tests.support.replay import Log, write_snapshot

from .image_shell import (NEWEST, NEWEST_LEVELS, differences, kafka_dumps, loaded_nothing,
                          joined_log, our_dumps, provenance_offset)
from .jars import require_java_and_maven

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
    return sorted(p for p in require_corpora().rglob("*")
                  if p.is_file() and p.suffix in (".log", ".checkpoint"))


@pytest.fixture(scope="module")
def corpus_dumps(tmp_path_factory):
    require_java_and_maven()
    files = corpus_files()
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


def shape_files() -> list[Path]:
    """The bench's generated shapes (bench/shapes.py) at a size CI affords,
    cached where the bench caches them: each snapshot and segment."""
    from bench import shapes
    files = []
    for shape in shapes.SHAPES:
        path, _ = shapes.shape_path(shape, SHAPE_PARTITIONS)
        # a log dir's segment changes partitions of its snapshot: alone, Kafka's
        # shell cannot apply it, so only its snapshot is compared
        files += sorted(path.rglob("*.checkpoint")) if path.is_dir() else [path]
    return files


def test_generated_shapes_show_as_in_kafkas_shell(tmp_path):
    require_java_and_maven()
    files = shape_files()
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
    assert compared >= len(files) - 2
    print(f"\n{compared} of {len(files)} shape files, {nodes} /image nodes compared")


# -- the files real Kafka's workload clusters wrote -------------------------------------------------

@dataclass
class Input:
    """One comparison: ``kafka`` is the file Kafka's shell reads, ``ours`` what
    metashell loads (the same file, or the metadata dir whose segments
    ``kafka`` joins)."""

    name: str
    kafka: Path
    ours: Path
    snapshot: bool
    newest_snapshot_end: "int | None" = None   # a metadata dir's: its newest snapshot's end offset


def without_trailing_control_batches(path: Path) -> None:
    """Cut ``path`` (a log) after its last batch of metadata records. Kafka's
    loader never sees a control batch, so on a log that ends in two or more
    (leader changes as a quorum shuts down) its shell waits forever for an
    offset it never reaches; /image shows nothing of them (its provenance is
    the last batch of metadata records, in both shells)."""
    data, pos, end = path.read_bytes(), 0, 0
    while pos + 23 <= len(data):
        # baseOffset (8), batchLength (4), partitionLeaderEpoch (4), magic (1), crc (4), attributes (2)
        length = int.from_bytes(data[pos + 8:pos + 12], "big")
        control = data[pos + 22] & 0x20
        pos += 12 + length
        if not control:
            end = pos
    path.write_bytes(data[:end])


def what_loads(path: Path) -> "tuple[int | None, list[str]]":
    """The metadata.version feature level ``path`` ends with (None: unset),
    and the records metashell could not apply (every partition folded)."""
    from metashell.fs.node import lookup
    from metashell.session.files import open_session

    session = open_session(path)
    try:
        level = lookup(session.root, ["features", "metadata.version"])
        session.summary()   # folds every partition: a change that cannot apply is found
        return (None if level is None else level.value()), [str(p) for p in session.engine.problems]
    finally:
        session.close()


def run_inputs(kafka_run, into: Path) -> "tuple[list[Input], list[str]]":
    """Every node's snapshots and segments, each alone, and its metadata dir
    whole, that Kafka's newest shell can load; and the names of the others
    with the reason. Kafka's shell reads copies (a shell of some releases
    takes and deletes the log dir's ``.lock``; the other modules read these
    dirs too)."""
    inputs, left_out = [], []
    for node_id, metadata_dir in sorted(kafka_run.metadata_dirs.items()):
        copies = into / f"node-{node_id}"
        copies.mkdir(parents=True)
        given = [(f"node {node_id} {p.name}", p, p) for p in
                 kafka_run.snapshots[node_id] + kafka_run.segments[node_id]]
        joined = joined_log(kafka_run.segments[node_id], into / f"node-{node_id}-log")
        without_trailing_control_batches(joined)
        given.append((f"node {node_id} metadata dir", joined, Path(metadata_dir)))
        ends = [int(p.name[:20]) for p in kafka_run.snapshots[node_id]]
        for name, source, ours in given:
            level, unapplied = what_loads(ours)
            if unapplied:
                # a later segment alone: changes to what the log before it made.
                # Kafka's shell drops a batch whole when one of its records fails
                # (the records before it too); metashell applies the others and
                # warns (README, "How it differs from Kafka's shell")
                left_out.append(f"{name}: {len(unapplied)} records cannot be applied without "
                                f"the log before it (first: {unapplied[0]})")
                continue
            if level is None:
                # a later segment alone, or the formatter's snapshot of a dynamic quorum
                left_out.append(f"{name}: no metadata.version (Kafka 4.x shows no image)")
                continue
            if level not in NEWEST_LEVELS:
                left_out.append(f"{name}: metadata.version level {level}, which Kafka "
                                f"{NEWEST}'s shell does not read")
                continue
            kafka = source
            if source == ours:
                kafka = copies / source.name
                shutil.copyfile(source, kafka)
            inputs.append(Input(name, kafka, ours, source.suffix == ".checkpoint",
                                max(ends, default=None) if source is joined else None))
    return inputs, left_out


def test_every_file_of_a_kafka_cluster_shows_as_in_kafkas_shell(kafka_run, tmp_path):
    """Kafka's newest shell (it reads every release's files) and metashell on
    every snapshot and segment the release's workload cluster wrote, and on
    each node's whole metadata dir: all that Kafka's shell can load (see
    ``run_inputs``) must show the same."""
    require_java_and_maven()
    inputs, left_out = run_inputs(kafka_run, tmp_path / "files")
    dumps = kafka_dumps([i.kafka for i in inputs], tmp_path / "kafka")
    problems, nodes = [], 0
    for given, kafka in zip(inputs, dumps):
        if kafka.status == "ok" and loaded_nothing(kafka):
            problems.append(f"{given.name}: Kafka's shell showed the empty image")
            continue
        ours = our_dumps(given.ours)
        from_snapshot = (given.newest_snapshot_end is not None
                         and provenance_offset(ours.tree) == given.newest_snapshot_end - 1)
        problems += differences(f"Kafka {kafka_run.version} {given.name}", kafka, ours,
                                snapshot=given.snapshot, snapshot_time=from_snapshot)
        nodes += ours.find.count("\n")
    assert not problems, f"{len(problems)} of {len(inputs)} differ:\n" + "\n".join(problems[:20])
    assert inputs, "Kafka's shell can load none of the files:\n" + "\n".join(left_out)
    dirs = sum(i.name.endswith("metadata dir") for i in inputs)
    print(f"\nKafka {kafka_run.version}: {len(inputs)} files and dirs ({dirs} whole dirs), "
          f"{nodes} /image nodes compared; {len(left_out)} left out:\n  " + "\n  ".join(left_out))
