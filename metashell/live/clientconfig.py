"""Client security settings from a ``-c`` file of Java-style properties.

The keys and their meaning are Kafka's client ones (``security.protocol``,
``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.*``), so the file a team
already uses for ``kafka-metadata-quorum --command-config`` works here.
Stores are read and checked while loading, so a bad file fails before any
connection with ``FILE:LINE: ...``. Secrets (passwords, private keys, the
JAAS line) never appear in a message or a ``repr``: errors name the key,
never its value.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import MetashellError
from ..loader.properties import PropertiesError, numbered_properties

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_LOGIN_MODULES = {"PLAIN": "PlainLoginModule", "SCRAM-SHA-256": "ScramLoginModule",
                  "SCRAM-SHA-512": "ScramLoginModule"}
_JAAS = re.compile(r"\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)"
                   r"(?P<options>.*?);?\s*")
_JAAS_OPTION = re.compile(r'\s*(?P<key>[\w.-]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s";]+))')


@dataclass(frozen=True, repr=False)
class SecurityConfig:
    """How to reach the controllers: the protocol, SASL credentials and the
    TLS context (already loaded). ``repr`` shows no secret."""

    protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, compare=False)
    ssl_context: ssl.SSLContext | None = field(default=None, compare=False)

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    def __repr__(self) -> str:
        sasl = f", sasl_mechanism={self.sasl_mechanism!r}, username={self.username!r}" if self.uses_sasl else ""
        tls = ", check_hostname=" + str(self.ssl_context.check_hostname) if self.ssl_context else ""
        return f"SecurityConfig(protocol={self.protocol!r}{sasl}{tls})"


class _Props:
    """The file's properties with the line each came from, for messages."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.values: dict[str, str] = {}
        self.lines: dict[str, int] = {}
        try:
            for number, key, value in numbered_properties(text):
                self.values[key] = value
                self.lines[key] = number
        except PropertiesError as e:
            raise MetashellError(f"{path}:{e.line}: {e.message}") from None

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.values.get(key)
        return default if value is None else value.strip()

    def error(self, key: str, message: str) -> MetashellError:
        line = self.lines.get(key)
        where = f"{self.path}:{line}" if line else str(self.path)
        return MetashellError(f"{where}: {key}: {message}")

    def choice(self, key: str, allowed: tuple[str, ...], default: str | None) -> str | None:
        value = self.get(key, default)
        if value is not None and value.upper() not in allowed:
            raise self.error(key, f"{value!r} is not supported (supported: {', '.join(allowed)})")
        return None if value is None else value.upper()

    def read(self, key: str) -> bytes:
        name = self.get(key)
        try:
            return Path(name).expanduser().read_bytes()
        except OSError as e:
            raise self.error(key, f"cannot read {name}: {e.strerror or e}") from None


