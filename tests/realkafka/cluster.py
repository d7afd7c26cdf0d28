"""A real KRaft cluster on loopback, one JVM per node, for tests.

``KafkaCluster(version, controllers=3, brokers=1)`` formats each node's
storage with Kafka's own StorageTool (every node's in one JVM, the one that
runs Kafka's command-line tools later: tool_jvm.py), starts every node as its own JVM
(``kafka.Kafka server.properties``) on free loopback ports and waits until
the quorum has a leader and every broker is registered and unfenced. Used as
a context manager, it stops every JVM it started by PID at the end (SIGTERM,
then SIGKILL after a timeout), brokers first so that they shut down cleanly,
even when the test failed; the tails of the nodes' logs are printed then.

Controllers are nodes ``1..controllers``; brokers ``101..`` (or, with
``combined=True``, each controller is a broker too). Node ``N``'s files live
in ``workdir/node-N/``: ``server.properties``, ``server.log`` and
``stdout.log``, ``metadata/`` (the metadata log dir, holding
``__cluster_metadata-0``) and ``data/`` (a broker's partitions).
"""

from __future__ import annotations

import atexit
import base64
import fcntl
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from . import jars
from .tool_jvm import ToolJvm

JVM_FLAGS = ["-Xms32m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
             "-Xshare:auto", "-Djava.awt.headless=true", "-XX:-UsePerfData"]
CONTROLLER_HEAP = "-Xmx256m"
BROKER_HEAP = "-Xmx384m"
# a deadline, not a pause: a quiet machine is ready in seconds; a 2-core one
# that twenty other processes share took over 120 s to start five JVMs
READY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 30.0
FIRST_BROKER_ID = 101
LOG_TAIL_LINES = 40

# Clusters started and not yet closed, for the failure report (conftest).
ACTIVE: "list[KafkaCluster]" = []


class ClusterSlot:
    """One machine's right to run Kafka clusters, held from a cluster's
    format to its close. Two releases' clusters side by side (ten JVMs
    electing and registering brokers) starve each other on a 2-core
    machine: one stopped the other's broker with "a fatal error while
    waiting for the controller to acknowledge that we are caught up". The
    suite keeps every cluster in one pytest-xdist worker (``tests/conftest.py``);
    this makes any other test session of this user, or a worker given
    clusters by a changed grouping, wait its turn instead. An exclusive
    ``flock`` on a file of the jar cache; within one process the slot is
    re-entered (a test holding a cluster may start another), counted, and
    released by the last holder."""

    def __init__(self):
        self._guard = threading.Lock()
        self._held = 0
        self._file = None

    def take(self) -> None:
        with self._guard:
            if self._held == 0:
                path = jars.cache_root() / ".clusters.lock"
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = open(path, "a")
                fcntl.flock(self._file, fcntl.LOCK_EX)
            self._held += 1

    def give(self) -> None:
        with self._guard:
            self._held -= 1
            if self._held == 0:
                fcntl.flock(self._file, fcntl.LOCK_UN)
                self._file.close()
                self._file = None


SLOT = ClusterSlot()


def _kill_leftovers() -> None:
    """At interpreter exit, no JVM of ours outlives the test run."""
    for cluster in list(ACTIVE):
        for node_id in cluster.nodes:
            cluster.kill(node_id)
        cluster.close_tools()


atexit.register(_kill_leftovers)


class NodeExited(RuntimeError):
    """A Kafka JVM stopped by itself while the harness waited for it."""


def kafka_uuid() -> str:
    """A random Kafka Uuid in its text form (URL-safe base64, no padding);
    like Kafka's own, never one starting with '-' (a command line would take
    it for an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def free_port(taken: "set[int]") -> int:
    """A loopback port nobody listens on now (and not already handed out),
    from PORT_BAND: below the kernel's ephemeral ports, which every other
    process of the suite is given (Spark's, HDFS's, S3Proxy's, clients'
    own ends). A Kafka port from that range was taken by the other pytest
    worker between its pick and the JVM's bind ("Address already in use"),
    and a client reconnecting to a stopped node's port reached a Spark
    driver's accumulator server that had been given it."""
    while True:
        port = random.choice(PORT_BAND)
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        taken.add(port)
        return port


