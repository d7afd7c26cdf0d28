"""How ``log`` prints records and batches, in text and JSON.

Lines are made a batch at a time and written with one call: ``log`` prints
hundreds of thousands of them a second. Times repeat (a batch's records
share its append time, a controller's batches come ms apart), so the ISO
text of the last one is kept.
"""

from __future__ import annotations

from metashell.fs.tree import REDACTED
from metashell.kraft import enums
from metashell.kraft.layouts import BATCH_HEADER, compiled
from metashell.kraft.batch import (ATTR_CODEC, ATTR_CONTROL, ATTR_TRANSACTIONAL, CODEC_NAMES,
                                    LOG_OVERHEAD)
from metashell.loader.log_walk import LogBatch
from metashell.render import json_text
from metashell.replay.describe import describe
from metashell.timefmt import iso_time

_SCRAM_APIS = (11,)      # UserScramCredentialRecord: salts and keys
_CONFIG_API = 4


def redacted(api_key: "int | None", data: dict) -> dict:
    """``data`` of a metadata record with its secrets replaced by
    ``[redacted]``: SCRAM salts and keys, sensitive config values."""
    if api_key in _SCRAM_APIS:
        return _hide_bytes(data)
    if (api_key == _CONFIG_API and data.get("value") is not None
            and enums.is_sensitive_config(data.get("name", ""))):
        return {**data, "value": REDACTED}
    return data


def _hide_bytes(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return REDACTED
    if isinstance(value, dict):
        return {k: _hide_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hide_bytes(v) for v in value]
    return value


class _Times:
    """ISO text of epoch ms, the last one kept."""

    __slots__ = ("ms", "text")

    def __init__(self):
        self.ms, self.text = None, "-"

    def __call__(self, ms: int) -> str:
        if ms != self.ms:
            self.ms, self.text = ms, iso_time(ms) or "-"
        return self.text


class RecordFormat:
    """A batch's records as lines (text: offset, time, type, version,
    summary; JSON: one object each)."""

    def __init__(self, *, json: bool, show_secrets: bool):
        self.json = json
        self.show_secrets = show_secrets
        self.time = _Times()

    def lines(self, batch: LogBatch, records: list) -> str:
        """The lines of ``records`` (of ``batch``), each ending in a newline."""
        if not self.json:
            return self._text(records)
        control = batch.header.is_control
        return "".join([self._json(r, control) for r in records])

    def _text(self, records: list) -> str:
        """Text lines, made in one loop (a method call per record fewer:
        ``log`` prints hundreds of thousands a second)."""
        time, show = self.time, self.show_secrets
        return "".join([f"{r.offset} {time(r.timestamp)} {r.name} "
                        f"{'v-' if r.version is None else 'v' + str(r.version)} "
                        f"{describe(r, show)}\n" for r in records])

    def _json(self, rec, control: bool) -> str:
        data = rec.data
        if data is not None and not self.show_secrets and rec.kind == "metadata":
            data = redacted(rec.api_key, data)
        doc = {"offset": rec.offset, "time": self.time(rec.timestamp), "epoch": rec.epoch,
               "type": rec.name, "version": rec.version, "control": control, "data": data}
        if data is None:
            doc["error"] = rec.error
        return json_text(doc) + "\n"


def _header_layout():
    return compiled(BATCH_HEADER)


class BatchFormat:
    """A batch as one line (text or JSON); a batch whose framing is
    damaged as its file, position and what is wrong."""

    def __init__(self, *, json: bool):
        self.json = json
        self.time = _Times()

    def line(self, batch: LogBatch) -> str:
        h = batch.header
        if h is None:
            if self.json:
                return json_text({"file": str(batch.file), "position": batch.position,
                                  "error": str(batch.damage)}) + "\n"
            return f"damaged {batch.damage}\n"
        doc = self._fields(batch)
        if self.json:
            return json_text(doc) + "\n"
        return self._text(doc)

    def _fields(self, batch: LogBatch) -> dict:
        """The header's fields as the declared layout reads them
        (``kraft.layouts``: what the listing shows is what the format says)."""
        h = _header_layout().parse(batch.header_bytes)
        codec = h.attributes & ATTR_CODEC
        return {"file": str(batch.file), "position": batch.position, "baseOffset": h.baseOffset,
                "lastOffset": h.baseOffset + h.lastOffsetDelta, "count": h.recordsCount,
                "epoch": h.partitionLeaderEpoch, "producerId": h.producerId,
                "producerEpoch": h.producerEpoch, "time": iso_time(h.baseTimestamp),
                "maxTime": self.time(h.maxTimestamp),
                "compression": CODEC_NAMES.get(codec, f"codec {codec}"),
                "size": h.batchLength + LOG_OVERHEAD,
                "transactional": bool(h.attributes & ATTR_TRANSACTIONAL),
                "control": bool(h.attributes & ATTR_CONTROL), "crcValid": batch.crc_valid}

    @staticmethod
    def _text(d: dict) -> str:
        flags = "".join((" transactional" if d["transactional"] else "",
                         " control" if d["control"] else ""))
        crc = "crc ok" if d["crcValid"] else "CRC MISMATCH"
        return (f"offsets {d['baseOffset']}-{d['lastOffset']} count {d['count']} "
                f"epoch {d['epoch']} producer {d['producerId']}/{d['producerEpoch']} "
                f"time {d['maxTime']} compression {d['compression']} size {d['size']} "
                f"position {d['position']}{flags} {crc}\n")
