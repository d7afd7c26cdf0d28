"""Which records ``log`` keeps: ``--type`` and ``--entity``."""

from __future__ import annotations

from metashell.commands.base import UsageProblem
from metashell.fs import paths
from metashell.fs.entities import entity_path, entity_records
from metashell.fs.node import lookup
from metashell.kraft import catalog
from metashell.replay.entity_keys import key_from_data


def _short(name: str) -> str:
    """A type name as typed or as written: any case, ``Record`` optional."""
    name = name.strip().lower()
    return name[:-6] if name.endswith("record") else name


#: every record type name, by its short form
_TYPE_NAMES = {_short(m.name): m.name for m in
               (*catalog.METADATA.values(), *catalog.CONTROL.values())}


def type_names() -> list[str]:
    """Every record type name, sorted (completion, errors)."""
    return sorted(_TYPE_NAMES.values())


class TypeFilter:
    """``--type NAME,...``: records of these types (names checked)."""

    def __init__(self, names: "set[str]"):
        self.names = names

    @classmethod
    def parse(cls, text: str) -> "TypeFilter":
        names = set()
        for word in filter(None, (w.strip() for w in text.split(","))):
            full = _TYPE_NAMES.get(_short(word))
            if full is None:
                raise UsageProblem(f"--type: unknown record type '{word}' (choose from "
                                   f"{', '.join(type_names())})")
            names.add(full)
        if not names:
            raise UsageProblem("--type: no record type given")
        return cls(names)

    def __call__(self, rec) -> bool:
        return rec.name in self.names


class EntityFilter:
    """``--entity PATH``: records of the entities at or under PATH (a
    topic's partitions are under it), or of the entity that holds PATH
    (``/brokers/1/registration`` is broker 1's). Topic names come from the
    TopicRecords read so far, else from the loaded image: a partition
    change in a log after a snapshot names its topic by id only."""

    def __init__(self, image, cwd: str, target: str):
        self.image = image
        self.target = paths.resolve(cwd, target)
        if not self.target:
            raise UsageProblem("--entity: give an entity's path, such as /brokers/1")
        self.names: dict[str, str] = {}
        self.matched = 0   # records kept: none, of a path nothing knows, is an error

    def known(self, root) -> bool:
        """Whether PATH names something: a node of the tree, or an entity
        with a history in the image (one removed since the snapshot)."""
        return (lookup(root, self.target) is not None
                or entity_records(self.image, self.target) is not None)

    def __call__(self, rec) -> bool:
        if rec.kind != "metadata" or rec.data is None:
            return False
        key = key_from_data(rec.api_key, rec.data)
        if key is None:
            return False
        if rec.api_key == 2:
            self.names[key[1]] = rec.data["name"]
        if self._matches(key, self._path(key)):
            self.matched += 1
            return True
        return False

    def _path(self, key: tuple) -> list[str]:
        if key[0] in ("topic", "partition"):
            name = self.names.get(key[1])
            if name is None:
                topic = self.image.topics.get(key[1])
                name = topic.name if topic is not None else key[1]
            return ["topics", name] + ([str(key[2])] if key[0] == "partition" else [])
        return paths.split(entity_path(self.image, key))

    def _matches(self, key: tuple, path: list[str]) -> bool:
        target = self.target
        if target[0] == "topicIds" and key[0] in ("topic", "partition"):
            path = ["topicIds", key[1]] + path[2:]
        if path[:len(target)] == target:
            return True     # the entity is PATH or under it
        if key[0] == "topic" and len(target) > 2 and target[2] not in ("id", "name"):
            return False    # a partition's path is not the topic's
        return len(path) > 0 and target[:len(path)] == path
