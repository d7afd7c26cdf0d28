"""Kafka's own metadata shell beside metashell's ``/image`` view (no tests here).

``kafka_dumps(files)`` runs Kafka's shell on every file in one JVM (the
``ImageDump.java`` driver: ``tree /image`` per file, the paths
``find`` would print read from it); ``our_dumps(file)`` gives metashell's answers to the same two
commands (``--show-secrets``: Kafka's shell prints secrets in clear);
``kafka_as_ours`` turns Kafka's text into what metashell prints on purpose
where the README documents a difference (Kafka's bugs that metashell fixes),
``with_kafkas_default_quota_names`` ours into Kafka's where Kafka's text
cannot be turned back (the names of default client-quota entities).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .jars import cache_root, compiled, log_config, require_java_and_maven, shell_classpath

DRIVER = Path(__file__).resolve().parent / "ImageDump.java"
NEWEST = "4.3.1"
# the metadata.version feature levels NEWEST's image takes: 4.x none before
# 3.3-IV3 (7), 4.3 none after its own newest (31); a file of another level
# fails its loader ("Unsupported metadata version", "No MetadataVersion with
# feature level 33") and it shows nothing
NEWEST_LEVELS = range(7, 32)
JVM_TIMEOUT_S = 600


@dataclass
class Dump:
    """One shell's answers for one file: ``status`` "ok", "hang" or "error …"."""

    status: str
    find: str = ""
    tree: str = ""


def _driver_classes(version: str) -> Path:
    """The driver compiled against ``version``'s shell (once per source change)."""
    return compiled(DRIVER, cache_root() / version / "image-dump", shell_classpath(version))


def kafka_dumps(files, out_dir: Path, version: str = NEWEST,
                timeout_ms: int = 2000) -> list[Dump]:
    """Kafka's shell ``version`` on each of ``files``, all in one JVM."""
    require_java_and_maven()
    classes = _driver_classes(version)
    option, _ = log_config(version)
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["java", "-Xss4m", option, f"-Dkafka.logs.dir={out_dir}",
           "-cp", f"{classes}{os.pathsep}{shell_classpath(version)}",
           "ImageDump", str(out_dir), str(timeout_ms), *map(str, files)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=JVM_TIMEOUT_S)
    dumps = []
    for n in range(len(files)):
        status = (out_dir / f"{n}.status").read_text()
        tree = (out_dir / f"{n}.tree").read_text(encoding="utf-8") if status == "ok" else ""
        dumps.append(Dump(status, paths_of_tree(tree), tree))
    return dumps