def _port_band() -> range:
    """Up to 16,384 ports just below the ephemeral range (Linux's
    ``ip_local_port_range``, 32768-60999 by default), or above it where
    too few are below."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        low, high = (int(p) for p in text.split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    if low - 1024 >= 4096:
        return range(max(1024, low - 16384), low)
    return range(high + 1, 65536)


PORT_BAND = _port_band()


def _version_tuple(version: str) -> "tuple[int, ...]":
    return tuple(int(p) for p in version.split(".")[:2])


class KafkaNode:
    """One node's roles, ports, files and (while running) its JVM."""

    def __init__(self, node_id: int, roles: "list[str]", root: Path):
        self.node_id = node_id
        self.roles = roles
        self.dir = root / f"node-{node_id}"
        self.controller_port: "int | None" = None
        self.broker_port: "int | None" = None
        self.extra_ports: "dict[str, int]" = {}    # broker listener name -> port
        self.process: "subprocess.Popen | None" = None
        self.directory_id = kafka_uuid()

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def metadata_dir(self) -> Path:
        return self.dir / "metadata"

    @property
    def properties_file(self) -> Path:
        return self.dir / "server.properties"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class KafkaCluster:
    """A KRaft cluster of one Kafka release; see the module docstring.

    ``extra_config`` is added to every node's server.properties (it wins over
    the harness's defaults); ``node_config`` {node_id: {...}} to one node's.
    ``dynamic_quorum`` (3.9+) formats the controllers with
    ``--initial-controllers`` and points nodes at
    ``controller.quorum.bootstrap.servers`` instead of static voters.
    ``release_version`` formats with that ``metadata.version``.
    ``broker_listeners`` {name: security protocol} gives every broker one more
    listener each (e.g. ``{"SASL": "SASL_PLAINTEXT"}``; their settings go in
    ``extra_config`` as ``listener.name.sasl....``), see ``listener_bootstrap``.
    ``stop_cleanly=False``: ``close`` kills every JVM, for a cluster whose
    files nobody reads afterwards (a clean stop takes seconds: the last
    controller waits 5 s for peers that have gone)."""

    def __init__(self, version: str, controllers: int = 3, brokers: int = 1,
                 combined: bool = False, extra_config: "dict | None" = None,
                 workdir: "str | Path | None" = None,
                 node_config: "dict[int, dict] | None" = None,
                 dynamic_quorum: bool = False,
                 release_version: "str | None" = None,
                 broker_listeners: "dict[str, str] | None" = None,
                 stop_cleanly: bool = True):
        jars.require_java_and_maven()
        self.version = version
        self.combined = combined
        self.extra_config = dict(extra_config or {})
        self.node_config = {k: dict(v) for k, v in (node_config or {}).items()}
        self.dynamic_quorum = dynamic_quorum
        self.release_version = release_version
        self.broker_listeners = dict(broker_listeners or {})
        self.stop_cleanly = stop_cleanly
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"kafka-{version}-"))
        self.cluster_id = kafka_uuid()
        self.nodes: dict[int, KafkaNode] = {}
        self.ports: "set[int]" = set()     # every port handed to its nodes' listeners
        self._plan_nodes(controllers, brokers, combined)
        self.classpath = jars.kafka_classpath(version)
        self.log_option, _ = jars.log_config(version)
        self.started_at: "float | None" = None
        self._tools: "ToolJvm | None" = None

    # -- layout ---------------------------------------------------------------

    def _plan_nodes(self, controllers: int, brokers: int, combined: bool) -> None:
        for node_id in range(1, controllers + 1):
            roles = ["broker", "controller"] if combined else ["controller"]
            self.nodes[node_id] = KafkaNode(node_id, roles, self.workdir)
        if not combined:
            for i in range(brokers):
                node_id = FIRST_BROKER_ID + i
                self.nodes[node_id] = KafkaNode(node_id, ["broker"], self.workdir)
        for node in self.nodes.values():
            if node.is_controller:
                node.controller_port = free_port(self.ports)
            if node.is_broker:
                node.broker_port = free_port(self.ports)
                node.extra_ports = {name: free_port(self.ports) for name in self.broker_listeners}

    @property
    def controller_ids(self) -> "list[int]":
        return [n.node_id for n in self.nodes.values() if n.is_controller]

    @property
    def broker_ids(self) -> "list[int]":
        return [n.node_id for n in self.nodes.values() if n.is_broker]

    @property
    def controller_quorum(self) -> str:
        """The voters as ``controller.quorum.voters``: ``1@127.0.0.1:P,...``."""
        return ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}"
                        for n in self.nodes.values() if n.is_controller)

    @property
    def controller_bootstrap(self) -> str:
        """The controllers as ``controller.quorum.bootstrap.servers``."""
        return ",".join(f"127.0.0.1:{n.controller_port}"
                        for n in self.nodes.values() if n.is_controller)

    @property
    def bootstrap_servers(self) -> str:
        """The brokers' listeners, ``127.0.0.1:P,...``."""
        return ",".join(f"127.0.0.1:{n.broker_port}"
                        for n in self.nodes.values() if n.is_broker)

    def listener_bootstrap(self, name: str) -> str:
        """The brokers' extra listener ``name`` (see ``broker_listeners``)."""
        return ",".join(f"127.0.0.1:{n.extra_ports[name]}"
                        for n in self.nodes.values() if n.is_broker)

    @property
    def metadata_dirs(self) -> "dict[int, Path]":
        """{node id: the node's metadata log dir (holding ``__cluster_metadata-0``)}."""
        return {n.node_id: n.metadata_dir for n in self.nodes.values()}

    def logs(self, node_id: int) -> str:
        """The node's ``server.log`` and ``stdout.log`` (JVM output), as text."""
        node = self.nodes[node_id]
        parts = []
        for name in ("server.log", "stdout.log"):
            path = node.dir / name
            if path.exists():
                parts.append(f"--- {path}\n{path.read_text(errors='replace')}")
        return "\n".join(parts)

    def log_tails(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of every node's logs, for failure reports."""
        out = []
        for node_id in self.nodes:
            text = self.logs(node_id).splitlines()[-lines:]
            out.append(f"=== Kafka {self.version} node {node_id}\n" + "\n".join(text))
        return "\n".join(out)

    # -- configuration ----------------------------------------------------------

    def _server_properties(self, node: KafkaNode) -> "dict[str, str]":
        listeners, protocols = [], ["CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT"]
        if node.is_broker:
            listeners.append(f"PLAINTEXT://127.0.0.1:{node.broker_port}")
            for name, protocol in self.broker_listeners.items():
                listeners.append(f"{name}://127.0.0.1:{node.extra_ports[name]}")
        protocols += [f"{name}:{p}" for name, p in self.broker_listeners.items()]
        if node.is_controller:
            listeners.append(f"CONTROLLER://127.0.0.1:{node.controller_port}")
        replication = str(min(3, max(1, len(self.broker_ids))))
        props = {
            "process.roles": ",".join(node.roles),
            "node.id": str(node.node_id),
            "controller.listener.names": "CONTROLLER",
            "listeners": ",".join(listeners),
            "listener.security.protocol.map": ",".join(protocols),
            "log.dirs": str(node.dir / "data"),
            "metadata.log.dir": str(node.metadata_dir),
            "offsets.topic.replication.factor": replication,
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
            "log.cleaner.enable": "false",
        }
        if node.is_broker:
            props["advertised.listeners"] = ",".join(
                x for x in listeners if not x.startswith("CONTROLLER://"))
            props["inter.broker.listener.name"] = "PLAINTEXT"
        if self.dynamic_quorum:
            props["controller.quorum.bootstrap.servers"] = self.controller_bootstrap
        else:
            props["controller.quorum.voters"] = self.controller_quorum
        props.update(self.extra_config)
        props.update(self.node_config.get(node.node_id, {}))
        return props

    def _write_properties(self, node: KafkaNode) -> None:
        node.dir.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{k}={v}\n" for k, v in self._server_properties(node).items())
        node.properties_file.write_text(text)

    def _format_args(self, node: KafkaNode) -> "list[str]":
        args = ["format", "-t", self.cluster_id, "-c", str(node.properties_file)]
        if self.release_version:
            args += ["--release-version", self.release_version]
        if self.dynamic_quorum:
            if node.is_controller:
                initial = ",".join(
                    f"{n.node_id}@127.0.0.1:{n.controller_port}:{n.directory_id}"
                    for n in self.nodes.values() if n.is_controller)
                args += ["--initial-controllers", initial]
            else:
                args += ["--no-initial-controllers"]
        return args

    def _format(self, node: KafkaNode) -> None:
        """Kafka's StorageTool formats the node's storage, in the tools JVM
        (one JVM for every node's format and the tools run later)."""
        code, out, err = self.tools().run("kafka.tools.StorageTool", self._format_args(node),
                                          timeout=120)
        if code != 0:
            raise RuntimeError(
                f"Kafka {self.version} StorageTool format failed for node "
                f"{node.node_id} ({node.properties_file}):\n{out}{err}")

    # -- life cycle ---------------------------------------------------------------

    def __enter__(self) -> "KafkaCluster":
        SLOT.take()
        ACTIVE.append(self)
        try:
            self.started_at = time.monotonic()
            for node in self.nodes.values():
                self._write_properties(node)
                self._format(node)
            for node_id in self.nodes:
                self.start(node_id, wait=False)
            self.wait_ready()
        except BaseException:
            self._print_tails()
            self.close()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self._print_tails()
        self.close()

    def close(self) -> None:
        """Stop every JVM (the tools', then brokers, then controllers; or
        kill them, see ``stop_cleanly``), forget the cluster."""
        self.close_tools()
        brokers_first = sorted(self.nodes.values(), key=lambda n: n.is_controller)
        for node in brokers_first:
            if not self.stop_cleanly:
                self.kill(node.node_id)
            elif node.running():
                self.stop(node.node_id)
        if self in ACTIVE:
            ACTIVE.remove(self)
            SLOT.give()

    def tools(self) -> "ToolJvm | None":
        """The JVM that runs Kafka's command-line tools against this cluster
        (tool_jvm.py), started at first use, while the cluster is up; None
        once it is closed."""
        if self not in ACTIVE:
            return None
        if self._tools is None:
            self._tools = ToolJvm(["-Xmx192m", *JVM_FLAGS, self.log_option,
                                   f"-Dkafka.logs.dir={self.workdir}"],
                                  self.classpath, self.workdir)
        return self._tools

    def close_tools(self) -> None:
        if self._tools is not None:
            self._tools.close()
            self._tools = None

    def _print_tails(self) -> None:
        print(self.log_tails(), file=sys.stderr)

    def start(self, node_id: int, wait: bool = True) -> None:
        """Start node ``node_id``'s JVM (formatted already); wait until it listens."""
        node = self.nodes[node_id]
        if node.running():
            return
        heap = CONTROLLER_HEAP if node.roles == ["controller"] else BROKER_HEAP
        cmd = ["java", heap, *JVM_FLAGS, self.log_option,
               f"-Dkafka.logs.dir={node.dir}", "-cp", self.classpath,
               "kafka.Kafka", str(node.properties_file)]
        with open(node.dir / "stdout.log", "ab") as out:
            node.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=node.dir)
        if wait:
            self.wait_ready()

    def stop(self, node_id: int, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM node ``node_id`` and wait; SIGKILL it after ``timeout``."""
        node = self.nodes[node_id]
        if not node.running():
            return
        node.process.send_signal(signal.SIGTERM)
        try:
            node.process.wait(timeout)
        except subprocess.TimeoutExpired:
            print(f"Kafka {self.version} node {node_id} ignored SIGTERM for "
                  f"{timeout:.0f} s; killing it", file=sys.stderr)
            self.kill(node_id)

    def kill(self, node_id: int) -> None:
        """SIGKILL node ``node_id`` (no clean shutdown) and reap it."""
        node = self.nodes[node_id]
        if node.process is not None and node.process.poll() is None:
            node.process.kill()
            node.process.wait()

    # -- readiness ------------------------------------------------------------------

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Until every running node listens, and every running broker is
        registered and unfenced with the quorum's leader."""
        deadline = time.monotonic() + timeout
        for node in self.nodes.values():
            if node.process is None:
                continue
            for port in (node.controller_port, node.broker_port):
                if port is not None:
                    self._wait_listening(node, port, deadline)
        self._wait_brokers(deadline)

    def _check_alive(self, node: KafkaNode) -> None:
        if node.process is not None and node.process.poll() is not None:
            raise NodeExited(
                f"Kafka {self.version} node {node.node_id} exited with status "
                f"{node.process.returncode}; see {node.dir}/server.log; its last "
                f"errors: {self.last_errors(node.node_id)}")

    def last_errors(self, node_id: int, count: int = 6) -> str:
        """The node's last log lines that say why it stopped (FATAL and ERROR
        lines, exceptions, the JVM's own complaints), for a one-line report."""
        lines = [line.strip() for line in self.logs(node_id).splitlines()
                 if any(word in line for word in ("FATAL", "ERROR", "Exception", "Error:"))]
        return " | ".join(lines[-count:]) or "none logged"

    def _wait_listening(self, node: KafkaNode, port: int, deadline: float) -> None:
        while True:
            self._check_alive(node)
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka {self.version} node {node.node_id} "
                                   f"does not listen on 127.0.0.1:{port}")
            time.sleep(0.2)

    def running_broker_ids(self) -> "list[int]":
        return [n.node_id for n in self.nodes.values() if n.is_broker and n.running()]

    def _wait_brokers(self, deadline: float) -> None:
        expected = set(self.running_broker_ids())
        if not expected:
            return
        seen: "set[int]" = set()
        while True:
            for node_id in expected:
                self._check_alive(self.nodes[node_id])
            seen = self._unfenced_brokers()
            if expected <= seen:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka {self.version}: brokers {sorted(expected)} "
                                   f"not all registered and unfenced (saw {sorted(seen)})")
            time.sleep(0.5)

    def _unfenced_brokers(self) -> "set[int]":
        """Broker ids registered and unfenced, as a running broker sees them."""
        from .admin import admin_client, unfenced_broker_ids

        running = ",".join(f"127.0.0.1:{self.nodes[i].broker_port}"
                           for i in self.running_broker_ids())
        try:
            admin = admin_client(running, timeout_ms=5000)
        except Exception:  # noqa: BLE001 - not up yet: try again
            return set()
        try:
            return unfenced_broker_ids(admin)
        except Exception:  # noqa: BLE001
            return set()
        finally:
            admin.close()

    def elapsed(self) -> float:
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at
