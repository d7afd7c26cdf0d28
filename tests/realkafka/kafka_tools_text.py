"""Kafka's own tools' text, read back into data for the comparisons of
test_kafka_tools.py: ``kafka-topics --describe``, ``kafka-configs
--describe`` and ``kafka-metadata-quorum describe``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field


@dataclass
class KafkaTopics:
    """kafka-topics --describe's answer: the topic header lines by topic,
    and the partition lines (each as printed, its leading tab kept)."""

    headers: "dict[str, str]" = field(default_factory=dict)
    lines: "list[str]" = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> "KafkaTopics":
        out = cls()
        for line in text.splitlines():
            if line.startswith("Topic: "):
                out.headers[line.split("\t", 1)[0][len("Topic: "):]] = line
            elif line.startswith("\tTopic: "):
                out.lines.append(line)
            elif line.strip():
                raise AssertionError(f"kafka-topics printed an unexpected line: {line!r}")
        return out


def header_configs(header: str) -> "dict[str, str]":
    """A topic header line's ``Configs: k=v,...`` as a dict."""
    text = header.split("\tConfigs: ", 1)[1].split("\t", 1)[0]
    return dict(item.split("=", 1) for item in text.split(",") if item)


_CONFIG_HEAD = re.compile(r"^(?:Dynamic configs for (topic|broker) (\S+)|Default configs for brokers"
                          r" in the cluster) are:$")
_CONFIG_LINE = re.compile(r"^  ([^=]+)=(.*?) sensitive=(true|false) synonyms=\{.*\}$")


def parse_configs(text: str) -> "dict[tuple[str, str], dict[str, str | None]]":
    """kafka-configs --describe's answer: {(type, name): {key: value}} (the
    broker default is ("broker", "<default>")); a sensitive value is None."""
    out: dict = {}
    entity = None
    for line in text.splitlines():
        head = _CONFIG_HEAD.match(line)
        if head:
            entity = (head.group(1), head.group(2)) if head.group(1) else ("broker", "<default>")
            out.setdefault(entity, {})
            continue
        item = _CONFIG_LINE.match(line)
        assert item and entity, f"kafka-configs printed an unexpected line: {line!r}"
        out[entity][item.group(1)] = None if item.group(3) == "true" else item.group(2)
    return out


def parse_quorum_status(text: str) -> dict:
    """kafka-metadata-quorum describe --status: {field: value}, the voter and
    observer lists as JSON where the release prints JSON, else as printed."""
    out = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def parse_quorum_replication(text: str) -> "list[dict[str, str]]":
    """kafka-metadata-quorum describe --replication: one dict per row, by
    the column names of its header line (tab separated, padded)."""
    rows = [[cell.strip() for cell in line.split("\t")] for line in text.splitlines() if line.strip()]
    header = [name for name in rows[0] if name]
    return [dict(zip(header, row)) for row in rows[1:]]


_DUMPED = re.compile(r"^\| offset: (\d+) CreateTime: (-?\d+) keySize: -?\d+ valueSize: -?\d+ "
                     r"sequence: -?\d+ headerKeys: \[[^]]*\] (.*)$")
_CONTROL_TYPE = re.compile(r"^controlType: (\w+)\(\d+\)$")


@dataclass
class DumpedRecord:
    """One record as kafka-dump-log --cluster-metadata-decoder printed it:
    its type as Kafka names it (``PARTITION_CHANGE_RECORD``, ``LeaderChange``,
    ``LEADER_CHANGE`` where only the control type is printed), and its
    version and fields where printed (None where not)."""

    offset: int
    time: int
    type: str
    version: "int | None"
    data: "dict | None"


def parse_dump(text: str) -> "dict[str, list[DumpedRecord]]":
    """{file name: its records} from kafka-dump-log's answer on ``--files``."""
    out: dict = {}
    records = None
    for line in text.splitlines():
        if line.startswith("Dumping "):
            records = out.setdefault(line[len("Dumping "):].rsplit("/", 1)[-1], [])
            continue
        found = _DUMPED.match(line)
        if not found:
            continue
        offset, time, rest = int(found.group(1)), int(found.group(2)), found.group(3)
        records.append(_dumped(offset, time, rest))
    return out


def _dumped(offset: int, time: int, rest: str) -> DumpedRecord:
    if rest.startswith("payload: "):
        payload = json.loads(rest[len("payload: "):])
        return DumpedRecord(offset, time, payload["type"], payload["version"], payload["data"])
    control = _CONTROL_TYPE.match(rest)
    if control:
        return DumpedRecord(offset, time, control.group(1), None, None)
    name, _, body = rest.partition(" ")
    return DumpedRecord(offset, time, name.rstrip(":"), None, json.loads(body))