def paths_of_tree(tree: str) -> str:
    """What ``find /image`` prints, read from ``tree /image``'s text: every
    line ending in ``:`` names a node, its depth given by its indent (a value
    ending in ``:`` would read as a node: the inputs here have none)."""
    found, stack = ["/image"], []
    for line in tree.splitlines():
        if not line.endswith(":"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        del stack[depth:]
        stack.append(line.strip()[:-1])
        found.append("/image/" + "/".join(stack))
    return "\n".join(found) + "\n"


def our_dumps(path) -> Dump:
    """metashell's ``find /image`` and ``tree /image`` on ``path``."""
    from metashell.commands import Context, run_words
    from metashell.errors import MetashellError
    from metashell.session.files import open_session

    try:
        session = open_session(path, show_secrets=True)
    except MetashellError as e:
        return Dump(f"error {e}")
    texts = {}
    for command in ("find", "tree"):
        out, err = io.StringIO(), io.StringIO()
        ctx = Context.for_session(session, out=out, err=err)
        status = run_words(ctx, [command, "/image"])
        assert status == 0, f"{path}: {command} /image: {err.getvalue()}"
        texts[command] = out.getvalue()
    session.close()
    return Dump("ok", texts["find"], texts["tree"])


_OPTIONAL_VERSION = re.compile(r"^(\s*)Optional\[(.*)\]$", re.M)
_EMPTY_VERSION = re.compile(r"^(\s*)Optional\.empty$", re.M)
_TOKEN = re.compile(r"DelegationTokenDatatokenId=(.*?)\(owner=(.*?)\(tokenRequester=(.*?)"
                    r"\(renewers=(.*?), issueTimestamp=(-?\d+), maxTimestamp=(-?\d+)\), "
                    r"expiryTimestamp=(-?\d+)$", re.M)
_NOTHING_LOADED = re.compile(r"^provenance:\n  offset -1, ", re.M)
# config keys Kafka 4.x no longer defines: its image leaves them out
# (ConfigurationDelta asks SupportedConfigChecker), metashell shows what the log holds
REMOVED_CONFIGS = ("message.timestamp.difference.max.ms",)
_REMOVED_FIND = re.compile(r"^/image/configs/[^\n]*/(?:%s)\n" % "|".join(map(re.escape, REMOVED_CONFIGS)),
                           re.M)
_REMOVED_TREE = re.compile(r"^    (?:%s):\n      [^\n]*\n" % "|".join(map(re.escape, REMOVED_CONFIGS)),
                           re.M)
_PROVENANCE = re.compile(r"^(\s*offset )-?\d+(, epoch -?\d+, time .*)$", re.M)


def kafka_as_ours(text: str) -> str:
    """Kafka's ``tree``/``cat`` text with the documented differences made as
    metashell makes them: the metadata version without ``Optional[…]`` (null
    when unset), and the delegation-token text balanced."""
    text = _OPTIONAL_VERSION.sub(r"\1\2", text)
    text = _EMPTY_VERSION.sub(r"\1null", text)
    return _TOKEN.sub(r"DelegationTokenData(tokenId=\1, owner=\2, tokenRequester=\3, "
                      r"renewers=\4, issueTimestamp=\5, maxTimestamp=\6, expiryTimestamp=\7)",
                      text)


def provenance_offset(tree: str) -> "int | None":
    found = re.search(r"^provenance:\n  offset (-?\d+),", tree, re.M)
    return int(found.group(1)) if found else None


def without_provenance(text: str) -> str:
    return re.sub(r"^(provenance:\n  )offset .*$", r"\1*", text, flags=re.M)


def without_provenance_offset(text: str) -> str:
    """The provenance line with its offset left out: for a snapshot Kafka's
    shell shows the offset inside the file, metashell the log's."""
    return _PROVENANCE.sub(r"\1*\2", text)


def without_provenance_time(text: str) -> str:
    return _PROVENANCE_TIME.sub(r"\1*", text)


_PROVENANCE_TIME = re.compile(r"^(\s*offset -?\d+, epoch -?\d+, time ).*$", re.M)


def loaded_nothing(dump: Dump) -> bool:
    """Kafka's shell showed the empty image (provenance offset -1): it read
    the file but applied nothing (a log without metadata.version, which 4.x
    refuses; a one-batch file whose end it misses)."""
    return dump.status == "ok" and _NOTHING_LOADED.search(dump.tree) is not None


def without_removed_configs(dump: Dump) -> Dump:
    """metashell's answers without the config keys Kafka 4.x leaves out."""
    return Dump(dump.status, _REMOVED_FIND.sub("", dump.find), _REMOVED_TREE.sub("", dump.tree))


_DEFAULT_QUOTA_PART = re.compile(r"(?:^|_)(?:clientId|ip|user)\(<default>\)")


def kafka_quota_name(name: str) -> str:
    """A client-quota entity's name under ``/image/clientQuotas`` as Kafka's
    shell writes it: a default name (``<default>`` here) and its type left
    out, so ``user(<default>)`` is empty and ``clientId(a)_user(<default>)``
    is ``clientId(a)``."""
    return _DEFAULT_QUOTA_PART.sub("", name).lstrip("_")


def with_kafkas_default_quota_names(dump: Dump) -> Dump:
    """metashell's answers with default client-quota entities named as
    Kafka's shell names them (README: a documented difference; Kafka's
    names are ambiguous, so its text cannot be turned into ours). Kafka
    lists such a name where the entity is, in its order, and shows under it
    what it finds by the name: the entity really named so, else nothing.
    ``find`` is then read from ``tree`` (checked equal before)."""
    if "(<default>)" not in dump.tree:
        return dump
    lines = dump.tree.splitlines(keepends=True)
    start = lines.index("clientQuotas:\n") + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), len(lines))
    blocks: "dict[str, list[str]]" = {}
    for line in lines[start:end]:
        if not line.startswith("   "):
            name = line.strip()[:-1]
            blocks[name] = []
        else:
            blocks[name].append(line)
    section = []
    for name in sorted((kafka_quota_name(n) for n in blocks), key=_java_order):
        section += [f"  {name}:\n", *blocks.get(name, [])]
    tree = "".join(lines[:start] + section + lines[end:])
    return Dump(dump.status, paths_of_tree(tree), tree)


