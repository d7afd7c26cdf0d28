"""metashell's ``/image`` against Kafka's own shell (the newest release on
Maven Central), byte for byte: ``find /image`` and ``tree /image`` (every
path, every value) on the same files, one JVM for all of them.

Inputs: every file of the shared corpus, and a few hundred random cluster
histories written by the project's writer. The only differences allowed are
the README's "Coming from Kafka's shell" list (``kafka_shell_support``
applies them to Kafka's text); a file Kafka's shell cannot load (it hangs on
a file without metadata records, or refuses a layout older than it reads)
must be one the list names too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_shell_support import differences, kafka_dumps, loaded_nothing, our_dumps
from kafka_shell_jars import require_java_and_maven

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
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
