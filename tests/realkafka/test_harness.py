"""The harness itself: a combined single-node cluster starts,
serves the admin API, stops cleanly, and leaves a metadata log dir that
metashell reads."""

from __future__ import annotations

import json

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from .admin import unfenced_broker_ids
from .cluster import KafkaCluster
from .jars import selected_versions
from .shell import shell

# The workload clusters (3 controllers, 2 brokers) exercise the harness on
# every release; the combined mode is checked on the oldest and the newest.
COMBINED_ON = sorted({selected_versions()[0], selected_versions()[-1]})


@pytest.mark.parametrize("kafka_version", COMBINED_ON)
def test_combined_node_serves_and_leaves_a_log(kafka_version, kafka_workdir):
    with KafkaCluster(kafka_version, controllers=1, combined=True,
                      workdir=kafka_workdir / f"combined-{kafka_version}") as cluster:
        assert cluster.controller_quorum.startswith("1@127.0.0.1:")
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        try:
            assert unfenced_broker_ids(admin) == {1}
            admin.create_topics([NewTopic("harness", 3, 1)])
        finally:
            admin.close()
    assert not any(n.running() for n in cluster.nodes.values())
    metadata_dir = cluster.metadata_dirs[1]
    assert list((metadata_dir / "__cluster_metadata-0").glob("*.log"))
    status, out, err = shell(metadata_dir, "ls", "/topics")
    assert status == 0, err
    assert "harness" in json.loads(out)
    assert err == ""