def _java_order(name: str) -> "list[int]":
    """``String.compareTo`` order: by UTF-16 code units."""
    data = name.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def differences(name: str, kafka: Dump, ours: Dump, snapshot: bool,
                snapshot_time: bool = False) -> list[str]:
    """Every line where the two shells differ (after the documented changes).
    ``snapshot_time``: ours read a metadata dir whose newest snapshot ends
    where Kafka's log does, so its provenance time is the snapshot's
    (the time the controller recorded in its header, which can be some
    milliseconds after the last batch's own, which Kafka's shell shows of
    the log): the time is left out, the offset and epoch compared."""
    out = []
    if kafka.status != "ok":
        return [f"{name}: Kafka's shell: {kafka.status}"]
    if ours.status != "ok":
        return [f"{name}: metashell: {ours.status}"]
    if "(<default>)" in ours.tree and paths_of_tree(ours.tree) != ours.find:
        return [f"{name}: metashell's find /image and tree /image disagree"]
    ours = with_kafkas_default_quota_names(without_removed_configs(ours))
    for kind in ("find", "tree"):
        theirs, mine = kafka_as_ours(getattr(kafka, kind)), getattr(ours, kind)
        if snapshot:
            theirs, mine = without_provenance_offset(theirs), without_provenance_offset(mine)
        elif (provenance_offset(kafka.tree) or 0) < (provenance_offset(ours.tree) or 0):
            # Kafka's shell is caught up at the last offset - 1: it may show the
            # image before a log's last batch (the files here end in a NoOp
            # batch). Or ours read a metadata dir whose newest snapshot ends
            # after the log's last batch of metadata records: a 4.x controller's
            # snapshot also covers the control batches after it (a leader change
            # as the quorum stopped: seen on 4.0.2), whose offset and epoch its
            # id carries, while Kafka's shell read the log, cut after that batch
            theirs, mine = without_provenance(theirs), without_provenance(mine)
        elif snapshot_time:
            theirs, mine = without_provenance_time(theirs), without_provenance_time(mine)
        if theirs != mine:
            out.append(f"{name}: {kind} /image differs:\n" + _first_difference(theirs, mine))
    return out


def _first_difference(theirs: str, mine: str) -> str:
    a, b = theirs.splitlines(), mine.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"  line {i + 1}:\n  kafka: {x}\n  ours:  {y}"
    return f"  kafka has {len(a)} lines, ours {len(b)}"


def joined_log(segments: "list[Path]", into: Path) -> Path:
    """The node's whole log as one segment (its batches in offset order, as
    the segments hold them), for Kafka's shell, which reads a file."""
    into.mkdir(parents=True, exist_ok=True)
    out = into / segments[0].name
    with open(out, "wb") as f:
        for seg in segments:
            f.write(seg.read_bytes())
    return out
