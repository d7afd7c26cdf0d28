"""``-C`` controller lists and ``-c`` client security files."""

from __future__ import annotations

import ssl

import pytest
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from metashell.errors import MetashellError, UsageError
from metashell.live import Controller, SecurityConfig, load_client_config, parse_controllers

SECRET = "s3cr3t-Pa55"


# -- -C ---------------------------------------------------------------------

def test_voters_form_with_ids_and_ipv6():
    got = parse_controllers("1@h1:9093, 2@[::1]:9094,3@10.0.0.3:9095")
    assert got == [Controller(1, "h1", 9093), Controller(2, "::1", 9094), Controller(3, "10.0.0.3", 9095)]
    assert [str(c) for c in got] == ["1@h1:9093", "2@[::1]:9094", "3@10.0.0.3:9095"]


def test_bootstrap_servers_form():
    got = parse_controllers("h1:9093,[fe80::1]:9093")
    assert got == [Controller(None, "h1", 9093), Controller(None, "fe80::1", 9093)]
    assert [str(c) for c in got] == ["h1:9093", "[fe80::1]:9093"]


@pytest.mark.parametrize("text, bad", [
    ("h1", "'h1'"), ("h1:0", "'h1:0'"), ("h1:70000", "'h1:70000'"), ("x@h1:9093", "'x@h1:9093'"),
    ("h1:9093,,h2:9093", "''"), ("::1:9093", "'::1:9093'"), (":9093", "':9093'"), ("[h1]:9093", "'[h1]:9093'"),
    ("-1@h:9093", "'-1@h:9093'"), ("h:９０９３", "'h:９０９３'"),
])
def test_bad_items_are_named(text, bad):
    with pytest.raises(UsageError) as e:
        parse_controllers(text)
    assert bad in str(e.value) and "\n" not in str(e.value)


def test_empty_list():
    with pytest.raises(UsageError, match="no controller"):
        parse_controllers(" ")


# -- -c ---------------------------------------------------------------------

