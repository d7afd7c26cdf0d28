"""A metadata workload run through Kafka's own admin API, on any release.

``workload_cluster(version, workdir)`` is the cluster the fidelity tests share:
3 controllers and 2 brokers (racks ``rack-a``/``rack-b``, a SASL/SCRAM
listener for delegation tokens), ``StandardAuthorizer``, small metadata
segments and frequent snapshots. ``run_workload(cluster)`` then makes every
kind of metadata record the release writes: topics (many partitions,
replication 2, partitions added, a topic deleted and re-created under its
name), topic / broker / default-broker configs (a sensitive one too), client
quotas (user, client-id, ip, defaults), ACLs (literal and prefixed, allow and
deny, one deleted), SCRAM users of both mechanisms (one deleted), a
delegation token (3.6+), a partition reassignment, a broker restart (fence,
controlled shutdown, new epoch, unfence), a ``metadata.version`` upgrade, and
on 3.9+ a controller removed from the quorum and added back. What it did, and
what it skipped and why, is returned as a ``Workload``.

kafka-python's admin client does what it supports; client quotas go through
its protocol classes (it has no quota call), delegation tokens and quorum
changes through Kafka's own CLI classes (``java -cp``).
"""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
import time
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kafka import TopicPartition
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType,
                         ACLResourcePatternType, ConfigResource, ConfigResourceType,
                         NewPartitions, NewTopic, ResourcePattern, ResourcePatternFilter,
                         ResourceType, ScramMechanism, UserScramCredentialDeletion,
                         UserScramCredentialUpsertion)
from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest

from .admin import admin_client, describe_quorum
from .cluster import JVM_FLAGS, KafkaCluster
from .degraded import ToolRun, degrade_and_run_tools

SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
ADMIN_USER, ADMIN_PASSWORD = "admin", "admin-secret"
SNAPSHOT_WAIT_S = 60.0
ELR_FEATURE = "eligible.leader.replicas.version"


def version_tuple(version: str) -> "tuple[int, int]":
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def dynamic_quorum(version: str) -> bool:
    """3.9+ (KIP-853): controllers formatted as a dynamic quorum, so that one
    can be removed and added back."""
    return version_tuple(version) >= (3, 9)


def initial_release_version(version: str) -> str:
    """The metadata.version the cluster is formatted with, so that the
    workload can upgrade it: the oldest a dynamic quorum allows on 3.9+,
    3.3-IV0 on 3.3, else 3.3-IV3."""
    if dynamic_quorum(version):
        return "3.9-IV0"
    return "3.3-IV0" if version_tuple(version) == (3, 3) else "3.3-IV3"


def tokens_supported(version: str) -> bool:
    """KRaft delegation tokens came with 3.6 (KIP-900); before, a KRaft broker
    with a token secret refuses to start."""
    return version_tuple(version) >= (3, 6)


def workload_config(version: str) -> "dict[str, str]":
    """server.properties of every node: authorizer, SCRAM, tokens, small
    segments, frequent snapshots (settings a release does not know are
    ignored with a warning)."""
    config = {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:ANONYMOUS;User:{ADMIN_USER}",
        "allow.everyone.if.no.acl.found": "true",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl.scram-sha-256.sasl.jaas.config": SCRAM_LOGIN,
        "listener.name.sasl.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN,
        "metadata.log.segment.ms": "4000",
        "metadata.log.max.record.bytes.between.snapshots": "4096",
        "metadata.log.max.snapshot.interval.ms": "3000",
        "metadata.max.idle.interval.ms": "200",
        "metadata.max.retention.bytes": "-1",
        "metadata.max.retention.ms": "-1",
        # a leader that a busy machine starves of CPU for a few seconds keeps
        # its leadership (Kafka's 2 s would start elections that a loaded
        # 2-core machine never ends); the workload stops no controller
        "controller.quorum.fetch.timeout.ms": "10000",
        "controller.quorum.request.timeout.ms": "5000",
    }
    if tokens_supported(version):
        config["delegation.token.secret.key"] = "workload-token-secret"
    if version_tuple(version) >= (4, 1):
        # 4.1 dropped metadata.log.segment.min.bytes; segment.bytes must be >= 8 MiB
        config["internal.metadata.log.segment.bytes"] = "16384"
    else:
        config.update({"metadata.log.segment.min.bytes": "8192",
                       "metadata.log.segment.bytes": "16384"})
    return config


