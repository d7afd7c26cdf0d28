"""Typed errors shared by every layer.

Every error renders as one line that names the file, the byte position and,
where known, the record offset, plus what was expected. The CLI prints
``str(error)`` and exits non-zero; nothing above the loader ever needs a
traceback to explain bad input.
"""

from __future__ import annotations


class MetashellError(Exception):
    """Base of all errors the tool reports to users as one line."""


class InputError(MetashellError):
    """An input path is missing, unreadable or of an unknown kind."""

    def __init__(self, path, message: str):
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")

    @classmethod
    def unreadable(cls, path, error: OSError) -> "InputError":
        """A file that cannot be opened or read, in one wording wherever a
        file given is read (segments, snapshots, ``meta.properties``,
        ``quorum-state``)."""
        if isinstance(error, FileNotFoundError):
            return cls(path, "no such file or directory")
        if isinstance(error, IsADirectoryError):
            return cls(path, "is a directory, expected a file")
        if isinstance(error, PermissionError):
            return cls(path, "cannot read file: permission denied")
        return cls(path, f"cannot read file: {error.strerror or error}")


class CorruptDataError(MetashellError):
    """Bytes that do not follow the KRaft format.

    ``position`` is the byte position in the file (of the batch, or of the
    record when known); ``offset`` the record or batch offset when known.
    """

    def __init__(self, path, position: int | None, expected: str,
                 offset: int | None = None):
        self.path = str(path) if path is not None else "<buffer>"
        self.position = position
        self.offset = offset
        self.expected = expected
        where = []
        if position is not None:
            where.append(f"byte {position}")
        if offset is not None:
            where.append(f"offset {offset}")
        loc = f" ({', '.join(where)})" if where else ""
        super().__init__(f"{self.path}{loc}: {expected}")


class RecordDecodeError(MetashellError):
    """A record value that does not match any known layout.

    Raised by the schema decoders with a short reason; the reader turns it
    into an *undecodable record* carrying the offset and raw bytes, so one
    odd record never stops a load.
    """


class UsageError(MetashellError):
    """A command or option used the wrong way (exit code 2)."""


class LiveError(MetashellError):
    """Following a live controller quorum failed (one line: every address
    tried and what failed there; never a secret)."""