def load_client_config(path) -> SecurityConfig:
    """Read a ``-c`` properties file into a :class:`SecurityConfig`."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("latin-1")
    except OSError as e:
        raise MetashellError(f"{path}: cannot read the client config: {e.strerror or e}") from None
    props = _Props(path, text)
    protocol = props.choice("security.protocol", PROTOCOLS, "PLAINTEXT")
    mechanism = username = password = None
    if protocol.startswith("SASL_"):
        mechanism = props.choice("sasl.mechanism", MECHANISMS, None)
        if mechanism is None:
            if "sasl.mechanism" in props.values:
                raise props.error("sasl.mechanism", "empty")
            raise props.error("security.protocol", f"{protocol} needs sasl.mechanism "
                              f"({', '.join(MECHANISMS)}; GSSAPI and OAUTHBEARER are not supported)")
        username, password = _jaas_credentials(props, mechanism)
    context = _ssl_context(props) if protocol in ("SSL", "SASL_SSL") else None
    return SecurityConfig(protocol, mechanism, username, password, context)


def _jaas_credentials(props: _Props, mechanism: str) -> tuple[str, str]:
    key = "sasl.jaas.config"
    text = props.get(key)
    if not text:
        raise props.error("sasl.mechanism", f"{mechanism} needs {key} with a username and a password")
    m = _JAAS.fullmatch(text)
    if m is None:
        raise props.error(key, 'expected "<LoginModule class> required username="..." password="...";"')
    module = m["module"].rsplit(".", 1)[-1]
    if module != _LOGIN_MODULES[mechanism]:
        raise props.error(key, f"{module} does not match sasl.mechanism={mechanism} "
                               f"(expected {_LOGIN_MODULES[mechanism]})")
    options: dict[str, str] = {}
    rest = m["options"]
    pos = 0
    while rest[pos:].strip():
        o = _JAAS_OPTION.match(rest, pos)
        if o is None:
            raise props.error(key, "malformed option list (expected name=\"value\" pairs)")
        quoted = o["quoted"]
        options[o["key"]] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else o["bare"]
        pos = o.end()
    for name in ("username", "password"):
        if not options.get(name):
            raise props.error(key, f"no {name} option")
    return options["username"], options["password"]


def _ssl_context(props: _Props) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)   # certificate and hostname checks on
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https")
    if algorithm == "":
        context.check_hostname = False
    elif algorithm.lower() != "https":
        raise props.error("ssl.endpoint.identification.algorithm",
                          f"{algorithm!r} is not supported (https, or empty to turn the check off)")
    _load_trust(props, context)
    _load_key(props, context)
    return context


def _store_type(props: _Props, key: str, allowed: tuple[str, ...]) -> str:
    store = props.get(key, "JKS").upper()
    if store == "JKS":
        raise props.error(key if key in props.values else key.replace(".type", ".location"),
                          "JKS stores are not supported: convert it to PKCS12 or PEM "
                          "(keytool -importkeystore -deststoretype PKCS12) and set " + key)
    if store not in allowed:
        raise props.error(key, f"{store!r} is not supported (supported: {', '.join(allowed)})")
    return store


def _load_trust(props: _Props, context: ssl.SSLContext) -> None:
    inline = props.get("ssl.truststore.certificates")
    location = props.get("ssl.truststore.location")
    if not inline and not location:
        context.load_default_certs()   # the system's trusted roots
        return
    store = _store_type(props, "ssl.truststore.type", ("PEM", "PKCS12"))
    key = "ssl.truststore.certificates" if inline else "ssl.truststore.location"
    try:
        if store == "PKCS12":
            _key, cert, extra = _pkcs12(props, key, "ssl.truststore.password")
            pem = "".join(_pem_cert(c) for c in ([cert] if cert else []) + list(extra))
            context.load_verify_locations(cadata=pem)
        else:
            pem = inline if inline else props.read(key).decode("ascii", "replace")
            context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as e:
        raise props.error(key, f"no usable PEM certificates ({_reason(e)})") from None


def _load_key(props: _Props, context: ssl.SSLContext) -> None:
    location = props.get("ssl.keystore.location")
    chain = props.get("ssl.keystore.certificate.chain")
    if not location and not chain:
        return
    store = _store_type(props, "ssl.keystore.type", ("PEM", "PKCS12"))
    key_password = props.get("ssl.key.password") or None
    if store == "PKCS12":
        if not location:
            raise props.error("ssl.keystore.type", "PKCS12 needs ssl.keystore.location")
        private, cert, extra = _pkcs12(props, "ssl.keystore.location", "ssl.keystore.password")
        if private is None or cert is None:
            raise props.error("ssl.keystore.location", "the PKCS12 store holds no private key and certificate")
        from cryptography.hazmat.primitives import serialization
        key_pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()).decode("ascii")
        chain_pem = "".join(_pem_cert(c) for c in [cert, *extra])
        what, key_password = "ssl.keystore.location", None
    elif chain:
        key_pem = props.get("ssl.keystore.key")
        if not key_pem:
            raise props.error("ssl.keystore.certificate.chain", "needs ssl.keystore.key as well")
        chain_pem, what = chain, "ssl.keystore.certificate.chain"
    else:
        # one PEM file holding the private key and the certificate chain
        key_pem = chain_pem = props.read("ssl.keystore.location").decode("ascii", "replace")
        what = "ssl.keystore.location"
    try:
        with _private_file(chain_pem + "\n" + key_pem) as name:
            context.load_cert_chain(name, password=key_password)
    except (ssl.SSLError, ValueError) as e:
        raise props.error(what, f"cannot load the client certificate and key ({_reason(e)}; "
                                "check ssl.key.password)") from None


def _pkcs12(props: _Props, key: str, password_key: str):
    from cryptography.hazmat.primitives.serialization import pkcs12
    data = props.read(key)
    password = props.get(password_key)
    try:
        return pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        raise props.error(key, f"cannot open the PKCS12 store (not PKCS12, or a wrong {password_key})") from None


def _pem_cert(cert) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding
    return cert.public_bytes(Encoding.PEM).decode("ascii")


def _reason(e: Exception) -> str:
    return getattr(e, "reason", None) or str(e).split(":")[0] or type(e).__name__


@contextmanager
def _private_file(text: str):
    """A file name ``ssl`` can load a key from, readable by nobody else and
    gone afterwards: an anonymous memory file where Linux has one, else a
    0600 file in a private temporary directory."""
    data = text.encode("ascii", "replace")
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("metashell-client-key", os.MFD_CLOEXEC)
        try:
            os.write(fd, data)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="metashell-") as tmp:
        name = os.path.join(tmp, "client.pem")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        yield name
