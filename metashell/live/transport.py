"""One blocking connection to one controller listener.

Why our own transport: kafka-python 3.x's connections (``kafka.net``) live
inside its ``KafkaConnectionManager``, which bootstraps with a Metadata
request that controllers do not serve, and its connection class is an
internal API that changes from patch release to patch release. A raft
observer needs much less: one request in flight per connection (a
controller serves a connection serially anyway), a long poll whose
deadline we choose, and a ``close()`` another thread can call to end that
poll at once. That is a small layer over stdlib ``socket`` + ``ssl``
(the TLS context itself is built by :mod:`.clientconfig` with ``ssl``, as
kafka-python's is). kafka-python still does all the encoding and decoding
(:mod:`.protocol`) and the SASL exchanges: its PLAIN and SCRAM mechanism
classes (``kafka.net.sasl``) only turn bytes into bytes, so they fit as is.

Every socket operation runs under a deadline. Problems are raised as
:class:`Unreachable` (this address failed; try another one later) or as
:class:`~metashell.errors.LiveError` (a configuration problem no retry
fixes: TLS, authentication, a broker listener, a controller too old).
"""

from __future__ import annotations

import errno
import itertools
import os
import selectors
import socket
import ssl
import threading
import time

from kafka.net.sasl.plain import SaslMechanismPlain
from kafka.net.sasl.scram import SaslMechanismScram

from ..errors import LiveError
from ..kraft.primitives import INT32, INT32_PAIR
from . import protocol as p
from .addresses import Controller
from .clientconfig import SecurityConfig

_CLOSED = "connection closed by the controller"
_RESET = os.strerror(errno.ECONNRESET)
MAX_FRAME = 128 << 20          # a Fetch answer is at most 8 MiB of records; snapshot chunks are ours to size
_POLL = 0.2                     # how often a connect in progress looks at close()
_NAME_MISMATCH = (62, 64)       # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
# what OpenSSL says when the other end does not speak TLS at all
_NOT_TLS = ("UNEXPECTED_EOF_WHILE_READING", "WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE",
            "PACKET_LENGTH_TOO_LONG", "HTTP_REQUEST")
_TLS_RECORDS = (0x15, 0x16)     # the first byte of a TLS alert or handshake record
_PROBE_S = 2.0                  # at most this long to tell a listener of the other protocol


class Unreachable(Exception):
    """This controller could not be reached or dropped the connection."""


