"""Live mode against secured controller listeners of a real quorum, on one
3.x and one 4.x release (those of ``SECURED`` that ``METASHELL_KAFKA_VERSIONS``
selects): every controller listens on three controller listeners,

- ``CONTROLLER`` (PLAINTEXT, the quorum's own, first in controller.listener.names),
- ``SASLCTL`` (SASL_SSL with SCRAM-SHA-512 and PLAIN),
- ``MTLSCTL`` (SSL with ``ssl.client.auth=required``),

with ``StandardAuthorizer``: the principals metashell uses get ClusterAction
and Describe on the Cluster through ACLs, one user gets nothing. Certificates
are made here with trustme (PEM stores on both sides).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .admin import admin_client
from .cluster import KafkaCluster, free_port
from .jars import selected_versions
from .test_live_quorum import REPO, _env

SECURED = ("3.9.2", "4.4.0")
VERSIONS = [v for v in SECURED if v in selected_versions()]
ACL_WAIT_S = 30
USERS = {"scramuser": "scram-secret", "nobody": "nobody-secret"}


class Certificates:
    """A CA, the controllers' certificate (127.0.0.1) and a client's, as PEM files."""

    def __init__(self, directory: Path):
        import trustme
        from cryptography.hazmat.primitives import serialization
        ca = trustme.CA(key_type=trustme.KeyType.RSA)
        server = ca.issue_cert("127.0.0.1", "localhost", key_type=trustme.KeyType.RSA)
        client = ca.issue_cert("metashell.example", common_name="metashell-mtls",
                               key_type=trustme.KeyType.RSA)
        directory.mkdir(parents=True, exist_ok=True)
        self.ca = directory / "ca.pem"
        self.ca.write_bytes(ca.cert_pem.bytes())

        def keystore(leaf, name: str) -> Path:
            # Kafka's PEM keystore wants the key as PKCS#8
            key = serialization.load_pem_private_key(leaf.private_key_pem.bytes(), None)
            pkcs8 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())
            path = directory / name
            path.write_bytes(pkcs8 + b"".join(c.bytes() for c in leaf.cert_chain_pems))
            return path
        self.server = keystore(server, "server.pem")
        self.client = keystore(client, "client.pem")


def _broker_config(certs: Certificates) -> dict:
    sasl = "listener.name.saslctl."
    mtls = "listener.name.mtlsctl."
    return {
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                                          "SASLCTL:SASL_SSL,MTLSCTL:SSL",
        "controller.listener.names": "CONTROLLER,SASLCTL,MTLSCTL",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",     # the nodes themselves, over PLAINTEXT
        sasl + "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        sasl + "scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        sasl + "plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required '
            'user_plainuser="plain-secret";',
        sasl + "ssl.keystore.type": "PEM",
        sasl + "ssl.keystore.location": str(certs.server),
        mtls + "ssl.keystore.type": "PEM",
        mtls + "ssl.keystore.location": str(certs.server),
        mtls + "ssl.truststore.type": "PEM",
        mtls + "ssl.truststore.location": str(certs.ca),
        mtls + "ssl.client.auth": "required",
        mtls + "ssl.principal.mapping.rules": "RULE:^CN=([^,]*).*$/$1/,DEFAULT",
    }


class Secured:
    """The cluster and the secured listeners' ``-C`` lists."""

    def __init__(self, cluster: KafkaCluster, certs: Certificates, sasl: str, mtls: str):
        self.cluster, self.certs, self.sasl, self.mtls = cluster, certs, sasl, mtls


@pytest.fixture(scope="module", params=VERSIONS or [None], ids=VERSIONS or ["none"])
def secured(request, tmp_path_factory):
    if request.param is None:
        pytest.skip(f"METASHELL_KAFKA_VERSIONS selects none of {', '.join(SECURED)}")
    workdir = tmp_path_factory.mktemp(f"secured-{request.param}")
    certs = Certificates(workdir / "certs")
    cluster = KafkaCluster(request.param, controllers=3, brokers=1, workdir=workdir / "cluster",
                           extra_config=_broker_config(certs))
    taken: set[int] = set()
    ports = {}
    for node_id in cluster.controller_ids:
        node = cluster.nodes[node_id]
        ports[node_id] = (free_port(taken), free_port(taken))
        cluster.node_config[node_id] = {"listeners": (
            f"CONTROLLER://127.0.0.1:{node.controller_port},"
            f"SASLCTL://127.0.0.1:{ports[node_id][0]},MTLSCTL://127.0.0.1:{ports[node_id][1]}")}
    with cluster:
        _grant(cluster)
        yield Secured(cluster, certs, ",".join(f"{i}@127.0.0.1:{p[0]}" for i, p in ports.items()),
                      ",".join(f"127.0.0.1:{p[1]}" for p in ports.values()))


def _grant(cluster: KafkaCluster) -> None:
    """SCRAM users, and ClusterAction + Describe on the Cluster for every
    principal metashell uses but ``nobody``."""
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType,
                             ScramMechanism, UserScramCredentialUpsertion)
    admin = admin_client(cluster.bootstrap_servers)
    try:
        result = admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion(user, ScramMechanism.SCRAM_SHA_512, password)
            for user, password in USERS.items()])
        assert not any(result.values()), result
        acls = [ACL(f"User:{principal}", "*", operation, ACLPermissionType.ALLOW,
                    ResourcePattern(ResourceType.CLUSTER, "kafka-cluster"))
                for principal in ("scramuser", "plainuser", "metashell-mtls")
                for operation in (ACLOperation.CLUSTER_ACTION, ACLOperation.DESCRIBE)]
        result = admin.create_acls(acls)
        assert not result["failed"], result
    finally:
        admin.close()


def client_properties(path: Path, **props) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def live(controllers: str, config: Path | None, *words, timeout: str = "20") -> tuple[int, str, str, float]:
    args = [sys.executable, "-m", "metashell.cli", "-C", controllers, "--timeout", timeout]
    if config is not None:
        args += ["-c", str(config)]
    started = time.monotonic()
    p = subprocess.run(args + list(words), cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - started


def until_granted(controllers: str, config: Path, *words) -> tuple[int, str, str]:
    """Run until the ACLs made through the broker reached the controllers."""
    deadline = time.monotonic() + ACL_WAIT_S
    while True:
        status, out, err, _ = live(controllers, config, *words)
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
    status, out, err, elapsed = live(secured.sasl, config, "summary")
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert "Fetch refused with CLUSTER_AUTHORIZATION_FAILED: the principal needs ClusterAction on " \
           "the Cluster resource" in err
    assert "secret" not in err and elapsed < 10


def test_a_broker_listener_is_named_as_such(secured):
    status, out, err, elapsed = live(secured.cluster.bootstrap_servers, None, "summary")
    assert status == 1 and err.count("\n") == 1, err
    assert "this is a broker listener" in err and elapsed < 10


def test_tls_against_plaintext_and_the_reverse_say_protocol_mismatch(secured, tmp_path):
    tls = client_properties(tmp_path / "tls.properties", **{
        "security.protocol": "SSL", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": secured.certs.ca})
    status, _, err, elapsed = live(secured.cluster.controller_quorum, tls, "summary")
    assert status == 1 and "protocol mismatch?" in err and elapsed < 5, err
    status, _, err, elapsed = live(secured.mtls, None, "summary")
    assert status == 1 and "protocol mismatch?" in err and elapsed < 5, err
