"""Live mode: follow a running KRaft controller quorum as a Raft observer.

The observer sends Fetch as ReplicaId -1 (no node id, no vote, nothing
written anywhere), downloads the leader's newest snapshot, follows the log
and hands out only committed batches, in the same batch format as files:

- :mod:`.addresses`: ``-C`` controller lists;
- :mod:`.clientconfig`: ``-c`` security properties (TLS, SASL);
- :mod:`.protocol`: the requests (kafka-python codecs, FetchSnapshot declared here);
- :mod:`.transport`: one blocking connection (TCP, TLS, ApiVersions, SASL);
- :mod:`.addressbook`: which address each node id has;
- :mod:`.state`: the state machine, no I/O;
- :mod:`.observer`: :class:`Observer`, the loop around it;
- :mod:`.events`: :class:`LiveConfig` and the events yielded.
"""

from ..errors import LiveError
from .addresses import Controller, parse_controllers
from .clientconfig import SecurityConfig, load_client_config
from .events import CommittedEvent, LiveConfig, NoticeEvent, SnapshotEvent, StatusEvent
from .observer import Observer

__all__ = ["Controller", "parse_controllers", "LiveConfig", "SecurityConfig", "load_client_config",
           "Observer", "SnapshotEvent", "CommittedEvent", "StatusEvent", "NoticeEvent", "LiveError"]