def workload_cluster(version: str, workdir) -> KafkaCluster:
    """The cluster the workload runs on (not started yet)."""
    return KafkaCluster(
        version, controllers=3, brokers=2, workdir=workdir,
        extra_config=workload_config(version),
        node_config={101: {"broker.rack": "rack-a"}, 102: {"broker.rack": "rack-b"}},
        dynamic_quorum=dynamic_quorum(version),
        release_version=initial_release_version(version),
        broker_listeners={"SASL": "SASL_PLAINTEXT"})


@dataclass
class Workload:
    """What ``run_workload`` did: step -> "done" or why it was skipped."""

    version: str
    steps: "dict[str, str]" = field(default_factory=dict)
    seconds: float = 0.0

    def done(self, step: str) -> None:
        self.steps[step] = "done"

    def skipped(self, step: str, reason: str) -> None:
        self.steps[step] = f"skipped: {reason}"


def run_workload(cluster: KafkaCluster) -> Workload:
    """Run every step on a started ``workload_cluster``; see the module docstring."""
    started = time.monotonic()
    work = Workload(cluster.version)
    with _admin(cluster) as admin:
        _topics(admin, work)
        _configs(cluster, admin, work)
        _quotas(admin, work)
        _acls(admin, work)
        _reassignment(admin, work)
        _metadata_version_upgrade(admin, work)   # SCRAM needs 3.5-IV2, tokens 3.6-IV2
        _eligible_leader_replicas(admin, work)
    # Before any SCRAM credential exists: a Kafka 3.5 broker restarting from a
    # snapshot of its own that holds some drops the SCRAM-SHA-256 ones.
    _broker_restart(cluster, work)
    with _admin(cluster) as admin:
        _scram(admin, work)
    _delegation_token(cluster, work)
    _controller_remove_and_add(cluster, work)
    work.seconds = time.monotonic() - started
    return work


@contextmanager
def _admin(cluster: KafkaCluster):
    admin = admin_client(cluster.bootstrap_servers)
    try:
        yield admin
    finally:
        admin.close()


# -- topics -------------------------------------------------------------------------

def _topics(admin, work: Workload) -> None:
    admin.create_topics([
        NewTopic("orders", 24, 2, topic_configs={"retention.ms": "86400000"}),
        NewTopic("events", 6, 1, topic_configs={"cleanup.policy": "compact"}),
        NewTopic("payments", 3, 2, topic_configs={"min.insync.replicas": "2"}),
        NewTopic("audit.log", 1, 1),
    ])
    work.done("topics created")
    admin.create_partitions({"orders": NewPartitions(32)})
    work.done("partitions added")
    admin.delete_topics(["events"])
    _wait_until(lambda: "events" not in admin.list_topics(), "topic events deleted")
    admin.create_topics([NewTopic("events", 4, 2, topic_configs={"min.insync.replicas": "1"})])
    work.done("topic deleted and re-created")


def _wait_until(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"workload: {what} did not happen within {timeout:.0f} s")
        time.sleep(0.2)


# -- configs --------------------------------------------------------------------------

def _configs(cluster: KafkaCluster, admin, work: Workload) -> None:
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders", {
        "retention.ms": "172800000", "segment.bytes": "1048576", "min.insync.replicas": "2"})],
        incremental=True)
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "101", {
        "log.flush.interval.messages": "100000", "min.insync.replicas": "1"})], incremental=True)
    # min.insync.replicas set and unset again, on a topic and on a broker
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders", {
        "min.insync.replicas": ("DELETE", None)})], incremental=True)
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "101", {
        "min.insync.replicas": ("DELETE", None)})], incremental=True)
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "102", {
        "min.insync.replicas": "1"})], incremental=True)
    admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "102", {
        "listener.name.sasl.scram-sha-256.sasl.jaas.config": SCRAM_LOGIN})], incremental=True,
        raise_on_unknown=False)
    # kafka-python cannot name the default broker resource (""): kafka-configs can
    tool = cli_class(cluster, "org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand")
    run_cli(cluster, tool, "--bootstrap-server", cluster.bootstrap_servers, "--alter",
            "--entity-type", "brokers", "--entity-default",
            "--add-config",
            "message.max.bytes=2000000,log.retention.ms=604800001,min.insync.replicas=2")
    work.done("topic, broker and default broker configs (one sensitive; "
              "min.insync.replicas set and unset)")


