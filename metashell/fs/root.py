"""The root of the virtual tree: every top-level directory, the native ones
(:mod:`.tree`) and Kafka's ``/image`` (:mod:`.image_view`, which builds on
the native ones)."""

from __future__ import annotations

from .image_view import image_dir
from .node import DictDir
from .tree import (AclsDir, BrokersDir, ConfigsDir, ControllersDir, FeaturesDir, QuotaEntityDir,
                   ScramDir, TokensDir, TopicsDir, View, ViewDir, local_dir, producer_ids_dir,
                   quorum_dir)


def build_root(image, *, show_secrets: bool = False, local: dict | None = None,
               times=None, live=None) -> "RootDir":
    """The tree over ``image``; ``times`` gives batch append times by offset
    (see :mod:`metashell.loader.append_times`) for the brokers' start times;
    ``live`` the live quorum's view (live mode only)."""
    view = View(image, show_secrets=show_secrets, local=local, times=times, live=live)
    return RootDir("", view)


class RootDir(ViewDir):
    _KINDS = {
        "acls": lambda v: AclsDir("acls", v),
        "brokers": lambda v: BrokersDir("brokers", v),
        "clientQuotas": lambda v: QuotaEntityDir("clientQuotas", v, ()),
        "configs": lambda v: ConfigsDir("configs", v),
        "controllers": lambda v: ControllersDir("controllers", v),
        "delegationTokens": lambda v: TokensDir("delegationTokens", v),
        "features": lambda v: FeaturesDir("features", v),
        "image": lambda v: image_dir(v),
        "local": lambda v: local_dir(v),
        "metadataQuorum": lambda v: quorum_dir(v),
        "producerIds": lambda v: producer_ids_dir(v),
        "scram": lambda v: ScramDir("scram", v),
        "topicIds": lambda v: TopicsDir("topicIds", v, by_id=True),
        "topics": lambda v: TopicsDir("topics", v, by_id=False),
    }

    # Kafka 2.8-3.4's names (old_paths.py): reachable, never listed
    _ALIASES = {
        "acl": lambda v: DictDir("acl", {"id": AclsDir("id", v)}),
        "client-quotas": lambda v: QuotaEntityDir("client-quotas", v, ()),
    }

    def children(self) -> list[str]:
        return sorted(self._KINDS)

    def child(self, name: str):
        make = self._KINDS.get(name) or self._ALIASES.get(name)
        return make(self.view) if make else None

    def last_change(self):
        img = self.image
        return (img.last_offset, img.last_time) if img.last_offset >= 0 else None