class Connection:
    """A connection to one controller, ready for requests after :meth:`open`
    (TCP, TLS, ApiVersions, SASL). ``versions`` maps api keys to the version
    to use: ``min(ours, theirs)``."""

    def __init__(self, controller: Controller, security: SecurityConfig):
        self.controller = controller
        self.security = security
        self.versions: dict[int, int] = {}
        self._sock: socket.socket | None = None
        self._correlation = itertools.count(1)
        self._closed = threading.Event()

    # -- opening -----------------------------------------------------------

    def open(self, deadline: float) -> "Connection":
        sock = self._connect(deadline)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.security.uses_tls:
            self._sock = self._tls(sock, deadline)
        self._negotiate(deadline)
        if self.security.uses_sasl:
            self._authenticate(deadline)
        return self

    def _connect(self, deadline: float) -> socket.socket:
        """TCP connect, polled in short slices so that :meth:`close` from
        another thread ends it too (a blocking connect cannot be woken)."""
        infos = _resolve(self.controller, deadline)
        reason = "no address"
        for family, kind, proto, _name, sockaddr in infos:
            sock = socket.socket(family, kind, proto)
            self._sock = sock
            sock.setblocking(False)
            code = sock.connect_ex(sockaddr)
            # a selector, not select(): a process with 1024 files open (a script
            # or a Spark executor reading many) has descriptors select() refuses
            with selectors.DefaultSelector() as waiting:
                waiting.register(sock, selectors.EVENT_WRITE)
                while code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY):
                    if self._closed.is_set():
                        raise Unreachable("closed")
                    if waiting.select(min(_POLL, _left(deadline))):
                        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code == 0:
                return sock
            sock.close()
            reason = os.strerror(code)
        raise Unreachable(reason)

    def _tls(self, sock: socket.socket, deadline: float) -> ssl.SSLSocket:
        addr = self.controller
        context = self.security.ssl_context
        try:
            sock.settimeout(_left(deadline))
            return context.wrap_socket(sock, server_hostname=addr.host)
        except ssl.SSLCertVerificationError as e:
            sock.close()
            if e.verify_code in _NAME_MISMATCH:
                raise LiveError(f"{addr}: TLS hostname verification failed: {e.verify_message} "
                                f"(the controller's certificate does not name {addr.host}; "
                                "ssl.endpoint.identification.algorithm= turns this check off)") from None
            raise LiveError(f"{addr}: TLS certificate verification failed: {e.verify_message} "
                            "(is the issuing CA in ssl.truststore.*?)") from None
        except ssl.SSLError as e:
            sock.close()
            reason = e.reason or str(e)
            if not (isinstance(e, ssl.SSLEOFError) or reason in _NOT_TLS):
                raise LiveError(f"{addr}: TLS handshake failed: {reason} "
                                "(is this listener SSL, and does it require a client certificate?)") from None
            self._check_plaintext(deadline, f"closed the connection during the TLS handshake ({reason})")
            raise Unreachable(f"TLS handshake: {reason}") from None
        except ConnectionResetError:
            sock.close()
            self._check_plaintext(deadline, "reset the connection during the TLS handshake")
            raise Unreachable("TLS handshake: connection reset") from None
        except OSError as e:
            sock.close()
            raise Unreachable(f"TLS handshake: {_os_reason(e)}") from None

    # -- a listener of the other security protocol -----------------------------

    def _check_plaintext(self, deadline: float, what: str) -> None:
        """The TLS handshake was cut off: if a plain ApiVersions on a new
        connection is answered, the listener is not SSL, and no retry helps."""
        try:
            with self._probe_socket(deadline) as sock:
                sock.sendall(p.encode_request(p.api_versions_request(0), 0, 1))
                head = _recv_exactly(sock, 8)
        except (OSError, Unreachable):
            return
        size, correlation = INT32_PAIR.unpack(head)
        if correlation == 1 and 6 <= size <= 1 << 20:
            raise LiveError(f"{self.controller}: the listener {what} but answers without TLS: protocol "
                            "mismatch? (security.protocol is SSL or SASL_SSL here; the listener is "
                            "PLAINTEXT or SASL_PLAINTEXT)")

    def _check_tls(self, deadline: float) -> None:
        """The listener dropped the connection at ApiVersions: if it answers
        a TLS handshake on a new connection, it expects TLS."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE      # a probe: nothing is sent over it
        try:
            with self._probe_socket(deadline) as sock:
                context.wrap_socket(sock).close()
        except ssl.SSLError as e:
            if isinstance(e, ssl.SSLEOFError) or (e.reason or "") in _NOT_TLS:
                return
        except (OSError, Unreachable):
            return
        raise LiveError(f"{self.controller}: the listener closed the connection at the first request "
                        "(ApiVersions) but answers a TLS handshake: protocol mismatch? "
                        "(security.protocol is PLAINTEXT or SASL_PLAINTEXT here; the listener is SSL "
                        "or SASL_SSL)")

    def _probe_socket(self, deadline: float) -> socket.socket:
        deadline = min(deadline, time.monotonic() + _PROBE_S)
        addr = self.controller
        sock = socket.create_connection((addr.host, addr.port), timeout=_left(deadline))
        sock.settimeout(_left(deadline))
        return sock

    def _negotiate(self, deadline: float) -> None:
        """ApiVersions first: our highest version; a controller that does not
        know it answers UNSUPPORTED_VERSION with its range (KIP-511)."""
        addr = self.controller
        version = p.APIS[p.API_VERSIONS][2]
        for _ in range(2):
            try:
                answer = self._exchange(p.API_VERSIONS, version, p.api_versions_request(version), deadline)
            except Unreachable as e:
                if not self.security.uses_tls and str(e) in (_CLOSED, _RESET):
                    # a TLS listener drops a client that does not start with a handshake
                    self._check_tls(deadline)
                raise
            if answer.error_code != p.UNSUPPORTED_VERSION:
                break
            theirs = p.supported_ranges(answer).get(p.API_VERSIONS, (0, 0))[1]
            version = min(version, theirs)
        if answer.error_code != p.NONE:
            raise LiveError(f"{addr}: ApiVersions failed with error {answer.error_code}")
        ranges = p.supported_ranges(answer)
        if p.FETCH_SNAPSHOT not in ranges:
            raise LiveError(f"{addr}: this is a broker listener (no FetchSnapshot API), "
                            "point -C at the controller listener (controller.listener.names)")
        fetch = ranges.get(p.FETCH, (0, -1))[1]
        if fetch < p.APIS[p.FETCH][3]:
            raise LiveError(f"{addr}: the controller is too old (Fetch up to v{fetch}; "
                            "KRaft 3.0 or later with Fetch v12+ is needed)")
        for key, (_req, resp, ours, lowest) in p.APIS.items():
            low, high = ranges.get(key, (0, -1))
            if high >= lowest and low <= ours:
                self.versions[key] = min(ours, high)
            elif key in (p.FETCH, p.FETCH_SNAPSHOT):
                raise LiveError(f"{addr}: no common {resp.__name__[:-len('Response')]} version (the "
                                f"controller speaks v{low}-v{high}, metashell v{lowest}-v{ours})")

    def _authenticate(self, deadline: float) -> None:
        addr, sec = self.controller, self.security
        handshake = self.versions.get(p.SASL_HANDSHAKE)
        if handshake is None:
            raise LiveError(f"{addr}: the listener does not accept SASL (no SaslHandshake API)")
        answer = self._exchange(p.SASL_HANDSHAKE, handshake,
                                p.SaslHandshakeRequest(mechanism=sec.sasl_mechanism, version=handshake),
                                deadline)
        if answer.error_code != p.NONE:
            raise LiveError(f"{addr}: authentication failed: SASL mechanism {sec.sasl_mechanism} is "
                            f"not enabled on this listener (it offers {', '.join(answer.mechanisms) or 'none'})")
        config = {"sasl_mechanism": sec.sasl_mechanism, "sasl_plain_username": sec.username,
                  "sasl_plain_password": sec.password}
        mechanism = (SaslMechanismPlain if sec.sasl_mechanism == "PLAIN" else SaslMechanismScram)(**config)
        version = self.versions.get(p.SASL_AUTHENTICATE, 0)
        while not mechanism.is_done():
            request = p.SaslAuthenticateRequest(auth_bytes=mechanism.auth_bytes(), version=version)
            answer = self._exchange(p.SASL_AUTHENTICATE, version, request, deadline)
            if answer.error_code != p.NONE:
                why = f": {answer.error_message}" if answer.error_message else ""
                raise LiveError(f"{addr}: authentication failed (SASL {sec.sasl_mechanism} as "
                                f"user {sec.username!r}){why}")
            try:
                mechanism.receive(answer.auth_bytes)
            except (ValueError, KeyError) as e:
                raise LiveError(f"{addr}: authentication failed (SASL {sec.sasl_mechanism}): "
                                f"the server's answer does not check out ({e})") from None
        if not mechanism.is_authenticated():
            raise LiveError(f"{addr}: authentication failed (SASL {sec.sasl_mechanism} as user {sec.username!r})")

    # -- requests ----------------------------------------------------------

    def request(self, api_key: int, message, deadline: float):
        """Send one request at the negotiated version; the decoded answer."""
        return self._exchange(api_key, self.versions[api_key], message, deadline)

    def request_frame(self, api_key: int, message, deadline: float) -> tuple[int, bytearray]:
        """Send one request at the negotiated version; ``(correlation id,
        answer frame)`` for a caller that reads part of it itself."""
        correlation = next(self._correlation)
        self._send(p.encode_request(message, self.versions[api_key], correlation), deadline)
        return correlation, self._receive(deadline)

    def decode(self, api_key: int, correlation: int, frame, version: int | None = None):
        """The answer in ``frame`` to the request numbered ``correlation``."""
        version = self.versions[api_key] if version is None else version
        try:
            got, answer = p.decode_response(api_key, version, frame)
        except Exception as e:  # kafka-python raises assorted errors on short or bad frames
            raise LiveError(f"{self.controller}: cannot decode the {p.APIS[api_key][1].__name__} "
                            f"v{version} ({len(frame)} bytes): {e}") from None
        self.check_correlation(correlation, got)
        return answer

    @staticmethod
    def check_correlation(sent: int, got: int) -> None:
        if got != sent:
            raise Unreachable(f"answer to request {got} where {sent} was expected")

    def _exchange(self, api_key: int, version: int, message, deadline: float):
        correlation = next(self._correlation)
        self._send(p.encode_request(message, version, correlation), deadline)
        return self.decode(api_key, correlation, self._receive(deadline), version)

    def _send(self, data: bytes, deadline: float) -> None:
        sock = self._live_socket()
        try:
            sock.settimeout(_left(deadline))
            sock.sendall(data)
        except OSError as e:
            raise Unreachable(self._why(e)) from None

    def _receive(self, deadline: float) -> bytearray:
        head = self._read_exactly(4, deadline)
        (size,) = INT32.unpack(head)
        if not 4 <= size <= MAX_FRAME and head[0] in _TLS_RECORDS and head[1] == 3 \
                and not self.security.uses_tls:
            raise LiveError(f"{self.controller}: the listener answered with a TLS record: protocol "
                            "mismatch? it expects TLS (check security.protocol: SSL or SASL_SSL there)")
        if not 4 <= size <= MAX_FRAME:
            raise LiveError(f"{self.controller}: not a Kafka listener (its answer starts with {bytes(head)!r}, "
                            f"read as a frame of {size} bytes; at most {MAX_FRAME} expected)")
        return self._read_exactly(size, deadline)

    def _read_exactly(self, size: int, deadline: float) -> bytearray:
        sock = self._live_socket()
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        try:
            while got < size:
                sock.settimeout(_left(deadline))
                n = sock.recv_into(view[got:])
                if n == 0:
                    raise Unreachable(_CLOSED if not self._closed.is_set() else "closed")
                got += n
        except OSError as e:
            raise Unreachable(self._why(e)) from None
        return buf

    def _live_socket(self) -> socket.socket:
        sock = self._sock
        if sock is None or self._closed.is_set():
            raise Unreachable("closed")
        return sock

    def _why(self, e: OSError) -> str:
        """Why a read or write failed; a TLS alert from the controller (not a
        mere drop) is fatal: no retry will make it accept this client."""
        if self._closed.is_set():
            return "closed"
        if isinstance(e, ssl.SSLError) and not isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
            reason = e.reason or str(e)
            hint = (" (the listener requires a client certificate: set ssl.keystore.*)"
                    if "CERTIFICATE_REQUIRED" in reason else "")
            raise LiveError(f"{self.controller}: TLS: the controller refused this client: {reason}{hint}")
        return _os_reason(e)

    def close(self) -> None:
        """Thread-safe: a read blocked in another thread returns at once."""
        self._closed.set()
        sock = self._sock
        if sock is None:
            return
        try:
            # the plain socket's shutdown, so a blocked TLS read sees EOF
            # without its SSL object being torn down under it
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            sock.close()
        except OSError:
            pass


def _resolve(addr: Controller, deadline: float) -> list:
    """``getaddrinfo`` under the deadline: an IP address at once, a name in
    a helper thread (a resolver cannot be given a timeout)."""
    try:
        return socket.getaddrinfo(addr.host, addr.port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass
    answer: dict = {}

    def lookup():
        try:
            answer["infos"] = socket.getaddrinfo(addr.host, addr.port, type=socket.SOCK_STREAM)
        except OSError as e:
            answer["error"] = _os_reason(e)
    thread = threading.Thread(target=lookup, name=f"resolve {addr.host}", daemon=True)
    thread.start()
    thread.join(_left(deadline))
    if "infos" in answer:
        return answer["infos"]
    raise Unreachable(answer.get("error", "cannot resolve the host name (timed out)"))


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Unreachable("timed out")
    return left


def _os_reason(e: OSError) -> str:
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(e, socket.gaierror):
        return f"cannot resolve the host name ({e.strerror})"
    return e.strerror or str(e) or type(e).__name__