# -- client quotas ----------------------------------------------------------------------

QUOTAS = [
    ({"user": "alice"}, {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 2097152.0}),
    ({"user": None}, {"producer_byte_rate": 524288.0}),
    ({"client-id": "app-1"}, {"request_percentage": 50.0}),
    ({"client-id": None}, {"consumer_byte_rate": 262144.0}),
    ({"user": "alice", "client-id": "app-1"}, {"producer_byte_rate": 65536.0}),
    ({"ip": "127.0.0.2"}, {"connection_creation_rate": 10.0}),
    ({"ip": None}, {"connection_creation_rate": 100.0}),
]


def _quota_entry(entity: dict, values: dict):
    Entry = AlterClientQuotasRequest.EntryData
    return Entry(
        entity=[Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        ops=[Entry.OpData(key=k, value=v, remove=False) for k, v in values.items()])


async def _alter_quotas(admin, entries) -> list:
    request = AlterClientQuotasRequest(entries=entries, validate_only=False)
    response = await admin._manager.send(request)
    return [(e.error_code, e.error_message) for e in response.entries]


def _quotas(admin, work: Workload) -> None:
    entries = [_quota_entry(entity, values) for entity, values in QUOTAS]
    errors = admin._manager.run(_alter_quotas, admin, entries)
    bad = [(q, e) for q, e in zip(QUOTAS, errors) if e[0] != 0]
    assert not bad, f"AlterClientQuotas refused: {bad}"
    work.done("client quotas (user, client-id, ip, defaults)")


# -- ACLs -------------------------------------------------------------------------------

def _acl(principal, resource, name, pattern, operation, permission) -> ACL:
    return ACL(principal=principal, host="*", operation=operation, permission_type=permission,
               resource_pattern=ResourcePattern(resource, name, pattern))


ACLS = [
    ("User:alice", ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL,
     ACLOperation.READ, ACLPermissionType.ALLOW),
    ("User:bob", ResourceType.TOPIC, "pay", ACLResourcePatternType.PREFIXED,
     ACLOperation.WRITE, ACLPermissionType.DENY),
    ("User:alice", ResourceType.GROUP, "analytics-", ACLResourcePatternType.PREFIXED,
     ACLOperation.READ, ACLPermissionType.ALLOW),
    ("User:metashell", ResourceType.CLUSTER, "kafka-cluster", ACLResourcePatternType.LITERAL,
     ACLOperation.CLUSTER_ACTION, ACLPermissionType.ALLOW),
    ("User:carol", ResourceType.TOPIC, "*", ACLResourcePatternType.LITERAL,
     ACLOperation.DESCRIBE, ACLPermissionType.ALLOW),
]


def _acls(admin, work: Workload) -> None:
    result = admin.create_acls([_acl(*a) for a in ACLS])
    assert not result["failed"], f"CreateAcls refused: {result['failed']}"
    gone = ACLFilter(principal="User:carol", host="*", operation=ACLOperation.ANY,
                     permission_type=ACLPermissionType.ANY,
                     resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, "*",
                                                            ACLResourcePatternType.LITERAL))
    admin.delete_acls([gone])
    work.done("ACLs (literal, prefixed, allow, deny; one deleted)")


# -- SCRAM ----------------------------------------------------------------------------------