def _config(tmp_path, text: str, name="client.properties"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _load_error(path) -> str:
    with pytest.raises(MetashellError) as e:
        load_client_config(path)
    message = str(e.value)
    assert "\n" not in message and SECRET not in message
    return message


def test_default_is_plaintext():
    assert SecurityConfig().protocol == "PLAINTEXT" and not SecurityConfig().uses_tls


def test_sasl_scram_from_jaas(tmp_path):
    path = _config(tmp_path, "# comment\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                             "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
                             f'    username="admin" password="{SECRET}";\n')
    config = load_client_config(path)
    assert (config.protocol, config.sasl_mechanism, config.username, config.password) == (
        "SASL_PLAINTEXT", "SCRAM-SHA-512", "admin", SECRET)
    assert config.uses_sasl and not config.uses_tls
    assert SECRET not in repr(config) and SECRET not in str(config)


def test_plain_with_escaped_quote_in_password(tmp_path):
    path = _config(tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                             "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                             'username="u" password="a\\\\"b";\n')
    assert load_client_config(path).password == 'a"b'


@pytest.mark.parametrize("mechanism", ["GSSAPI", "OAUTHBEARER"])
def test_other_mechanisms_are_not_supported(tmp_path, mechanism):
    path = _config(tmp_path, f"security.protocol=SASL_SSL\n\nsasl.mechanism={mechanism}\n")
    message = _load_error(path)
    assert message.startswith(f"{path}:3: sasl.mechanism") and "not supported" in message


def test_unknown_protocol_names_the_line(tmp_path):
    path = _config(tmp_path, "a=b\nsecurity.protocol=SSLv3\n")
    assert _load_error(path).startswith(f"{path}:2: security.protocol: 'SSLv3' is not supported")


def test_sasl_without_mechanism(tmp_path):
    path = _config(tmp_path, "security.protocol=SASL_SSL\n")
    assert _load_error(path).startswith(f"{path}:1: security.protocol")


def test_malformed_jaas_never_shows_the_secret(tmp_path):
    path = _config(tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                             f'sasl.jaas.config=PlainLoginModule username="u" password="{SECRET}";\n')
    assert _load_error(path).startswith(f"{path}:3: sasl.jaas.config")


def test_jaas_module_must_match_the_mechanism(tmp_path):
    path = _config(tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                             "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                             f'username="u" password="{SECRET}";\n')
    assert "PlainLoginModule" in _load_error(path)


def test_jaas_without_password(tmp_path):
    path = _config(tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                             'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
                             'username="u";\n')
    assert "no password" in _load_error(path)


def test_malformed_escape_names_the_line(tmp_path):
    path = _config(tmp_path, "security.protocol=SSL\nssl.truststore.location=\\u12\n")
    assert _load_error(path).startswith(f"{path}:2:")


def test_missing_file():
    assert "cannot read" in _load_error("/nonexistent/client.properties")


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def client_cert(ca):
    return ca.issue_cert("metashell-client")


def test_ssl_trust_from_pem_file_hostname_check_on(tmp_path, ca):
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    path = _config(tmp_path, f"security.protocol=SSL\nssl.truststore.type=PEM\n"
                             f"ssl.truststore.location={tmp_path / 'ca.pem'}\n")
    config = load_client_config(path)
    assert config.uses_tls and config.ssl_context.check_hostname
    assert config.ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert len(config.ssl_context.get_ca_certs()) == 1


def test_ssl_inline_trust_and_no_hostname_check(tmp_path, ca):
    pem = ca.cert_pem.bytes().decode().strip().replace("\n", "\\n\\\n")
    path = _config(tmp_path, f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates={pem}\n"
                             "ssl.endpoint.identification.algorithm=\n")
    config = load_client_config(path)
    assert not config.ssl_context.check_hostname
    assert len(config.ssl_context.get_ca_certs()) == 1


def test_jks_is_refused_with_advice(tmp_path):
    (tmp_path / "trust.jks").write_bytes(b"\xfe\xed\xfe\xed")
    path = _config(tmp_path, f"security.protocol=SSL\nssl.truststore.location={tmp_path / 'trust.jks'}\n"
                             f"ssl.truststore.password={SECRET}\n")
    message = _load_error(path)
    assert message.startswith(f"{path}:2: ssl.truststore.location") and "PKCS12 or PEM" in message


def test_garbage_pem_trust(tmp_path):
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    path = _config(tmp_path, f"security.protocol=SSL\nssl.truststore.type=PEM\n"
                             f"ssl.truststore.location={tmp_path / 'ca.pem'}\n")
    assert _load_error(path).startswith(f"{path}:3: ssl.truststore.location")


def test_client_pem_keystore_file(tmp_path, client_cert):
    pem = tmp_path / "client.pem"
    client_cert.private_key_and_cert_chain_pem.write_to_path(str(pem))
    path = _config(tmp_path, f"security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location={pem}\n")
    assert load_client_config(path).ssl_context is not None


def test_client_pem_inline_encrypted_key(tmp_path, client_cert):
    key = serialization.load_pem_private_key(client_cert.private_key_pem.bytes(), None)
    encrypted = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(SECRET.encode())).decode()
    chain = "".join(b.bytes().decode() for b in client_cert.cert_chain_pems)

    def one_line(text):
        return text.strip().replace("\n", "\\n")
    text = (f"security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.certificate.chain={one_line(chain)}\n"
            f"ssl.keystore.key={one_line(encrypted)}\n")
    assert load_client_config(_config(tmp_path, text + f"ssl.key.password={SECRET}\n")).ssl_context
    message = _load_error(_config(tmp_path, text + "ssl.key.password=wrong\n", "bad.properties"))
    assert "ssl.keystore.certificate.chain" in message and "-----BEGIN" not in message


def _p12(tmp_path, client_cert, password: str):
    key = serialization.load_pem_private_key(client_cert.private_key_pem.bytes(), None)
    from cryptography import x509
    cert = x509.load_pem_x509_certificate(client_cert.cert_chain_pems[0].bytes())
    data = pkcs12.serialize_key_and_certificates(b"client", key, cert, None,
                                                 serialization.BestAvailableEncryption(password.encode()))
    (tmp_path / "client.p12").write_bytes(data)
    return tmp_path / "client.p12"


def test_client_pkcs12_keystore(tmp_path, client_cert):
    p12 = _p12(tmp_path, client_cert, SECRET)
    text = f"security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location={p12}\n"
    assert load_client_config(_config(tmp_path, text + f"ssl.keystore.password={SECRET}\n")).ssl_context
    message = _load_error(_config(tmp_path, text + "ssl.keystore.password=nope\n", "bad.properties"))
    assert message.startswith(f"{tmp_path / 'bad.properties'}:3: ssl.keystore.location")
    assert "ssl.keystore.password" in message


def test_keystore_without_type_is_jks(tmp_path, client_cert):
    p12 = _p12(tmp_path, client_cert, SECRET)
    path = _config(tmp_path, f"security.protocol=SSL\nssl.keystore.location={p12}\n")
    assert "JKS" in _load_error(path)
