"""Controller addresses as given to ``-C``.

Kafka writes a quorum two ways: ``controller.quorum.voters`` as
``id@host:port,...`` and ``controller.quorum.bootstrap.servers`` as
``host:port,...``; both are accepted, IPv6 hosts in brackets. Knowing an id
lets the observer go straight to a leader named in a Fetch answer without
probing every address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError

_ITEM = re.compile(r"(?:(?P<id>[^@]*)@)?(?:\[(?P<v6>[^\]]*)\]|(?P<host>[^:\[\]]*)):(?P<port>[^:]*)")


@dataclass(frozen=True)
class Controller:
    """One controller listener: an optional node id, a host and a port."""

    id: int | None
    host: str
    port: int

    @property
    def hostport(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return self.hostport if self.id is None else f"{self.id}@{self.hostport}"


def _bad(item: str, why: str) -> UsageError:
    return UsageError(f"-C: bad controller {item!r}: {why} "
                      "(expected ID@HOST:PORT or HOST:PORT, IPv6 as [::1]:9093)")


def parse_controllers(text: str) -> list[Controller]:
    """``"1@h:9093,2@[::1]:9094"`` or ``"h:9093,h2:9093"`` to controllers."""
    items = [item.strip() for item in text.split(",")]
    if not text.strip():
        raise UsageError("-C: no controller given (expected ID@HOST:PORT or HOST:PORT, comma-separated)")
    out: list[Controller] = []
    for item in items:
        if not item:
            raise _bad(item, "empty item")
        m = _ITEM.fullmatch(item)
        if m is None:
            raise _bad(item, "not HOST:PORT")
        host = m["v6"] if m["v6"] is not None else m["host"]
        if not host:
            raise _bad(item, "no host")
        if m["v6"] is not None and ":" not in host:
            raise _bad(item, "brackets are for IPv6 addresses")
        port = m["port"]
        if not re.fullmatch(r"[0-9]+", port) or not 0 < int(port) < 65536:
            raise _bad(item, "the port must be a number from 1 to 65535")
        node_id = m["id"]
        if node_id is not None and not re.fullmatch(r"[0-9]+", node_id):
            raise _bad(item, "the node id must be a non-negative number")
        out.append(Controller(int(node_id) if node_id is not None else None, host, int(port)))
    return out
