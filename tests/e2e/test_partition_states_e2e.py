"""The command line: partition states with the min ISR's source, the
options that give it, and a file that is not Kafka's."""

from __future__ import annotations

import json
import os
import subprocess

from tests.support.paths import EXAMPLE, REPO
from tests.support.replay import Log
from tests.support.records import broker, partition, topic, uid

BIN = REPO / "bin" / "kafka-metadata-shell"


def shell(*args):
    return subprocess.run([str(BIN), *map(str, args)], env=dict(os.environ, NO_COLOR="1"),
                          capture_output=True, text=True, timeout=120)


def no_min_isr_config(tmp_path):
    """Topic t: 0 with 3 in sync, 1 with 2, 2 with 1; no min.insync.replicas anywhere."""
    t = uid(1)
    log = Log()
    log.add(broker(1), broker(2), broker(3), topic("t", t))
    log.add(partition(t, 0), partition(t, 1, isr=[1, 2]), partition(t, 2, isr=[1]))
    return log.write(tmp_path)


def test_an_assumed_min_isr_is_said_once_and_can_be_given(tmp_path):
    path = no_min_isr_config(tmp_path)
    p = shell("-s", path, "partitions", "--at-min-isr")
    assert p.returncode == 0
    assert p.stdout.splitlines() == ["Topic: t\tPartition: 2\tLeader: 1\tReplicas: 1,2,3\tIsr: 1"
                                     "\tMinIsr: 1 (assumed)"]
    assert [line for line in p.stderr.splitlines() if "min.insync.replicas" in line] == [
        "kafka-metadata-shell: warning: min.insync.replicas assumed 1 (Kafka's default) for 1 "
        "topic: no topic, broker or cluster-default config in the metadata (a broker's "
        "server.properties is not in it); give it with --min-isr N or --broker-config FILE"]
    p = shell("-s", path, "-o", "json", "partitions", "--under-min-isr", "--min-isr", "2")
    assert p.returncode == 0 and "assumed" not in p.stderr
    assert [(r["partitionId"], r["minIsr"], r["minIsrSource"]) for r in json.loads(p.stdout)] == [
        (2, 2, "--min-isr")]
    props = tmp_path / "server.properties"
    props.write_text("# a broker\nbroker.id=1\nmin.insync.replicas = 3\n")
    p = shell("-s", path, "-o", "json", "summary", "--broker-config", props)
    assert p.returncode == 0 and "assumed" not in p.stderr
    got = json.loads(p.stdout)
    assert got["underMinIsrPartitions"] == 2
    assert got["minIsr"] == {"value": 3, "source": "--broker-config", "topicsWithOwn": 0,
                             "brokersWithOwn": [], "topicsAssumed": 0}
    props.write_text("min.insync.replicas=three\n")
    p = shell("-s", path, "summary", "--broker-config", props)
    assert p.returncode == 1
    assert p.stderr.strip().endswith(f"{props}: line 1: min.insync.replicas must be a whole "
                                     f"number of at least 1, found 'three'")


def test_the_example_names_the_source_of_each_min_isr():
    p = shell("-s", EXAMPLE, "--until-offset", "201", "-o", "json", "partitions")
    assert p.returncode == 0
    sources = {(r["topicName"], r["minIsrSource"]) for r in json.loads(p.stdout)}
    assert sources and all(s in ("topic", "cluster default") or s.startswith("broker ")
                           for _, s in sources)
    p = shell("-s", EXAMPLE, "--until-offset", "201", "partitions", "/topics/orders/3",
              "--under-replicated", "--reassigning")
    assert p.stdout.startswith("Topic: orders\tPartition: 3\t")   # reassigning, not under-replicated


def test_a_text_file_is_not_a_kafka_file(tmp_path):
    path = tmp_path / "x.log"
    path.write_text("hello, this is not a metadata log\n" * 20)
    p = shell("-s", path, "summary")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr == (f'kafka-metadata-shell: {path}: not a Kafka log segment or snapshot (byte '
                        f'16, a record batch\'s magic, is 111, not 2; it starts with text "hello, '
                        f'this is not a met...")\n')   # byte 16: the o of not
