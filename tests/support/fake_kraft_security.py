"""Server side of the fake controller listener's security: SASL PLAIN and
SCRAM-SHA-256/512, and TLS with test certificates.

Written from the RFCs (RFC 4616 PLAIN, RFC 5802 SCRAM, RFC 7677
SCRAM-SHA-256; SHA-512 is the same exchange with another hash, as Kafka's
ScramMechanism does), not from the client under test, so that a mistake in
the client's SASL code shows up as a failed authentication. Kafka's own
behaviour mirrored here (kraft-live-protocol.md section 2.3 and 1.8 SASL):
after a failed SaslAuthenticate the server answers with error 58 and then
closes the connection; SCRAM iteration counts are at least 4096.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import ssl
from dataclasses import dataclass, field

import trustme

SCRAM_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
MECHANISMS = ("PLAIN", *SCRAM_HASHES)
SCRAM_ITERATIONS = 4096  # Kafka's minimum for both SCRAM mechanisms


class AuthFailed(Exception):
    """The client's credentials (or its SASL messages) were refused."""


class PlainServer:
    """RFC 4616: one message ``authzid NUL authcid NUL passwd``, empty reply."""

    def __init__(self, users: dict[str, str]):
        self.users = users
        self.done = False
        self.principal: str | None = None

    def step(self, message: bytes) -> bytes:
        parts = message.split(b"\0")
        if len(parts) != 3:
            raise AuthFailed("Invalid SASL/PLAIN response: expected 3 tokens")
        authzid, user, password = (p.decode("utf-8") for p in parts)
        if authzid and authzid != user:
            raise AuthFailed("Authentication failed: Client requested an authorization id that "
                             "is different from username")
        if self.users.get(user) != password:
            raise AuthFailed("Authentication failed: Invalid username or password")
        self.done, self.principal = True, user
        return b""


class ScramServer:
    """RFC 5802 server: client-first -> server-first, client-final ->
    server-final, with the client proof checked against the stored key."""

    def __init__(self, mechanism: str, users: dict[str, str]):
        self.hash = SCRAM_HASHES[mechanism]
        self.mechanism = mechanism
        self.users = users
        self.done = False
        self.principal: str | None = None
        self._state = "first"

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self.hash).digest()

    def step(self, message: bytes) -> bytes:
        text = message.decode("utf-8")
        if self._state == "first":
            return self._first(text)
        if self._state == "final":
            return self._final(text)
        raise AuthFailed("Unexpected SCRAM message after the exchange completed")

    def _first(self, text: str) -> bytes:
        # gs2-header "n,," (no channel binding), then client-first-message-bare
        if not text.startswith(("n,", "y,")):
            raise AuthFailed("Invalid SCRAM client first message: bad GS2 header")
        bare = text.split(",", 2)[2]
        attrs = dict(a.split("=", 1) for a in bare.split(",") if "=" in a)
        user = attrs.get("n", "").replace("=2C", ",").replace("=3D", "=")
        if "r" not in attrs or not user:
            raise AuthFailed("Invalid SCRAM client first message: no user or nonce")
        self.user, self.client_first_bare = user, bare
        self.salt = os.urandom(16)
        self.nonce = attrs["r"] + base64.b64encode(os.urandom(18)).decode()
        self.server_first = (f"r={self.nonce},s={base64.b64encode(self.salt).decode()},"
                             f"i={SCRAM_ITERATIONS}")
        self._state = "final"
        return self.server_first.encode()

    def _final(self, text: str) -> bytes:
        without_proof, _, proof = text.rpartition(",p=")
        attrs = dict(a.split("=", 1) for a in without_proof.split(",") if "=" in a)
        if attrs.get("r") != self.nonce:
            raise AuthFailed("Invalid SCRAM client final message: nonce mismatch")
        password = self.users.get(self.user)
        if password is None:
            raise AuthFailed(self._invalid())
        salted = hashlib.pbkdf2_hmac(self.hash().name, password.encode(), self.salt,
                                     SCRAM_ITERATIONS)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = self.hash(client_key).digest()
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        signature = self._hmac(stored_key, auth_message)
        try:
            given = base64.b64decode(proof, validate=True)
        except ValueError:
            raise AuthFailed("Invalid SCRAM client final message: bad proof") from None
        recovered = bytes(a ^ b for a, b in zip(given, signature))
        if len(given) != len(signature) or self.hash(recovered).digest() != stored_key:
            raise AuthFailed(self._invalid())
        server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        self.done, self.principal, self._state = True, self.user, "done"
        return b"v=" + base64.b64encode(server_signature)

    def _invalid(self) -> str:
        return ("Authentication failed during authentication due to invalid credentials with "
                f"SASL mechanism {self.mechanism}")


def sasl_server(mechanism: str, users: dict[str, str]):
    return PlainServer(users) if mechanism == "PLAIN" else ScramServer(mechanism, users)


@dataclass
class TlsCertificates:
    """A throw-away CA (trustme) with a server certificate for 127.0.0.1 and
    localhost, a client certificate, and their PEM files under ``directory``
    for the client's ``-c`` properties."""

    directory: str
    server_names: tuple = ("127.0.0.1", "localhost")
    ca: trustme.CA = field(default_factory=trustme.CA)

    def __post_init__(self):
        os.makedirs(self.directory, exist_ok=True)
        self.server = self.ca.issue_cert(*self.server_names)
        self.client = self.ca.issue_cert("metashell-client@example.com",
                                         common_name="metashell-client")
        self.ca_pem = os.path.join(self.directory, "ca.pem")
        self.ca.cert_pem.write_to_path(self.ca_pem)
        self.client_pem = os.path.join(self.directory, "client.pem")   # key + chain, one file
        with open(self.client_pem, "wb") as f:
            f.write(self.client.private_key_pem.bytes())
            for blob in self.client.cert_chain_pems:
                f.write(blob.bytes())
        self.client_cert_pem = os.path.join(self.directory, "client-cert.pem")
        self.client_key_pem = os.path.join(self.directory, "client-key.pem")
        with open(self.client_cert_pem, "wb") as f:
            for blob in self.client.cert_chain_pems:
                f.write(blob.bytes())
        self.client.private_key_pem.write_to_path(self.client_key_pem)

    def server_context(self, require_client_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server.configure_cert(ctx)
        if require_client_cert:   # ssl.client.auth=required
            ctx.verify_mode = ssl.CERT_REQUIRED
            self.ca.configure_trust(ctx)
        return ctx
