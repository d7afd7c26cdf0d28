"""Shared test doubles for the command, CLI and REPL tests (no tests here).

``make_root()`` is a small contract-shaped tree built from the generic nodes
of ``metashell.fs.node``; ``FakeSession`` and ``fake_open_session`` stand in
for ``metashell.session.files`` so the shell can be tested on its own;
``run_command`` runs a command line over a real session.
"""

from __future__ import annotations

import io

from metashell.errors import InputError
from metashell.fs.node import DictDir, Leaf

T0 = 1715371611486                      # 2024-05-10T20:06:51.486Z
T0_TEXT = "2024-05-10T20:06:51.486Z"


def _dir(name, entries, change=None):
    return DictDir(name, entries, change=change)


def make_root() -> DictDir:
    def broker(i, fenced, offset):
        return _dir(str(i), {
            "isFenced": Leaf("isFenced", fenced, change=(offset, T0 + offset)),
            "registration": Leaf("registration", {"brokerId": i, "rack": None,
                                                  "listeners": [{"name": "PLAINTEXT",
                                                                 "port": 9092}]},
                                 change=(offset, T0 + offset)),
        }, change=(offset, T0 + offset))

    def partition(topic_id, p, offset):
        return _dir(str(p), {"data": Leaf("data", {"partitionId": p, "topicId": topic_id,
                                                   "replicas": [1, 2], "isr": [1],
                                                   "leader": 1},
                                          change=(offset, T0 + offset))},
                    change=(offset, T0 + offset))

    topics = {
        "foo": _dir("foo", {"id": Leaf("id", "fooId", change=(20, T0 + 20)),
                            "name": Leaf("name", "foo", change=(20, T0 + 20)),
                            "0": partition("fooId", 0, 21),
                            "1": partition("fooId", 1, 22)},
                    change=(22, T0 + 22)),
        "bar": _dir("bar", {"id": Leaf("id", "barId", change=(30, T0 + 30)),
                            "name": Leaf("name", "bar", change=(30, T0 + 30)),
                            "0": partition("barId", 0, 31)},
                    change=(31, T0 + 31)),
    }
    return _dir("", {
        "brokers": _dir("brokers", {"1": broker(1, False, 5), "2": broker(2, True, 6),
                                    "10": broker(10, False, 7)}),
        "topics": _dir("topics", topics),
        "features": _dir("features", {"metadata.version": Leaf("metadata.version", 19,
                                                               change=(1, T0 + 1)),
                                      "kraft.version": Leaf("kraft.version", 1)}),
        "configs": _dir("configs", {"topic": _dir("topic", {"foo": _dir("foo", {
            "cleanup.policy": Leaf("cleanup.policy", "compact"),
            "retention.ms": Leaf("retention.ms", "1000"),
        })})}),
        "quota": _dir("quota", {"rate": Leaf("rate", 1e20), "ratio": Leaf("ratio", 0.5)}),
        "empty": _dir("empty", {}),
        "odd": _dir("odd", {"with space": Leaf("with space", "spaced"),
                            "nothing": Leaf("nothing", None),
                            "text": Leaf("text", "line one\nline two")}),
        "local": _dir("local", {"version": Leaf("version", "0.1.0"),
                                "source": Leaf("source", "fake.checkpoint")}),
    })


SUMMARY = {
    "brokers": {"ids": [1, 2, 10], "fenced": [2]},
    "controllers": [],
    "topics": 2,
    "partitions": 3,
    "metadataVersion": {"level": 19, "release": "3.7-IV4"},
    "features": {"metadata.version": 19, "kraft.version": 1},
    "lastOffset": 31,
    "lastTime": "2024-05-10T20:06:51.517Z",
}

CHANGES = {
    "/topics/foo": [
        {"offset": 20, "time": "2024-05-10T20:06:51.506Z", "type": "TopicRecord",
         "summary": "topic foo created"},
        {"offset": 22, "time": "2024-05-10T20:06:51.508Z", "type": "PartitionRecord",
         "summary": "partition 1 created"},
    ],
    "/brokers/1": [
        {"offset": 5, "time": "2024-05-10T20:06:51.491Z", "type": "RegisterBrokerRecord",
         "summary": "broker 1 registered"},
    ],
    "/brokers/2": [],
}


class FakeSession:
    """Quacks like ``metashell.session.files.Session``."""

    def __init__(self, root=None, source="fake.checkpoint", warnings=()):
        self.root = root if root is not None else make_root()
        self.source = source
        self.warnings = list(warnings)

    def summary(self, static_min_isr=None) -> dict:
        return dict(SUMMARY)

    def changes(self, path: str) -> list[dict]:
        if path not in CHANGES:
            raise KeyError(path)
        return list(CHANGES[path])


#: every call of fake_open_session: (path, kwargs)
CALLS: list = []


def fake_open_session(path, **kwargs) -> FakeSession:
    """Like ``open_session``: ``missing`` fails to load, ``warn`` loads with
    warnings, ``interrupt`` is interrupted while loading, ``big`` has a
    directory of 20000 files; anything else gives the fake tree."""
    CALLS.append((path, kwargs))
    if path == "missing":
        raise InputError(path, "no such file or directory")
    if path == "interrupt":
        raise KeyboardInterrupt
    if kwargs.get("progress"):
        kwargs["progress"](0, 10)
        kwargs["progress"](10, 10)
    if path == "warn":
        return FakeSession(warnings=["fake.log (byte 42, offset 7): torn batch; batch skipped"])
    if path == "big":
        root = make_root()
        root._entries["many"] = DictDir("many", {f"f{i:05d}": Leaf(f"f{i:05d}", i)
                                                 for i in range(20000)})
        return FakeSession(root=root)
    return FakeSession(source=str(path))


def make_ctx(**kwargs):
    """A command context over the fake tree writing to StringIOs."""
    from metashell.commands import Context
    kwargs.setdefault("out", io.StringIO())
    kwargs.setdefault("err", io.StringIO())
    session = kwargs.pop("session", FakeSession())
    if session is None:
        return Context(root=make_root(), **kwargs)
    return Context.for_session(session, **kwargs)


def run_command(session, *words, output: str = "text", color: bool = False) -> tuple[int, str, str]:
    """Run one command line (``words``) over a real ``session``, as the
    shell does: its exit status, stdout and stderr."""
    from metashell.commands import Context, run_words
    out, err = io.StringIO(), io.StringIO()
    ctx = Context.for_session(session, out=out, err=err, output=output, color=color)
    return run_words(ctx, list(words)), out.getvalue(), err.getvalue()


if __name__ == "__main__":
    # ``python -m tests.support.commands ARGS``: the real entry point
    # (standalone: it exits the process) over the fake session factory.
    from metashell.cli import main
    main(open_session=fake_open_session)
