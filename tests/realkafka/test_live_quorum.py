"""Live mode (``-C``) against a real quorum of each release: 3 controllers
and a broker as separate JVMs, one cluster per release shared by the tests
below in file order (each leaves the cluster whole for the next).

- a one-shot ``-o json tree /`` equals ``-s`` on the leader's log dir at the
  same offset, with ``-C`` as voters (``id@host:port``) and as bootstrap
  servers (``host:port``);
- ``watch`` prints topic creations and a broker fence; the append-to-line
  latency of 50 topic creations is measured and printed (p50/p99);
- the active controller SIGKILLed in the middle of a workload: the observer
  follows the new leader, and the committed batches it applied are, in
  order, byte for byte the batches of the new leader's log on disk;
- every controller stopped: "quorum lost"; they come back: it follows again
  by itself, an election on the way shown as an election;
- on one 3.x and one 4.x release (``live_support.SECURED``), the controllers
  also listen with SASL_SSL (SCRAM-SHA-512, PLAIN) and mTLS: each works, a
  principal without ClusterAction, a broker listener and protocol
  mismatches get their one-line errors.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.support.fake_kraft_follow import Follow, rebuild
from tests.support.replay import flat
from metashell.fs.node import lookup
from metashell.fs.root import build_root
from metashell.kraft.batch import BatchScanner
from metashell.live import CommittedEvent, LiveConfig, SnapshotEvent, parse_controllers

from .admin import admin_client
from .cluster import KafkaCluster
from .live_support import (REPO, SECURED, USERS, Certificates, Secured, grant, live,
                           metashell_env, secure, secured_config)

SECURED_CLUSTERS: "dict[str, Secured]" = {}     # the running secured cluster of a release
# small snapshots, so the observer downloads one where the release serves it
CONFIG = {"metadata.log.max.record.bytes.between.snapshots": "20000"}
LATENCY_EVENTS = 50
LATENCY_P99_TARGET_S = 1.0
FAILOVER_TOPICS = 21
ACL_WAIT_S = 30          # ACLs made through the broker reach the controllers


@pytest.fixture(scope="module")
def cluster(kafka_version, kafka_workdir):
    workdir = kafka_workdir / f"live-{kafka_version}"
    config = dict(CONFIG)
    certs = None
    if kafka_version in SECURED:
        certs = Certificates(workdir / "certs")
        config.update(secured_config(certs))
    c = KafkaCluster(kafka_version, controllers=3, brokers=1, workdir=workdir / "cluster",
                     extra_config=config, stop_cleanly=False)
    secured = secure(c, certs) if certs is not None else None
    with c:
        if secured is not None:
            grant(c)
            SECURED_CLUSTERS[kafka_version] = secured
        try:
            yield c
        finally:
            SECURED_CLUSTERS.pop(kafka_version, None)


@pytest.fixture
def secured(cluster) -> Secured:
    if cluster.version not in SECURED_CLUSTERS:
        pytest.skip(f"secured controller listeners are tested on {' and '.join(SECURED)} only")
    return SECURED_CLUSTERS[cluster.version]


def run(controllers: str, *words) -> tuple[int, str, str]:
    status, out, err, _ = live(controllers, *words)
    return status, out, err


def files(path: Path, *words, until_offset: int) -> dict:
    p = subprocess.run([sys.executable, "-m", "metashell.cli", "-s", str(path), "--until-offset",
                        str(until_offset), "-o", "json", *words], cwd=REPO, env=metashell_env(),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def leader_of(cluster) -> int:
    status, out, err = run(cluster.controller_quorum, "-o", "json", "cat",
                            "/metadataQuorum/live/leaderId")
    assert status == 0, err
    return json.loads(out)


# ------------------------------------------------------------------ one-shot tree

@pytest.mark.parametrize("form", ["voters", "bootstrap"])
def test_one_shot_tree_equals_the_leaders_log_dir(cluster, form):
    controllers = cluster.controller_quorum if form == "voters" else cluster.controller_bootstrap
    status, out, err = run(controllers, "-o", "json", "tree", "/")
    assert status == 0 and err == "", err
    tree = flat(json.loads(out))
    assert tree["/metadataQuorum/live/state"] == "following"
    offset = tree["/metadataQuorum/offset"]
    leader = tree["/metadataQuorum/live/leaderId"]
    on_disk = flat(files(cluster.metadata_dirs[leader], "tree", "/", until_offset=offset))
    assert on_disk["/metadataQuorum/offset"] == offset
    ignored = ("/local/", "/metadataQuorum/live/")
    # a broker registered before the snapshot the leader sent: -s reads its time from
    # the segments before that snapshot, which -C never fetched
    for key in [k for k in on_disk if k.endswith("/registeredAt")]:
        assert tree.pop(key, None) in (on_disk.pop(key), None), key

    def kept(t):
        return {k: v for k, v in t.items() if not k.startswith(ignored)}
    assert kept(tree) == kept(on_disk)


# ------------------------------------------------------------------ secured listeners (3.9, 4.4)

def client_properties(path: Path, **props) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def until_granted(controllers: str, config: Path, *words) -> tuple[int, str, str]:
    """Run until the ACLs made through the broker reached the controllers."""
    deadline = time.monotonic() + ACL_WAIT_S
    while True:
        status, out, err, _ = live(controllers, *words, config=config)
        if status == 0 or "CLUSTER_AUTHORIZATION_FAILED" not in err or time.monotonic() > deadline:
            return status, out, err
        time.sleep(1)


def _sasl(tmp_path, secured, mechanism: str, module: str, user: str, password: str) -> Path:
    return client_properties(
        tmp_path / f"{mechanism}.properties", **{
            "security.protocol": "SASL_SSL", "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'{module} required username="{user}" password="{password}";',
            "ssl.truststore.type": "PEM", "ssl.truststore.location": secured.certs.ca})


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "PLAIN"])
def test_sasl_ssl(secured, tmp_path, mechanism):
    if mechanism == "PLAIN":
        config = _sasl(tmp_path, secured, mechanism,
                       "org.apache.kafka.common.security.plain.PlainLoginModule",
                       "plainuser", "plain-secret")
    else:
        config = _sasl(tmp_path, secured, mechanism,
                       "org.apache.kafka.common.security.scram.ScramLoginModule",
                       "scramuser", USERS["scramuser"])
    status, out, err = until_granted(secured.sasl, config, "-o", "json", "cat",
                                     "/metadataQuorum/live/state", "/metadataQuorum/live/leaderId")
    assert status == 0 and err == "", err
    state, leader = out.split()
    assert state == '"following"' and int(leader) in secured.cluster.controller_ids
    assert "secret" not in out + err


def test_mtls(secured, tmp_path):
    config = client_properties(tmp_path / "mtls.properties", **{
        "security.protocol": "SSL", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": secured.certs.ca, "ssl.keystore.type": "PEM",
        "ssl.keystore.location": secured.certs.client})
    status, out, err = until_granted(secured.mtls, config, "-o", "json", "summary")
    assert status == 0 and err == "", err
    assert json.loads(out)["quorum"]["state"] == "following"


def test_a_principal_without_cluster_action_gets_the_one_line_error(secured, tmp_path):
    config = _sasl(tmp_path, secured, "SCRAM-SHA-512",
                   "org.apache.kafka.common.security.scram.ScramLoginModule", "nobody",
                   USERS["nobody"])
    status, out, err, elapsed = live(secured.sasl, "summary", config=config)
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert "Fetch refused with CLUSTER_AUTHORIZATION_FAILED: the principal needs ClusterAction on " \
           "the Cluster resource" in err
    assert "secret" not in err and elapsed < 10


def test_a_broker_listener_is_named_as_such(secured):
    status, out, err, elapsed = live(secured.cluster.bootstrap_servers, "summary")
    assert status == 1 and err.count("\n") == 1, err
    assert "this is a broker listener" in err and elapsed < 10


def test_tls_against_plaintext_and_the_reverse_say_protocol_mismatch(secured, tmp_path):
    tls = client_properties(tmp_path / "tls.properties", **{
        "security.protocol": "SSL", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": secured.certs.ca})
    status, _, err, elapsed = live(secured.cluster.controller_quorum, "summary", config=tls)
    assert status == 1 and "protocol mismatch?" in err and elapsed < 5, err
    status, _, err, elapsed = live(secured.mtls, "summary")
    assert status == 1 and "protocol mismatch?" in err and elapsed < 5, err


# ------------------------------------------------------------------ watch

class Watch:
    """``watch -o json`` in a process of its own; each line with the wall
    time it was read."""

    def __init__(self, controllers: str, *paths: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "metashell.cli", "-C", controllers, "--timeout", "20",
             "-o", "json", "watch", *paths], cwd=REPO, env=metashell_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: list[tuple[float, dict]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append((time.time(), json.loads(line)))
                self.cond.notify_all()

    def wait_for(self, predicate, timeout: float = 60) -> list[tuple[float, dict]]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = [(t, c) for t, c in self.lines if predicate(c)]
                if found or time.monotonic() > deadline or self.proc.poll() is not None:
                    return found
                self.cond.wait(0.2)

    def close(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


def _epoch_seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _watched(cluster, watch: Watch, admin, prefix: str) -> None:
    """Until ``watch`` is caught up: it prints a topic created now (one
    created while it was still catching up is part of its image, not a line)."""
    from kafka.admin import NewTopic
    for attempt in range(60):
        name = f"{prefix}-probe-{attempt}"
        admin.create_topics([NewTopic(name, 1, 1)])
        if watch.wait_for(lambda c: c["path"] == f"/topics/{name}", timeout=1):
            return
    raise AssertionError(f"watch never caught up: {watch.close()}")


def test_watch_prints_topic_creations_within_a_second(cluster, kafka_version):
    from kafka.admin import NewTopic
    watch = Watch(cluster.controller_quorum, "/topics")
    admin = admin_client(cluster.bootstrap_servers)
    try:
        _watched(cluster, watch, admin, "latency")
        names = [f"watched-{i}" for i in range(LATENCY_EVENTS)]
        for name in names:
            admin.create_topics([NewTopic(name, 1, 1)])
        created = watch.wait_for(lambda c: c["type"] == "TopicRecord" and c["path"] == f"/topics/{names[-1]}")
        assert created, f"no TopicRecord line for {names[-1]}: {watch.lines[-3:]}"
        lines = {c["path"]: (t, c) for t, c in watch.lines if c["type"] == "TopicRecord"}
    finally:
        admin.close()
        err = watch.close()
    assert "Traceback" not in err
    assert set(lines) >= {f"/topics/{n}" for n in names}
    # from the leader's append time (the batch's timestamp, same clock): an upper
    # bound of commit-to-line, since a record is committed after it is appended
    latencies = sorted(t - _epoch_seconds(c["time"]) for t, c in (lines[f"/topics/{n}"] for n in names))
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"\nKafka {kafka_version}: append-to-line latency of {len(latencies)} topic creations: "
          f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    assert p99 <= LATENCY_P99_TARGET_S, latencies


# ------------------------------------------------------------------ failover

def _create(admin, name: str, deadline: float) -> None:
    """Create a topic, retrying while the quorum elects a new leader."""
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError
    while True:
        try:
            admin.create_topics([NewTopic(name, 1, 1)])
            return
        except TopicAlreadyExistsError:
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _observed_batches(events) -> list[tuple[int, int, bytes]]:
    """(base offset, last offset, bytes) of every batch applied since the last snapshot."""
    out: list[tuple[int, int, bytes]] = []
    for e in events:
        if isinstance(e, SnapshotEvent):
            out = []
        elif isinstance(e, CommittedEvent):
            for h in BatchScanner(e.data, "event"):
                end = h.position + 12 + h.length
                out.append((h.base_offset, h.base_offset + h.last_offset_delta,
                            bytes(e.data[h.position:end])))
    return out


def _disk_batches(metadata_dir: Path) -> dict[int, bytes]:
    out = {}
    for segment in sorted((metadata_dir / "__cluster_metadata-0").glob("*.log")):
        data = segment.read_bytes()
        scanner = BatchScanner(data, str(segment))
        for h in scanner:
            out[h.base_offset] = data[h.position:h.position + 12 + h.length]
    return out


def _when(f: Follow, predicate) -> tuple[threading.Thread, list[float]]:
    """A thread waiting for ``predicate(f)``, and the list it puts the time in."""
    at: list[float] = []

    def wait():
        if f.wait(predicate, 60):
            at.append(time.monotonic())
    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, at


def _follow(cluster) -> Follow:
    f = Follow(LiveConfig(parse_controllers(cluster.controller_quorum), timeout=30))
    assert f.wait(lambda f: f.following(), 60), (f.error, f.statuses[-1:])
    return f


def test_sigkill_of_the_active_controller_mid_workload_loses_and_repeats_nothing(cluster):
    f = _follow(cluster)
    admin = admin_client(cluster.bootstrap_servers, timeout_ms=5000)
    killed = None
    try:
        deadline = time.monotonic() + 120
        for i in range(FAILOVER_TOPICS):
            if i == FAILOVER_TOPICS // 3:
                killed = f.statuses[-1].leader_id
                cluster.kill(killed)
                killed_at = time.monotonic()
                waiter, followed = _when(f, lambda f, k=killed: any(
                    s.leader_id not in (-1, k) and s.state == "following" for s in f.statuses))
            _create(admin, f"failover-{i}", deadline)
        assert f.wait(lambda f: any(s.leader_id not in (-1, killed) and s.state == "following"
                                    for s in f.statuses), 60), f.statuses[-3:]
        waiter.join(5)
        print(f"\nKafka {cluster.version}: leader {killed} SIGKILLed; the observer followed the "
              f"new leader {followed[0] - killed_at:.1f} s later")
        survivor = next(s.leader_id for s in reversed(f.statuses) if s.leader_id not in (-1, killed))
        # everything the workload made is committed and applied
        target = f.committed_offset
        assert f.wait(lambda f: f.committed_offset > target, 30)
        batches = _observed_batches(f.events)
        disk = _disk_batches(cluster.metadata_dirs[survivor])
    finally:
        admin.close()
        f.close()
        if killed is not None:    # back, without waiting: the next test stops them all anyway
            cluster.start(killed, wait=False)
    assert f.error is None, f.error
    assert survivor != killed
    expected = batches[0][0]
    for base, last, data in batches:
        assert base == expected, f"gap or repeat at offset {base} (expected {expected})"
        assert disk.get(base) == data, f"the batch at offset {base} differs from the log on disk"
        expected = last + 1
    assert expected == f.committed_offset
    topics = lookup(build_root(rebuild(f.events).image), ["topics"]).children()
    assert {f"failover-{i}" for i in range(FAILOVER_TOPICS)} <= set(topics)


# ------------------------------------------------------------------ the whole quorum away

def test_every_controller_stopped_is_quorum_lost_and_it_resumes_by_itself(cluster):
    f = _follow(cluster)
    try:
        before = f.committed_offset
        leader = f.statuses[-1].leader_id
        survivor = next(i for i in cluster.controller_ids if i != leader)
        # the majority gone: up to 3.9 the survivor stands for election after election
        # (a new epoch each time, no leader); from 4.0 it asks for pre-votes first
        # (KIP-996) and, denied, keeps the epoch, naming the old leader or none
        for node_id in cluster.controller_ids:
            if node_id != survivor:
                cluster.kill(node_id)
        pre_vote = int(cluster.version.split(".")[0]) >= 4
        assert f.wait(lambda f: f.statuses[-1].state in ("election", "lost"), 20), f.statuses[-3:]
        if not pre_vote:
            f.wait(lambda f: f.statuses[-1].state == "election", 12)
        electing = f.statuses[-1]
        assert electing.state in (("election", "lost") if pre_vote else ("election",)), f.statuses[-3:]
        cluster.kill(survivor)
        assert f.wait(lambda f: f.statuses[-1].state == "lost", 30), f.statuses[-3:]
        stopped_at = len(f.statuses)
        for node_id in cluster.controller_ids:
            cluster.start(node_id, wait=False)
        cluster.wait_ready()
        assert f.wait(lambda f: f.statuses[-1].state == "following"
                      and f.committed_offset > before, 90), f.statuses[-3:]
        after = f.statuses[stopped_at:]
    finally:
        f.close()
        for node_id in cluster.controller_ids:    # whole again for the next test, whatever failed
            cluster.start(node_id, wait=False)
    assert f.error is None, f.error
    if electing.state == "lost":    # pre-vote: the survivor still names the lost leader
        assert electing.leader_id == leader, electing
    else:
        assert electing.leader_id == -1 and electing.leader_epoch > 0, electing
    states = [f"{s.state}({s.leader_id}/{s.leader_epoch})" for s in after]
    print(f"\nKafka {cluster.version}: two of three controllers killed: {electing.state} "
          f"(epoch {electing.leader_epoch}, {electing.detail}); states after all came back: "
          f"{[x for i, x in enumerate(states) if i == 0 or states[i - 1] != x]}")
    # an answer naming no leader is an election, never "quorum lost"
    for s in after:
        if s.leader_id < 0 and s.detail and "election" in s.detail:
            assert s.state == "election", s


# ------------------------------------------------------------------ a broker fenced (last: it stays down)

def test_watch_prints_a_broker_fence(cluster):
    broker = cluster.broker_ids[0]
    watch = Watch(cluster.controller_quorum, "/brokers", "/topics/fence-*")
    admin = admin_client(cluster.bootstrap_servers)
    try:
        _watched(cluster, watch, admin, "fence")
    finally:
        admin.close()
    try:
        cluster.stop(broker)          # controlled shutdown: the controller fences it
        fenced = watch.wait_for(lambda c: c["path"] == f"/brokers/{broker}"
                                and " fenced" in f" {c['summary']}" and "unfenced" not in c["summary"])
    finally:
        err = watch.close()
    assert fenced, ([c for _, c in watch.lines], err)
    assert "Traceback" not in err
