"""What the live-mode tests on real Kafka share: running metashell in a
process of its own, and secured controller listeners for ``SECURED``
releases.

A secured cluster's controllers listen on three controller listeners:

- ``CONTROLLER`` (PLAINTEXT, the quorum's own, first in controller.listener.names),
- ``SASLCTL`` (SASL_SSL with SCRAM-SHA-512 and PLAIN),
- ``MTLSCTL`` (SSL with ``ssl.client.auth=required``),

with ``StandardAuthorizer``: the principals metashell uses get ClusterAction
and Describe on the Cluster through ACLs, the user ``nobody`` gets nothing.
Certificates are made with trustme (PEM stores on both sides).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .admin import admin_client
from .cluster import KafkaCluster, free_port

REPO = Path(__file__).resolve().parents[2]
SECURED = ("3.9.2", "4.4.0")        # one 3.x and one 4.x release
USERS = {"scramuser": "scram-secret", "nobody": "nobody-secret"}


def metashell_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def live(controllers: str, *words, config: "Path | None" = None,
         timeout: str = "20") -> "tuple[int, str, str, float]":
    """``kafka-metadata-shell -C controllers [-c config] WORDS`` in a process
    of its own: (status, stdout, stderr, seconds)."""
    args = [sys.executable, "-m", "metashell.cli", "-C", controllers, "--timeout", timeout]
    if config is not None:
        args += ["-c", str(config)]
    started = time.monotonic()
    p = subprocess.run(args + list(words), cwd=REPO, env=metashell_env(), capture_output=True,
                       text=True, timeout=90)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - started


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


def secured_config(certs: Certificates) -> dict:
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


def secure(cluster: KafkaCluster, certs: Certificates) -> Secured:
    """Give each controller of ``cluster`` (not started yet) its SASLCTL and
    MTLSCTL listeners; the ``-C`` lists of both."""
    sasl, mtls = [], []
    for node_id in cluster.controller_ids:
        node = cluster.nodes[node_id]
        ports = (free_port(cluster.ports), free_port(cluster.ports))
        cluster.node_config[node_id] = {"listeners": (
            f"CONTROLLER://127.0.0.1:{node.controller_port},"
            f"SASLCTL://127.0.0.1:{ports[0]},MTLSCTL://127.0.0.1:{ports[1]}")}
        sasl.append(f"{node_id}@127.0.0.1:{ports[0]}")
        mtls.append(f"127.0.0.1:{ports[1]}")
    return Secured(cluster, certs, ",".join(sasl), ",".join(mtls))


def grant(cluster: KafkaCluster) -> None:
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