SCRAM_USERS = [
    ("alice", ScramMechanism.SCRAM_SHA_256, 4096),
    ("bob", ScramMechanism.SCRAM_SHA_512, 8192),
    ("carol", ScramMechanism.SCRAM_SHA_256, 4096),
    (ADMIN_USER, ScramMechanism.SCRAM_SHA_256, 4096),
    (ADMIN_USER, ScramMechanism.SCRAM_SHA_512, 5000),
]


def _scram(admin, work: Workload) -> None:
    if version_tuple(work.version) < (3, 5):
        work.skipped("SCRAM users", "KRaft SCRAM came with 3.5 (KIP-900): no AlterUserScramCredentials")
        return
    for user, mechanism, iterations in SCRAM_USERS:   # one user's credential per request
        password = ADMIN_PASSWORD if user == ADMIN_USER else f"{user}-pw"
        errors = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            user, mechanism, password, iterations=iterations)])
        assert not any(errors.values()), f"AlterUserScramCredentials refused: {errors}"
    errors = admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_256)])
    assert not any(errors.values()), errors
    work.done("SCRAM users (SHA-256, SHA-512; one deleted)")


# -- delegation token --------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _has_class(classpath: str, class_name: str) -> bool:
    entry = class_name.replace(".", "/") + ".class"
    for jar in classpath.split(":"):
        with zipfile.ZipFile(jar) as z:
            try:
                z.getinfo(entry)
                return True
            except KeyError:
                continue
    return False


def cli_class(cluster: KafkaCluster, *candidates: str) -> str:
    """The first of ``candidates`` (a tool's main class across releases) on
    the release's class path."""
    for name in candidates:
        if _has_class(cluster.classpath, name):
            return name
    raise AssertionError(f"Kafka {cluster.version}: none of {candidates} on the class path")


def run_cli(cluster: KafkaCluster, main_class: str, *args: str, timeout: float = 120) -> str:
    """Run one of Kafka's CLI tools: in the cluster's tools JVM while it is up,
    else as ``java -cp``; its stdout, or an error with its output."""
    tools = cluster.tools()
    if tools is not None:
        code, out, err = tools.run(main_class, args, timeout)
    else:
        cmd = ["java", "-Xmx192m", *JVM_FLAGS, cluster.log_option,
               f"-Dkafka.logs.dir={cluster.workdir}", "-cp", cluster.classpath, main_class, *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    if code != 0:
        raise AssertionError(f"Kafka {cluster.version} {main_class} {' '.join(args)} failed "
                             f"({code}):\n{out}{err}")
    return out


def sasl_client_properties(cluster: KafkaCluster) -> Path:
    """A client.properties for the brokers' SASL listener as the admin user."""
    path = cluster.workdir / "admin-sasl.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        f'sasl.jaas.config={SCRAM_LOGIN[:-1]} username="{ADMIN_USER}" '
        f'password="{ADMIN_PASSWORD}";\n')
    return path


def _delegation_token(cluster: KafkaCluster, work: Workload) -> None:
    if not tokens_supported(cluster.version):
        work.skipped("delegation token", "KRaft delegation tokens came with 3.6 (KIP-900)")
        return
    tool = cli_class(cluster, "org.apache.kafka.tools.DelegationTokenCommand",
                     "kafka.admin.DelegationTokenCommand")
    run_cli(cluster, tool, "--bootstrap-server", cluster.listener_bootstrap("SASL"),
            "--command-config", str(sasl_client_properties(cluster)),
            "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:alice")
    work.done("delegation token")


# -- reassignment ----------------------------------------------------------------------------

def _reassignment(admin, work: Workload) -> None:
    topic = admin.describe_topics(["audit.log"])[0]
    (part,) = topic["partitions"]
    target = [102] if part["replica_nodes"] == [101] else [101]
    tp = TopicPartition("audit.log", 0)
    result = admin.alter_partition_reassignments({tp: target})
    assert all(e is None for e in result.values()), result

    def moved() -> bool:
        now = admin.describe_topics(["audit.log"])[0]["partitions"][0]
        return now["replica_nodes"] == target and now["isr_nodes"] == target
    _wait_until(moved, f"audit.log-0 moved to {target}", timeout=60)
    work.done("partition reassignment")


