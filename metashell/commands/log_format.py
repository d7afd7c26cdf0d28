"""How ``log`` prints records and batches, in text and JSON.

Lines are made a batch at a time and written with one call: ``log`` prints
hundreds of thousands of them a second. Times repeat (a batch's records
share its append time, a controller's batches come ms apart), so the ISO
text of the last one is kept.
"""

from __future__ import annotations

from metashell.kraft import catalog
from metashell.kraft.kafka_json import kafka_json
from metashell.kraft.layouts import BATCH_HEADER, compiled
from metashell.kraft.records import resolve_metadata
from metashell.kraft.secrets import redacted
from metashell.kraft.batch import (ATTR_CODEC, ATTR_CONTROL, ATTR_TRANSACTIONAL, CODEC_NAMES,
                                    LOG_OVERHEAD)
from metashell.loader.log_walk import LogBatch
from metashell.render import json_lines, json_text
from metashell.queries.describe import describe, describer
from metashell.timefmt import iso_time



class _Times:
    """ISO text of epoch ms, the last one kept, and the text up to the
    seconds of the last second (a controller's batches come ms apart: most
    times need only their milliseconds written, not a strftime)."""

    __slots__ = ("ms", "text", "second", "prefix")

    def __init__(self):
        self.ms, self.text = None, "-"
        self.second, self.prefix = None, ""

    def __call__(self, ms: int) -> str:
        if ms == self.ms:
            return self.text
        self.ms = ms
        if ms is None or ms < 0:
            self.text = "-"
            return "-"
        second, milli = divmod(ms, 1000)
        if second == self.second:
            text = self.text = f"{self.prefix}{milli:03d}Z"
            return text
        text = self.text = iso_time(ms) or "-"
        if text.endswith("Z"):
            self.second, self.prefix = second, text[:-4]
        return text


#: the type column's width in text: the longest record type name (columns line up
#: whatever types a stretch of the log holds, without reading ahead)
TYPE_WIDTH = max(len(m.name) for m in (*catalog.METADATA.values(), *catalog.CONTROL.values()))


class RecordFormat:
    """A batch's records as lines (text: offset, time, type, version,
    summary, in columns: offsets right-aligned to ``offset_width``; JSON:
    one object each). ``whole``: summaries never cut (``--full``)."""

    def __init__(self, *, json: bool, show_secrets: bool, offset_width: int = 0,
                 whole: bool = False):
        self.json = json
        self.show_secrets = show_secrets
        self.time = _Times()
        self.describers: dict = {}   # record name -> its describer
        self.offset_width = offset_width
        self.whole = whole

    def lines(self, batch: LogBatch, records: list) -> str:
        """The lines of ``records`` (of ``batch``), each ending in a newline."""
        if not self.json:
            return self._text(records)
        control, doc = batch.header.is_control, self._doc
        return json_lines([doc(r, control) for r in records])

    def _text(self, records: list) -> str:
        """Text lines, made in one loop (a method call per record fewer:
        ``log`` prints hundreds of thousands a second), each summary by its
        type's describer, looked up once per type."""
        time, show, describers = self.time, self.show_secrets, self.describers
        width, whole = self.offset_width, self.whole
        lines = []
        add = lines.append
        ms, when = time.ms, time.text   # a batch's records mostly share its time
        for r in records:
            d, name = r.data, r.name
            if r.timestamp != ms:
                ms = r.timestamp
                when = time(ms)
            if d is None:
                summary = describe(r, show)
            else:
                fn = describers.get(name)
                if fn is None:
                    fn = describers[name] = describer(name, whole)
                summary = fn(d, show)
            version = r.version
            add(f"{r.offset:>{width}} {when} {name:<{TYPE_WIDTH}} "
                f"{'v-' if version is None else 'v' + str(version):<3} {summary}\n")
        return "".join(lines)

    def _doc(self, rec, control: bool) -> dict:
        data = rec.data
        if data is not None and not self.show_secrets and rec.kind == "metadata":
            data = redacted(rec.api_key, data)
        if data is not None:
            spec = _spec(rec)
            if spec is not None:
                data = kafka_json(spec, rec.version, data)
        doc = {"offset": rec.offset, "time": self.time(rec.timestamp), "epoch": rec.epoch,
               "type": rec.name, "version": rec.version, "control": control, "data": data}
        if data is None:
            doc["error"] = rec.error
        return doc


def _spec(rec):
    """The catalog message ``rec`` was decoded with (a quickly read record,
    always frame 1 and the current layout, names none: looked up)."""
    spec = getattr(rec, "spec", None)
    if spec is None and rec.kind == "metadata" and rec.api_key is not None:
        spec, _ = resolve_metadata(1, rec.api_key, rec.version)
    return spec


def _header_layout():
    return compiled(BATCH_HEADER)


class BatchFormat:
    """A batch as one line (text or JSON); a batch whose framing is
    damaged as its file, position and what is wrong. Text in columns:
    offsets and counts to ``offset_width``, sizes and positions to
    ``size_width``."""

    def __init__(self, *, json: bool, offset_width: int = 0, size_width: int = 0):
        self.json = json
        self.time = _Times()
        self.offset_width, self.size_width = offset_width, size_width

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

    def _text(self, d: dict) -> str:
        flags = "".join((" transactional" if d["transactional"] else "",
                         " control" if d["control"] else ""))
        crc = "crc ok" if d["crcValid"] else "CRC MISMATCH"
        ow, sw = self.offset_width, self.size_width
        offsets = f"{d['baseOffset']:>{ow}}-{d['lastOffset']:<{ow}}"
        return (f"offsets {offsets} count {d['count']:>{ow}} "
                f"epoch {d['epoch']:>3} producer {d['producerId']:>2}/{d['producerEpoch']:<2} "
                f"time {d['maxTime']} compression {d['compression']:<6} size {d['size']:>{sw}} "
                f"position {d['position']:>{sw}} {crc}{flags}\n")
