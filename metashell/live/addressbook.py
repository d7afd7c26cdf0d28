"""Which address each controller node id listens on, as far as the
observer can tell.

Three sources, in rising order of trust:

1. the ids given with ``-C`` (``id@host:port``): typed by a person, so they
   may not match the voters' real node ids;
2. the leader's NodeEndpoints in Fetch and FetchSnapshot answers (3.9+,
   Fetch v17+): what the quorum itself says;
3. an address that answered a Fetch *as the leader* (no error, CurrentLeader
   naming node N): this address is node N, whatever ``-C`` or an
   advertised name says (an advertised name may not resolve from here).

A ``-C`` id that contradicts the quorum is reported once, naming the id
and the address, and no longer used: trusting it made the observer ask the
same wrong node for the leader again and again.
"""

from __future__ import annotations

from .addresses import Controller


class AddressBook:
    """Node id -> :class:`Controller`, and the warnings about ``-C`` ids."""

    def __init__(self, controllers: list[Controller]):
        self._controllers = list(controllers)
        self._by_id: dict[int, Controller] = {c.id: c for c in controllers if c.id is not None}
        self._given = set(self._by_id)
        self._confirmed: set[int] = set()
        self._warned: set[str] = set()

    def get(self, node_id: int) -> Controller | None:
        return self._by_id.get(node_id) if node_id >= 0 else None

    def endpoints(self, endpoints: dict[int, tuple[str, int]]) -> list[str]:
        """The leader's address as the quorum advertises it: better than a
        ``-C`` id, not as good as an address seen answering as that node.
        Warnings for ``-C`` items that give that address another id."""
        warnings = []
        for node_id, (host, port) in endpoints.items():
            there = Controller(node_id, host, port)
            if node_id not in self._confirmed:
                self._by_id[node_id] = there
            for given in self._controllers:
                if given.id is not None and given.id != node_id and given.hostport == there.hostport:
                    if self._by_id.get(given.id) == given:
                        del self._by_id[given.id]
                    warnings.append(self._warn(
                        f"-C names {given} but the quorum says node {node_id} listens at "
                        f"{there.hostport}: the ids in -C do not match the voters' node ids; "
                        "using what the quorum says"))
        return [w for w in warnings if w is not None]

    def answered_as_leader(self, source: Controller, leader_id: int) -> str | None:
        """``source`` answered a Fetch as leader ``leader_id``: that is its
        id from now on. A warning when ``-C`` named it otherwise."""
        here = Controller(leader_id, source.host, source.port)
        self._by_id[leader_id] = here
        self._confirmed.add(leader_id)
        if source.id is None or source.id == leader_id:
            return None
        wrong = self._by_id.get(source.id)
        if wrong is not None and wrong.hostport == source.hostport:
            del self._by_id[source.id]
        return self._warn(f"-C names {source} but the controller at {source.hostport} is node "
                          f"{leader_id} (it answered as the leader): the ids in -C do not match "
                          "the voters' node ids; using what the quorum says")

    def not_the_leader(self, source: Controller, leader_id: int, epoch: int) -> str | None:
        """``source``, taken for node ``leader_id``, answered that it is not
        the leader and that ``leader_id`` is: it is another node. Forget
        that id's address (the next answer that names it gives a better one)."""
        # only a -C id nothing has vouched for: a leader that is resigning
        # also answers NOT_LEADER_OR_FOLLOWER naming itself
        if (source.id != leader_id or leader_id not in self._given or leader_id in self._confirmed
                or self._by_id.get(leader_id) != source):
            return None
        del self._by_id[leader_id]
        return self._warn(f"-C names {source} but the controller at {source.hostport} is not node "
                          f"{leader_id}: it answered NOT_LEADER_OR_FOLLOWER naming node {leader_id} "
                          f"as the leader of epoch {epoch}; the ids in -C do not match the voters' "
                          "node ids (looking for the leader at the other addresses)")

    def _warn(self, text: str) -> str | None:
        if text in self._warned:
            return None
        self._warned.add(text)
        return text
