"""The observer's connections against tiny scripted servers on loopback:
timeouts, close() from another thread, unreachable addresses, listener
checks and TLS failures (each a one-line LiveError)."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
import time

import pytest
import trustme

from metashell.errors import LiveError
from metashell.live import LiveConfig, Observer, SecurityConfig, StatusEvent, parse_controllers
from metashell.live import protocol as p
from tests.support.ports import refusing_ports
from tests.support.waiting import wait_until

CONTROLLER_APIS = {18: (0, 4), 1: (0, 17), 59: (0, 1), 55: (0, 2), 17: (0, 1), 36: (0, 2)}


def api_versions_frame(correlation: int, apis: dict) -> bytes:
    R = p.ApiVersionsResponse
    response = R(error_code=0, api_keys=[R.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                                         for k, (lo, hi) in apis.items()], throttle_time_ms=0, version=3)
    response.with_header(correlation)
    return response.encode(header=True, framed=True)


def read_frame(conn: socket.socket) -> bytes | None:
    head = b""
    while len(head) < 4:
        chunk = conn.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (size,) = struct.unpack(">i", head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    return body


class ScriptedServer:
    """Accepts connections; answers ApiVersions with ``apis`` (or nothing
    when ``apis`` is None) and then reads requests without answering."""

    def __init__(self, apis=CONTROLLER_APIS, context: ssl.SSLContext | None = None):
        self.apis = apis
        self.context = context
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.requests: list[int] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            if self.context is not None:
                conn = self.context.wrap_socket(conn, server_side=True)
            while True:
                frame = read_frame(conn)
                if frame is None:
                    return
                key, _version, correlation = struct.unpack_from(">hhi", frame)
                self.requests.append(key)
                if key == 18 and self.apis is not None:
                    conn.sendall(api_versions_frame(correlation, self.apis))
        except (OSError, ssl.SSLError):
            return

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.fixture
def server():
    servers = []

    def make(*a, **kw):
        s = ScriptedServer(*a, **kw)
        servers.append(s)
        return s
    yield make
    for s in servers:
        s.close()


def run(observer: Observer, limit: float = 10.0):
    """Drain events() in the calling thread; returns (events, error, seconds)."""
    t0 = time.monotonic()
    events = []
    try:
        for e in observer.events():
            events.append(e)
            assert time.monotonic() - t0 < limit
    except LiveError as e:
        return events, e, time.monotonic() - t0
    return events, None, time.monotonic() - t0


def test_nothing_reachable_names_every_address():
    with refusing_ports(2) as (a, b):
        observer = Observer(LiveConfig(parse_controllers(f"1@127.0.0.1:{a},2@127.0.0.1:{b}"),
                                       timeout=1.0))
        events, error, seconds = run(observer)
    message = str(error)
    assert f"1@127.0.0.1:{a}" in message and f"2@127.0.0.1:{b}" in message and "refused" in message
    assert "\n" not in message and seconds < 4
    assert events and all(isinstance(e, StatusEvent) and e.state == "connecting" for e in events)


def test_a_silent_controller_times_out(server):
    s = server(apis=None)
    observer = Observer(LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), timeout=1.0))
    _events, error, seconds = run(observer)
    assert error is not None and "timed out" in str(error) and f"127.0.0.1:{s.port}" in str(error)
    assert seconds < 4


def test_close_from_another_thread_ends_a_long_poll(server):
    s = server()     # answers ApiVersions, then parks the Fetch forever
    observer = Observer(LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), timeout=30.0,
                                   request_timeout=30.0))
    result = {}
    thread = threading.Thread(target=lambda: result.update(zip(("events", "error", "s"), run(observer, 40))))
    thread.start()
    wait_until(lambda: p.FETCH in s.requests, "the observer's Fetch")
    t0 = time.monotonic()
    observer.close()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - t0 < 1.0
    assert result["error"] is None


def test_broker_listener_is_named(server):
    apis = {k: v for k, v in CONTROLLER_APIS.items() if k != 59}
    s = server(apis=apis)
    _events, error, _s = run(Observer(LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), timeout=5)))
    assert "broker listener" in str(error) and "controller listener" in str(error)


def test_controller_too_old(server):
    s = server(apis={**CONTROLLER_APIS, 1: (0, 11)})
    _events, error, _s = run(Observer(LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), timeout=5)))
    assert "too old" in str(error)


def test_requests_are_clamped_to_the_controllers_versions(server):
    from metashell.live.transport import Connection
    s = server(apis={**CONTROLLER_APIS, 1: (0, 13), 55: (0, 0), 59: (0, 0), 36: (0, 1)})
    conn = Connection(parse_controllers(f"127.0.0.1:{s.port}")[0], SecurityConfig())
    conn.open(time.monotonic() + 5)
    try:
        assert conn.versions[p.FETCH] == 13 and conn.versions[p.DESCRIBE_QUORUM] == 0
        assert conn.versions[p.FETCH_SNAPSHOT] == 0 and conn.versions[p.SASL_AUTHENTICATE] == 1
        assert conn.versions[p.API_VERSIONS] == 4
    finally:
        conn.close()


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


def tls_server(server, ca, name: str):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert(name).configure_cert(context)
    return server(context=context)


def client_tls(ca=None, check_hostname=True) -> SecurityConfig:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = check_hostname
    if ca is not None:
        ca.configure_trust(context)
    return SecurityConfig("SSL", ssl_context=context)


def test_tls_hostname_mismatch_is_named(server, ca):
    s = tls_server(server, ca, "controller.example")
    config = LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), security=client_tls(ca), timeout=5)
    _events, error, _s = run(Observer(config))
    assert "TLS hostname verification failed" in str(error)


def test_tls_untrusted_certificate_is_named(server, ca):
    s = tls_server(server, ca, "127.0.0.1")
    config = LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), security=client_tls(trustme.CA()), timeout=5)
    _events, error, _s = run(Observer(config))
    assert "TLS certificate verification failed" in str(error)


def test_tls_with_the_right_ca_gets_to_fetch(server, ca):
    s = tls_server(server, ca, "127.0.0.1")
    config = LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), security=client_tls(ca), timeout=1)
    _events, error, _s = run(Observer(config))
    assert p.FETCH in s.requests and "timed out" in str(error)


def test_hostname_check_off(server, ca):
    s = tls_server(server, ca, "controller.example")
    config = LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"),
                        security=client_tls(ca, check_hostname=False), timeout=1)
    _events, error, _s = run(Observer(config))
    assert p.FETCH in s.requests and "TLS" not in str(error)


def test_a_listener_speaking_another_protocol(server):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    def answer_http():
        conn, _ = sock.accept()
        conn.recv(100)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    threading.Thread(target=answer_http, daemon=True).start()
    try:
        _events, error, _s = run(Observer(LiveConfig(parse_controllers(f"127.0.0.1:{sock.getsockname()[1]}"),
                                                     timeout=5)))
    finally:
        sock.close()
    assert "not a Kafka listener" in str(error) and "HTTP" in str(error)


def test_ipv6_loopback():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    sock = socket.socket(socket.AF_INET6)
    try:
        sock.bind(("::1", 0))
    except OSError:
        sock.close()
        pytest.skip("no IPv6 loopback on this machine")
    sock.listen()
    port = sock.getsockname()[1]

    def serve():
        conn, _ = sock.accept()
        frame = read_frame(conn)
        conn.sendall(api_versions_frame(struct.unpack_from(">hhi", frame)[2], CONTROLLER_APIS))
        read_frame(conn)
    threading.Thread(target=serve, daemon=True).start()
    from metashell.live.transport import Connection
    conn = Connection(parse_controllers(f"[::1]:{port}")[0], SecurityConfig())
    try:
        conn.open(time.monotonic() + 5)
        assert conn.versions[p.FETCH] == 17
    finally:
        conn.close()
        sock.close()


def test_no_common_fetch_version(server):
    s = server(apis={**CONTROLLER_APIS, 1: (19, 21)})
    _events, error, _s = run(Observer(LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), timeout=5)))
    assert "no common Fetch version" in str(error) and "v19-v21" in str(error)


def test_a_name_that_does_not_resolve():
    observer = Observer(LiveConfig(parse_controllers("no-such-controller.invalid:9093"), timeout=1.0))
    _events, error, seconds = run(observer)
    assert "no-such-controller.invalid:9093" in str(error) and "resolve" in str(error)
    assert seconds < 4


def test_connects_with_more_than_a_thousand_files_open(server):
    """Descriptors past 1024 (a script or an executor with many files open):
    the connect waits on a selector, which takes them (select() does not)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"at most {hard} open files here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = []
    try:
        while not held or held[-1].fileno() < 1030:
            held.append(open("/dev/null", "rb"))
        s = server()     # answers ApiVersions, then parks the Fetch
        observer = Observer(LiveConfig(parse_controllers(f"127.0.0.1:{s.port}"), timeout=5))
        result = {}
        thread = threading.Thread(target=lambda: result.update(error=run(observer, 10)[1]))
        thread.start()
        wait_until(lambda: p.FETCH in s.requests or not thread.is_alive(),
                   "the observer's Fetch (or its end)")
        observer.close()
        thread.join(5)
        assert p.FETCH in s.requests, result   # connected, and got as far as fetching
        assert result["error"] is None
    finally:
        for f in held:
            f.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