# -- metadata.version -------------------------------------------------------------------------

def _metadata_version_upgrade(admin, work: Workload) -> None:
    features = admin.describe_features()
    mv = features["metadata.version"]
    newest, current = mv["supported"][1], mv["finalized"][1]
    if newest <= current:
        work.skipped("metadata.version upgrade", f"formatted at the newest level {current}")
        return
    result = admin.update_features({"metadata.version": newest})
    assert result.get("metadata.version") == "OK", result
    _wait_until(lambda: admin.describe_features()["metadata.version"]["finalized"][1] == newest,
                "metadata.version upgraded")
    work.done(f"metadata.version upgrade {current} -> {newest}")


def _eligible_leader_replicas(admin, work: Workload) -> None:
    """ELR (KIP-966) on, where the release has the feature (4.0+): the
    controller then drops broker-level min.insync.replicas configs."""
    feature = admin.describe_features().get(ELR_FEATURE)
    if feature is None or feature["supported"][1] < 1:
        work.skipped("eligible leader replicas", "no eligible.leader.replicas.version feature")
        return
    if feature.get("finalized", (0, 0))[1] < 1:
        result = admin.update_features({ELR_FEATURE: 1})
        assert result.get(ELR_FEATURE) == "OK", result
        _wait_until(lambda: admin.describe_features()[ELR_FEATURE].get("finalized", (0, 0))[1] == 1,
                    "eligible leader replicas enabled")
    work.done("eligible leader replicas enabled")


# -- broker restart ----------------------------------------------------------------------------

def _broker_restart(cluster: KafkaCluster, work: Workload) -> None:
    cluster.stop(102)
    cluster.start(102)
    work.done("broker restarted (controlled shutdown, fenced, new epoch, unfenced)")


# -- quorum changes ---------------------------------------------------------------------------

def _controller_remove_and_add(cluster: KafkaCluster, work: Workload) -> None:
    if not cluster.dynamic_quorum:
        work.skipped("controller removed and added", "static quorum before 3.9 (KIP-853)")
        return
    tool = cli_class(cluster, "org.apache.kafka.tools.MetadataQuorumCommand")
    node = cluster.nodes[3]
    run_cli(cluster, tool, "--bootstrap-controller", cluster.controller_bootstrap,
            "remove-controller", "--controller-id", "3",
            "--controller-directory-id", node.directory_id)
    _wait_until(lambda: 3 not in _voter_ids(cluster), "controller 3 removed", timeout=60)
    run_cli(cluster, tool, "--bootstrap-controller", cluster.controller_bootstrap,
            "--command-config", str(node.properties_file), "add-controller")
    _wait_until(lambda: 3 in _voter_ids(cluster), "controller 3 added back", timeout=60)
    work.done("controller removed and added back")


def _voter_ids(cluster: KafkaCluster) -> "set[int]":
    admin = admin_client(cluster.bootstrap_servers)
    try:
        partition = describe_quorum(admin)
    finally:
        admin.close()
    return {v["replica_id"] for v in partition["current_voters"]}


# -- files ------------------------------------------------------------------------------------

def metadata_files(metadata_dir: Path) -> "tuple[list[Path], list[Path]]":
    """A metadata log dir's snapshots and segments, oldest first."""
    part = Path(metadata_dir) / "__cluster_metadata-0"
    return sorted(part.glob("*.checkpoint")), sorted(part.glob("*.log"))


def first_change_from(segments: "list[Path]", offset: int) -> int:
    """The offset of the first record at or after ``offset`` that is not a
    NoOpRecord (a control record counts: it changes the quorum's view), or
    the end of the log."""
    from metashell.loader.reader import read_records

    end = offset
    for segment in segments:
        for record in read_records(segment):
            if record.offset >= offset and record.name != "NoOpRecord":
                return record.offset
            end = max(end, record.offset + 1)
    return end


def snapshot_end_offset(path: Path) -> int:
    """A snapshot's end offset (exclusive), from its name ``OFFSET-EPOCH.checkpoint``."""
    return int(path.name.split("-")[0])


