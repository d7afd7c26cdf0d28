"""What Kafka's admin API reports, through kafka-python, as plain data.

kafka-python 3.0.12's ``describe_cluster`` and ``describe_metadata_quorum``
fail on the older versions of their requests (Kafka 3.3-3.6) by popping keys
only newer versions have, so both are asked here with the same requests,
tolerating their absence.
"""

from __future__ import annotations

from kafka import KafkaAdminClient
from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeQuorumRequest
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


async def _describe_quorum(admin: KafkaAdminClient):
    Topic = DescribeQuorumRequest.TopicData
    request = DescribeQuorumRequest(topics=[
        Topic(topic_name="__cluster_metadata", partitions=[Topic.PartitionData(partition_index=0)])])
    return await admin._manager.send(request)


def describe_quorum(admin: KafkaAdminClient) -> dict:
    """DescribeQuorum's answer for ``__cluster_metadata-0``: ``leader_id``,
    ``leader_epoch``, ``high_watermark``, ``current_voters``, ``observers``.
    (kafka-python 3.0.12's own call fails on v0-v1, which have no
    ``error_message``.)"""
    response = admin._manager.run(_describe_quorum, admin)
    error = Errors.for_code(response.error_code)
    if error is not Errors.NoError:
        raise error(getattr(response, "error_message", None) or "")
    (partition,) = [p for t in response.to_dict()["topics"] for p in t["partitions"]]
    if partition["error_code"]:
        raise Errors.for_code(partition["error_code"])("DescribeQuorum __cluster_metadata-0")
    return partition
