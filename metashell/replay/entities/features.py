"""Feature levels, metadata.version included, and the ZooKeeper migration
state (Kafka's ``FeaturesDelta``); a NoOpRecord (a controller's heartbeat)
changes nothing."""

from __future__ import annotations

from ...kraft.records import Record
from ..image import Entity


def feature_level(delta, rec: Record) -> None:
    d = rec.data
    if d is None:
        return
    name = d["name"]
    level = d.get("featureLevel", d.get("maxFeatureLevel"))
    delta.history(("feature", name), rec)
    if level == 0 and name != "metadata.version":
        delta.image.features.pop(name, None)
        return
    delta.image.features[name] = Entity(level, (rec.offset, rec.timestamp))


def remove_feature_level(delta, rec: Record) -> None:
    d = rec.data
    if d is not None:
        delta.image.features.pop(d["name"], None)
        delta.history(("feature", d["name"]), rec)


def zk_migration_state(delta, rec: Record) -> None:
    d = rec.data
    if d is not None:
        delta.image.zk_migration_state = d["zkMigrationState"]


def no_op(delta, rec: Record) -> None:
    """A heartbeat: counted, nothing changes."""


REPLAY = {
    "FeatureLevelRecord": feature_level,
    "RemoveFeatureLevelRecord": remove_feature_level,
    "ZkMigrationStateRecord": zk_migration_state,
    "NoOpRecord": no_op,
}