def wait_for_files(cluster: KafkaCluster, after_offset: int, snapshots: int = 2,
                   segments: int = 2) -> None:
    """Until every running node's metadata dir has ``snapshots`` snapshots,
    one of them ending after ``after_offset``, and ``segments`` segments."""
    def enough() -> bool:
        for node_id, path in cluster.metadata_dirs.items():
            if not cluster.nodes[node_id].running():
                continue
            snaps, segs = metadata_files(path)
            ends = [snapshot_end_offset(s) for s in snaps]
            if len([e for e in ends if e > 0]) < snapshots or len(segs) < segments:
                return False
            if max(ends, default=0) <= after_offset:
                return False
        return True
    _wait_until(enough, f"{snapshots} snapshots (one past offset {after_offset}) and "
                f"{segments} segments on every node", timeout=SNAPSHOT_WAIT_S)


# -- one release's run, shared by the tests -------------------------------------------------------

@dataclass
class KafkaRun:
    """A workload cluster of one release after the run, stopped cleanly.

    ``expected`` is what the admin API reported once the workload had settled
    (``views.admin_view``), when the quorum's high watermark was
    ``high_watermark``; ``quiet_until`` is the offset of the first record
    after that which is not a NoOpRecord (the nodes' shutdown), so the
    metadata at every offset from ``high_watermark`` - 1 to ``quiet_until``
    - 1 is ``expected``. ``snapshots`` and ``segments`` list each node's files.
    ``tools`` is what Kafka's own tools printed on the cluster left degraded
    after that (degraded.py)."""

    version: str
    cluster: KafkaCluster
    workload: Workload
    expected: dict
    high_watermark: int
    quiet_until: int
    metadata_dirs: "dict[int, Path]"
    snapshots: "dict[int, list[Path]]"
    segments: "dict[int, list[Path]]"
    seconds: float
    tools: ToolRun

    @property
    def with_elr(self) -> bool:
        return version_tuple(self.version) >= (4, 0)


def settled_view(cluster: KafkaCluster, with_elr: bool, timeout: float = 60.0) -> dict:
    """The admin view once every partition has a leader and a full ISR and two
    looks a second apart agree (so the brokers' metadata caught up)."""
    from .views import admin_view

    admin = admin_client(cluster.bootstrap_servers)
    try:
        deadline = time.monotonic() + timeout
        previous = None
        while True:
            view = admin_view(admin, cluster.broker_ids, with_elr)
            quorum = dict(view["quorum"])
            hw = quorum.pop("highWatermark")
            comparable = dict(view, quorum=quorum)
            if previous == comparable and _all_in_sync(view):
                view["quorum"] = quorum
                return dict(view, highWatermark=hw)
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka {cluster.version}: metadata did not settle")
            previous = comparable
            time.sleep(1.0)
    finally:
        admin.close()


def _all_in_sync(view: dict) -> bool:
    return all(p["leader"] >= 0 and sorted(p["replicas"]) == p["isr"]
               for t in view["topics"].values() for p in t["partitions"].values())


def run_release(version: str, workdir: Path) -> KafkaRun:
    """Start a workload cluster of ``version``, run the workload, take the admin
    view, wait for snapshots past it, stop every node cleanly."""
    started = time.monotonic()
    cluster = workload_cluster(version, workdir)
    with cluster:
        work = run_workload(cluster)
        view = settled_view(cluster, version_tuple(version) >= (4, 0))
        hw = view.pop("highWatermark")
        wait_for_files(cluster, after_offset=hw)
        tools = degrade_and_run_tools(cluster)
    files = {n: metadata_files(p) for n, p in cluster.metadata_dirs.items()}
    quiet_until = min(first_change_from(f[1], hw) for f in files.values())
    return KafkaRun(version=version, cluster=cluster, workload=work, expected=view,
                    high_watermark=hw, quiet_until=quiet_until,
                    metadata_dirs=cluster.metadata_dirs,
                    snapshots={n: f[0] for n, f in files.items()},
                    segments={n: f[1] for n, f in files.items()},
                    seconds=time.monotonic() - started, tools=tools)
