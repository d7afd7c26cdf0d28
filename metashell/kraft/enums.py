"""Names for the numeric codes found in metadata records.

Each table maps a code to the name Kafka gives it; :func:`name_of` turns an
unknown code into ``"UNKNOWN(<code>)"`` so that a newer Kafka's codes still
display. Values follow kraft-format.md sections 10 and 17.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping


def name_of(table: Mapping[int, str], code) -> str:
    """The name of ``code`` in ``table``, or ``"UNKNOWN(<code>)"``."""
    name = table.get(code)
    return name if name is not None else f"UNKNOWN({code})"


# --- ConfigRecord.ResourceType (Kafka's ConfigResource.Type) ----------------
CONFIG_RESOURCE_TYPES: dict[int, str] = {
    0: "UNKNOWN",
    2: "TOPIC",
    4: "BROKER",
    8: "BROKER_LOGGER",
    16: "CLIENT_METRICS",
    32: "GROUP",
}

# the same codes as directory names in the tree (/image/configs/<name>/...)
CONFIG_RESOURCE_TREE_NAMES: dict[int, str] = {
    code: name.lower() for code, name in CONFIG_RESOURCE_TYPES.items()
}

# --- ACLs (AccessControlEntryRecord, AccessControlRecord) -------------------
ACL_RESOURCE_TYPES: dict[int, str] = {
    0: "UNKNOWN",
    1: "ANY",
    2: "TOPIC",
    3: "GROUP",
    4: "CLUSTER",
    5: "TRANSACTIONAL_ID",
    6: "DELEGATION_TOKEN",
    7: "USER",
}

PATTERN_TYPES: dict[int, str] = {
    0: "UNKNOWN",
    1: "ANY",
    2: "MATCH",
    3: "LITERAL",
    4: "PREFIXED",
}

ACL_OPERATIONS: dict[int, str] = {
    0: "UNKNOWN",
    1: "ANY",
    2: "ALL",
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
    15: "TWO_PHASE_COMMIT",  # 4.x
}

ACL_PERMISSION_TYPES: dict[int, str] = {
    0: "UNKNOWN",
    1: "ANY",
    2: "DENY",
    3: "ALLOW",
}

# --- SCRAM (UserScramCredentialRecord.Mechanism) ----------------------------
SCRAM_MECHANISMS: dict[int, str] = {
    0: "UNKNOWN",
    1: "SCRAM-SHA-256",
    2: "SCRAM-SHA-512",
}

# --- Endpoints (RegisterBroker/RegisterController EndPoints.SecurityProtocol) ---
SECURITY_PROTOCOLS: dict[int, str] = {
    0: "PLAINTEXT",
    1: "SSL",
    2: "SASL_PLAINTEXT",
    3: "SASL_SSL",
}

# --- Partitions -------------------------------------------------------------
# PartitionRecord.LeaderRecoveryState
LEADER_RECOVERY_STATES: dict[int, str] = {
    0: "RECOVERED",
    1: "RECOVERING",
}

# --- metadata.version feature levels (kraft-format.md 17.1) -----------------
# Levels >= 22 meant something else in unreleased/unstable 3.9 code; these are
# the released meanings.
METADATA_VERSIONS: dict[int, str] = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
    28: "4.2-IV0",
    29: "4.2-IV1",
    30: "4.3-IV0",  # unstable in 4.2
    31: "4.4-IV0",  # unstable in 4.3
    32: "4.4-IV1",
    33: "4.4-IV2",
    34: "4.5-IV0",  # unstable in 4.4
}


# ---------------------------------------------------------------------------
# Sensitive configuration keys
# ---------------------------------------------------------------------------

# Keys Kafka defines with type PASSWORD (broker, client and listener configs).
PASSWORD_CONFIGS: frozenset[str] = frozenset({
    # SSL
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    # SASL
    "sasl.jaas.config",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    # broker secrets
    "password.encoder.secret",
    "password.encoder.old.secret",
    "delegation.token.secret.key",
    "delegation.token.master.key",
    # ZooKeeper client TLS (ZK-era brokers)
    "zookeeper.ssl.keystore.password",
    "zookeeper.ssl.truststore.password",
})

_LISTENER_PREFIX = "listener.name."
_SENSITIVE_SUFFIXES = (".password", ".jaas.config", ".passphrase")


def _strip_listener_prefix(key: str) -> str:
    """``listener.name.<listener>.<key>`` -> ``<key>`` (else ``key`` unchanged)."""
    if key.startswith(_LISTENER_PREFIX):
        rest = key[len(_LISTENER_PREFIX):]
        dot = rest.find(".")
        if dot > 0:
            return rest[dot + 1:]
    return key


@lru_cache(maxsize=4096)   # a log's configs name a few keys many times (``log``)
def is_sensitive_config(key: str) -> bool:
    """True for a config key whose value must be hidden: a PASSWORD-typed key,
    its ``listener.name.<x>.`` (and ``listener.name.<x>.<mechanism>.``) forms,
    any key prefixed with another namespace (``<prefix>.ssl.key.password``),
    and any key ending in ``.password``, ``.jaas.config`` or ``.passphrase``
    or containing ``secret``."""
    k = key.lower()
    if k in PASSWORD_CONFIGS or _strip_listener_prefix(k) in PASSWORD_CONFIGS:
        return True
    if "secret" in k or k == "password" or k.endswith(_SENSITIVE_SUFFIXES):
        return True
    return any(k.endswith("." + p) for p in PASSWORD_CONFIGS)
