"""Loopback ports that refuse connections, for tests of what a client says
when nothing listens."""

from __future__ import annotations

import socket
from contextlib import contextmanager


@contextmanager
def refusing_ports(count: int = 1):
    """``count`` loopback ports that refuse every connection for as long as
    the block runs: each is bound and never listened on, so no other
    process can be given it meanwhile. A port bound, freed and then dialled
    was once given to a Spark driver's accumulator server in the meantime
    (the other pytest worker), which printed a traceback into the stderr of
    the command line under test."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        yield [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()
