"""Every metadata and control record each Kafka release defines, at every
version that release can write, is in metashell's catalog with the same
fields: the schemas are read from the release's own jars (kafka-metadata,
kafka-clients), so a release that adds a record version fails here until the
catalog knows it."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from metashell.kraft import catalog, enums
from tests.support.catalog_checks import compare_message

from .jars import kafka_classpath

CONTROL_SCHEMAS = {"LeaderChangeMessage", "SnapshotHeaderRecord", "SnapshotFooterRecord",
                   "KRaftVersionRecord", "VotersRecord"}


def _jar(version: str, artifact: str) -> Path:
    name = f"{artifact}-{version}.jar"
    for entry in kafka_classpath(version).split(":"):
        if Path(entry).name == name:
            return Path(entry)
    raise AssertionError(f"{name} is not on Kafka {version}'s class path")


# Field names a release spelled differently from the catalog (same bytes).
RENAMED_FIELDS = {"LastKnownELR": "LastKnownElr"}


def _renamed(fields: list) -> list:
    out = []
    for f in fields:
        f = dict(f, name=RENAMED_FIELDS.get(f["name"], f["name"]))
        if "fields" in f:
            f["fields"] = _renamed(f["fields"])
        out.append(f)
    return out


def _schemas(jar: Path, folder: str) -> "list[dict]":
    """The JSON schemas under ``folder/`` in ``jar`` (comment lines dropped,
    field names as the catalog spells them)."""
    out = []
    with zipfile.ZipFile(jar) as z:
        for name in sorted(z.namelist()):
            if name.startswith(folder) and name.endswith(".json"):
                text = "\n".join(line for line in z.read(name).decode().splitlines()
                                 if not line.lstrip().startswith("//"))
                schema = json.loads(text)
                schema["fields"] = _renamed(schema.get("fields", []))
                out.append(dict(schema, _file=f"{jar.name}!{name}"))
    return out


def _minor(version: str) -> "tuple[int, int]":
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _layout_for(api_key: int, version: str):
    """The catalog's layout of ``api_key`` that ``version`` writes: a
    superseded one whose release range (``"3.0-3.5"``) holds it, else the current."""
    for old in catalog.SUPERSEDED.get(api_key, ()):
        first, last = old.layout.split("-")
        if _minor(first) <= _minor(version) <= _minor(last):
            return old
    return catalog.METADATA.get(api_key)


def test_catalog_knows_every_metadata_record_of_the_release(kafka_version):
    schemas = _schemas(_jar(kafka_version, "kafka-metadata"), "common/metadata/")
    assert len(schemas) >= 15, f"Kafka {kafka_version}: too few metadata schemas found"
    for schema in schemas:
        assert schema["type"] == "metadata", schema["_file"]
        ours = _layout_for(schema["apiKey"], kafka_version)
        assert ours is not None, f"{schema['_file']}: apiKey {schema['apiKey']} not in the catalog"
        compare_message(ours, schema)


def test_catalog_knows_every_control_record_of_the_release(kafka_version):
    schemas = [s for s in _schemas(_jar(kafka_version, "kafka-clients"), "common/message/")
               if s["name"] in CONTROL_SCHEMAS]
    assert {"LeaderChangeMessage", "SnapshotHeaderRecord"} <= {s["name"] for s in schemas}
    by_name = {m.name: m for m in catalog.CONTROL.values()}
    for schema in schemas:
        assert schema["name"] in by_name, f"{schema['_file']}: not in the catalog"
        compare_message(by_name[schema["name"]], schema)


def test_every_metadata_version_of_the_release_has_its_name(kafka_version):
    """The release's MetadataVersion constants (IBP_3_0_IV1 ... in level order,
    read from its class file) are the names metashell gives the levels."""
    jar = _jar(kafka_version, "kafka-server-common")
    with zipfile.ZipFile(jar) as z:
        body = z.read("org/apache/kafka/server/common/MetadataVersion.class").decode("latin-1")
    names = [f"{a}.{b}-IV{c}" for a, b, c in re.findall(r"IBP_([34])_(\d+)_IV(\d+)", body)]
    names = list(dict.fromkeys(n for n in names if n != "3.0-IV0"))
    level_of = {name: level for level, name in enums.METADATA_VERSIONS.items()}
    assert names and all(n in level_of for n in names), \
        f"Kafka {kafka_version}: {[n for n in names if n not in level_of]} have no level here"
    levels = [level_of[n] for n in names]
    assert levels == list(range(levels[0], levels[0] + len(levels))), names
