"""End-to-end: the live observer through the fake quorum's secured
listeners, configured the way a user does it, with a ``-c`` properties
file read by ``load_client_config``: SASL PLAIN and SCRAM, TLS with test
certificates (trustme), hostname checks, client certificates. Failures are
one-line ``LiveError``s that never show a secret."""

from __future__ import annotations

import time

import pytest

from tests.support.fake_kraft import FakeQuorum, Listener
from tests.support.fake_kraft_follow import Follow, live_config
from tests.support.fake_kraft_security import TlsCertificates
from metashell.live import LiveError, load_client_config
from tests.support.records import feature, topic

SECRET = "pa55-w0rd-s3cret"
LOGIN = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
         "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
         "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


@pytest.fixture
def run(tmp_path):
    """run(listener, properties) -> the finished-or-following Follow."""
    made = []

    def start(listener: Listener, props: dict, *, timeout=3.0):
        q = FakeQuorum(3, listener=listener)
        q.append([feature("metadata.version", 7)])
        q.append([topic("secure", "AAAAAAAAAAAAAAAAAAAAAg")], commit=True)
        q.start()
        path = tmp_path / "client.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        f = Follow(live_config(q, security=load_client_config(path), timeout=timeout))
        made.append((q, f))
        f.wait(lambda f: f.following() or f.finished, timeout + 10)
        return q, f

    yield start
    for q, f in made:
        assert f.close() < 3
        q.stop()
        assert not [e for n in q.nodes.values() for e in n.errors]


def sasl(protocol, mechanism, password=SECRET, **extra):
    return {"security.protocol": protocol, "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'{LOGIN[mechanism]} required username="alice" password="{password}";',
            **extra}


def users():
    return {"alice": SECRET}


def failed(f) -> str:
    assert f.finished and isinstance(f.error, LiveError), (f.error, f.statuses[-1:])
    message = str(f.error)
    assert "\n" not in message and SECRET not in message
    return message


def followed(q, f):
    assert f.following(), (f.error, f.statuses[-1:])
    assert f.committed_offset == q.log.end_offset
    assert all(SECRET not in (s.detail or "") for s in f.statuses)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_plaintext(run, mechanism):
    q, f = run(Listener("SASL_PLAINTEXT", users=users()), sasl("SASL_PLAINTEXT", mechanism))
    followed(q, f)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_sasl_wrong_password_is_an_authentication_failure(run, mechanism):
    _q, f = run(Listener("SASL_PLAINTEXT", users={"alice": "other"}), sasl("SASL_PLAINTEXT", mechanism))
    assert "authenticat" in failed(f).lower()


def test_sasl_mechanism_the_listener_does_not_enable(run):
    _q, f = run(Listener("SASL_PLAINTEXT", users=users(), mechanisms=("SCRAM-SHA-512",)),
                sasl("SASL_PLAINTEXT", "PLAIN"))
    message = failed(f)
    assert "PLAIN" in message


def test_sasl_ssl_with_scram_sha_512(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    q, f = run(Listener("SASL_SSL", users=users(), tls=certs.server_context()),
               sasl("SASL_SSL", "SCRAM-SHA-512", **{"ssl.truststore.type": "PEM",
                                                     "ssl.truststore.location": certs.ca_pem}))
    followed(q, f)


def test_ssl_hostname_check_failure_says_which_check(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"), server_names=("controller.example",))
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
             "ssl.truststore.location": certs.ca_pem}
    _q, f = run(Listener("SSL", tls=certs.server_context()), props)
    assert "hostname" in failed(f).lower()


def test_ssl_hostname_check_can_be_turned_off_as_in_kafka(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"), server_names=("controller.example",))
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
             "ssl.truststore.location": certs.ca_pem, "ssl.endpoint.identification.algorithm": ""}
    q, f = run(Listener("SSL", tls=certs.server_context()), props)
    followed(q, f)


def test_ssl_untrusted_server_certificate(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    other = TlsCertificates(str(tmp_path / "other"))
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
             "ssl.truststore.location": other.ca_pem}
    _q, f = run(Listener("SSL", tls=certs.server_context()), props)
    assert "certificate" in failed(f).lower()


def test_ssl_client_certificate_from_pem(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
             "ssl.truststore.location": certs.ca_pem, "ssl.keystore.type": "PEM",
             "ssl.keystore.location": certs.client_pem}
    q, f = run(Listener("SSL", tls=certs.server_context(require_client_cert=True)), props)
    followed(q, f)


def test_ssl_client_certificate_from_pkcs12(run, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography import x509
    certs = TlsCertificates(str(tmp_path / "certs"))
    key = serialization.load_pem_private_key(certs.client.private_key_pem.bytes(), None)
    cert = x509.load_pem_x509_certificate(certs.client.cert_chain_pems[0].bytes())
    store = tmp_path / "client.p12"
    store.write_bytes(pkcs12.serialize_key_and_certificates(
        b"client", key, cert, None, serialization.BestAvailableEncryption(SECRET.encode())))
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
             "ssl.truststore.location": certs.ca_pem, "ssl.keystore.type": "PKCS12",
             "ssl.keystore.location": str(store), "ssl.keystore.password": SECRET}
    q, f = run(Listener("SSL", tls=certs.server_context(require_client_cert=True)), props)
    followed(q, f)


def test_ssl_client_certificate_missing(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
             "ssl.truststore.location": certs.ca_pem}
    _q, f = run(Listener("SSL", tls=certs.server_context(require_client_cert=True)), props)
    failed(f)


def test_plaintext_client_against_a_tls_listener_fails_in_time(run, tmp_path):
    certs = TlsCertificates(str(tmp_path / "certs"))
    _q, f = run(Listener("SSL", tls=certs.server_context()), {"security.protocol": "PLAINTEXT"},
                timeout=2.0)
    failed(f)


def test_sasl_session_expiry_is_survived(run):
    # KIP-368: the controller closes a connection whose SASL session expired
    q, f = run(Listener("SASL_PLAINTEXT", users=users(), session_lifetime_ms=300),
               sasl("SASL_PLAINTEXT", "SCRAM-SHA-256"))
    followed(q, f)
    for n in range(4):
        time.sleep(0.4)              # the behaviour: the 300 ms SASL session expires each time
        q.append([topic(f"late{n}", f"AAAAAAAAAAAAAAAAAAAAB{'AQgw'[n]}")],
                 commit=True)
    assert f.wait(lambda f: f.committed_offset == q.log.end_offset, 15), (f.error, f.statuses[-1:])
    assert f.error is None
    assert sum(1 for k, _ in q.nodes[1].requests if k == 17) >= 2   # it did log in again
