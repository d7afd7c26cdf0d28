"""What Kafka's admin API reports, through kafka-python, as plain data.

kafka-python 3.0.12's ``describe_cluster`` fails on DescribeCluster v0
(Kafka 3.3-3.6) by popping an ``endpoint_type`` key only v1+ has, so the
brokers are asked for here with the same request, tolerating its absence.
"""

from __future__ import annotations

from kafka import KafkaAdminClient
from kafka.protocol.admin.cluster import DescribeClusterRequest
import kafka.errors as Errors


def admin_client(bootstrap_servers: str, timeout_ms: int = 10000) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap_servers,
                            request_timeout_ms=timeout_ms)


async def _describe_cluster(admin: KafkaAdminClient) -> dict:
    request = DescribeClusterRequest(include_cluster_authorized_operations=False,
                                     include_fenced_brokers=True)
    response = await admin._manager.send(request)
    error = Errors.for_code(response.error_code)
    if error is not Errors.NoError:
        raise error(response.error_message)
    return response.to_dict()


def describe_cluster(admin: KafkaAdminClient) -> dict:
    """DescribeCluster's answer: ``cluster_id``, ``controller_id``, ``brokers``
    (``broker_id``, ``host``, ``port``, ``rack``, ``is_fenced`` where the
    release reports fenced brokers)."""
    return admin._manager.run(_describe_cluster, admin)


def unfenced_broker_ids(admin: KafkaAdminClient) -> "set[int]":
    return {b["broker_id"] for b in describe_cluster(admin)["brokers"]
            if not b.get("is_fenced", False)}
