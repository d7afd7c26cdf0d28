"""Whether a file is a Kafka log segment or snapshot at all.

Every such file starts with a record batch, whose magic byte, at byte 16,
is 2 (0 or 1 in the legacy message sets older logs hold). A file whose
byte 16 is anything else is not one: random bytes or text would otherwise
be reported as a damaged batch, with a batch length or an offset read from
bytes that never were either. A file of zeros (preallocated), or too short
to hold that byte, is left to the batch reader, and so is one that starts
like a Kafka file and is damaged later: its damage keeps its precise
message.
"""

from __future__ import annotations

from ..errors import CorruptDataError

MAGIC_AT = 16                 # a record batch's magic byte
_MAGICS = (0, 1, 2)
_PREVIEW = 24                 # bytes shown of the file's start
_PRINTABLE = set(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}


class NotKafkaFileError(CorruptDataError):
    """A file that is no Kafka log segment or snapshot: said so, with what
    it starts with (its position is byte 16, the magic byte looked at)."""

    def __init__(self, path, detail: str):
        super().__init__(path, MAGIC_AT, detail)
        self.args = (f"{self.path}: not a Kafka log segment or snapshot ({detail})",)

    def __str__(self) -> str:
        return self.args[0]


def not_kafka_file(buf, path) -> "NotKafkaFileError | None":
    """The error naming ``path`` and what it starts with where ``buf`` (its
    bytes) cannot be a Kafka log segment or snapshot, else None."""
    if len(buf) <= MAGIC_AT or buf[MAGIC_AT] in _MAGICS:
        return None
    return NotKafkaFileError(path, f"byte {MAGIC_AT}, a record batch's magic, is "
                                   f"{buf[MAGIC_AT]}, not 2; it starts with "
                                   f"{_preview(bytes(buf[:_PREVIEW]))}")


def _preview(head: bytes) -> str:
    """The file's first bytes: as text where they are printable, else in hex."""
    if all(b in _PRINTABLE for b in head):
        text = head.decode("ascii").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        return f'text "{text}..."'
    return "bytes " + head[:12].hex(" ") + " ..."
