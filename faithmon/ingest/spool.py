"""The durable spool: what the receiver acknowledged is on disk before the 200.

Every accepted export is appended to the current segment file as one entry
(magic, length, CRC-32, payload) and fsynced before the receiver answers; the
pipeline tells the spool when every trace an entry touched has been stored (or
decided: sampled out, not a RAG trace), and a segment nothing open refers to is
deleted. A receiver killed at any moment replays its segments at the next start;
records are stored idempotently by trace id, so a replay adds no duplicates.

While the database is down the spool keeps growing, up to ``max_bytes``; past
that the receiver answers 503. Concurrent appends share one fsync (group commit).
A torn entry at the end of a segment (a crash mid-write) or one whose checksum
fails is skipped and counted, never replayed.

An entry is written whole or not at all: a short write (a full disk) is cut back
to the last whole entry and refused, so nothing acknowledged is torn. ``refusing``
says why the last write failed until one succeeds again (``/healthz`` reports it).

The payload is JSON of the spans as ingest holds them, so the spool reads the
same whether the export came over HTTP (protobuf or JSON) or gRPC. The folder is
created private (0700) and the segments 0600: they hold request content before
scrubbing, as the receiver's memory does, and for no longer. Once everything in
the current segment is stored it is rolled and deleted at once, so a quiet
receiver keeps no raw content at rest.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import struct
import threading
import zlib
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, SaturatedError
from .spans import IngestEvent, IngestLog, IngestSpan, TraceItem

logger = logging.getLogger(__name__)

_MAGIC = b"FMS1"
_HEADER = struct.Struct(">4sII")  # magic, payload length, CRC-32 of the payload
_SUFFIX = ".spool"


def encode(items: Sequence[TraceItem]) -> bytes:
    rows: list[list[Any]] = []
    for item in items:
        if isinstance(item, IngestSpan):
            rows.append(
                [
                    "s",
                    item.trace_id,
                    item.span_id,
                    item.parent_span_id,
                    item.name,
                    item.start_ns,
                    item.end_ns,
                    dict(item.attributes),
                    dict(item.resource),
                    item.error,
                    item.dropped_attributes,
                    [[e.name, e.time_ns, dict(e.attributes)] for e in item.events],
                    item.dropped_events,
                    item.trace_state,
                ]
            )
        else:
            rows.append(
                [
                    "l",
                    item.trace_id,
                    item.span_id,
                    item.event_name,
                    item.time_ns,
                    item.body,
                    dict(item.attributes),
                ]
            )
    # surrogatepass keeps a lone surrogate from the wire as it came; ingest repairs it later.
    return json.dumps(rows, separators=(",", ":")).encode("utf-8", "surrogatepass")


def decode(payload: bytes) -> list[TraceItem]:
    items: list[TraceItem] = []
    for row in json.loads(payload.decode("utf-8", "surrogatepass")):
        if row[0] == "s":
            (_, trace_id, span_id, parent, name, start, end, attrs, resource, error) = row[:10]
            items.append(
                IngestSpan(
                    trace_id=trace_id,
                    span_id=span_id,
                    parent_span_id=parent,
                    name=name,
                    start_ns=start,
                    end_ns=end,
                    attributes=attrs,
                    resource=resource,
                    error=error,
                    dropped_attributes=row[10],
                    events=tuple(IngestEvent(n, t, a) for n, t, a in row[11]),
                    dropped_events=row[12],
                    trace_state=row[13],
                )
            )
        else:
            _, trace_id, span_id, event_name, time_ns, body, attrs = row
            items.append(IngestLog(trace_id, span_id, event_name, time_ns, body, attrs))
    return items


class _Segment:
    __slots__ = ("file", "number", "open", "path", "size")

    def __init__(self, number: int, path: Path, size: int = 0) -> None:
        self.number = number
        self.path = path
        self.size = size
        self.open = 0  # traces with items in this segment that are not stored yet
        self.file: Any = None


class Spool:
    """Append-only, checksummed, fsynced segments in one folder, owned by one process."""

    def __init__(
        self, directory: str | os.PathLike[str], max_bytes: int, segment_bytes: int = 8 << 20
    ) -> None:
        self.directory = Path(directory).resolve()
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lock_file = open(self.directory / "LOCK", "a+")  # noqa: SIM115 (held open)
        except OSError as exc:
            raise ConfigError(
                f"FAITHMON_SPOOL_DIR: cannot use {self.directory} ({exc.strerror or exc})"
            ) from None
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise ConfigError(
                f"FAITHMON_SPOOL_DIR: {self.directory} is in use by another receiver; "
                "give each receiver a folder of its own (FAITHMON_SPOOL_DIR or "
                "`faithmon serve --spool-dir`)"
            ) from None
        self._max_bytes = max_bytes
        self._segment_bytes = segment_bytes
        self._segments: dict[int, _Segment] = {}
        # trace id → segment number → entries of the trace in it, until the trace settles
        self._traces: dict[str, Counter[int]] = {}
        for path in sorted(self.directory.glob(f"*{_SUFFIX}")):
            # A folder (or anything but a file) named like a segment is not one: skip it.
            if path.stem.isdigit() and path.is_file():
                number = int(path.stem)
                path.chmod(0o600)  # an older receiver may have left it readable
                self._segments[number] = _Segment(number, path, path.stat().st_size)
        self._recovered = sorted(self._segments)
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._written = 0  # entries appended
        self._synced = 0  # entries known to be on disk
        self.skipped = 0
        self.refusing: str | None = None  # why the last append failed, until one succeeds
        try:
            self._current = self._new_segment()
        except OSError as exc:
            raise ConfigError(
                f"FAITHMON_SPOOL_DIR: cannot write in {self.directory} ({exc.strerror or exc})"
            ) from None

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments.values())

    def _new_segment(self) -> _Segment:
        number = max(self._segments, default=0) + 1
        segment = _Segment(number, self.directory / f"{number:012d}{_SUFFIX}")
        segment.file = open(  # noqa: SIM115 (closed on roll)
            segment.path, "ab", buffering=0, opener=_private
        )
        self._segments[number] = segment
        _fsync_dir(self.directory)
        return segment

    def append(self, payload: bytes, traces: Iterable[str]) -> None:
        """Write one entry holding spans of ``traces`` and wait until it is on disk.

        The entry stays until every one of those traces is settled.

        Raises SaturatedError when the spool is full or the disk refuses the write.
        """
        entry = _HEADER.pack(_MAGIC, len(payload), zlib.crc32(payload)) + payload
        with self._lock:
            if self.size_bytes + len(entry) > self._max_bytes:
                self.refusing = f"the spool is full ({self.size_bytes // 1_000_000} MB)"
                raise SaturatedError(self.refusing)
            try:
                if self._current.size >= self._segment_bytes:
                    self._roll()
                segment = self._current
                _write_whole(segment, entry)
            except OSError as exc:
                self.refusing = f"the spool cannot be written ({exc.strerror or exc})"
                raise SaturatedError(self.refusing) from None
            self.refusing = None
            segment.size += len(entry)
            self._hold(segment, traces)
            self._written += 1
            mine = self._written
        self._sync(mine)

    def _hold(self, segment: _Segment, traces: Iterable[str]) -> None:
        for trace_id in traces:
            self._traces.setdefault(trace_id, Counter())[segment.number] += 1
            segment.open += 1

    def _sync(self, entry: int) -> None:
        # Group commit: one fsync covers every entry written before it started.
        with self._sync_lock:
            if self._synced >= entry:
                return
            with self._lock:
                upto = self._written
                # Entries in rolled segments were synced as those closed; a duplicate
                # descriptor stays valid if the current one rolls meanwhile.
                fd = os.dup(self._current.file.fileno())
            try:
                os.fsync(fd)
            except OSError as exc:
                raise SaturatedError(f"the spool cannot be synced ({exc.strerror})") from None
            finally:
                os.close(fd)
            self._synced = upto

    def _roll(self) -> None:
        old = self._current
        os.fsync(old.file.fileno())
        old.file.close()
        old.file = None
        self._current = self._new_segment()
        if old.open <= 0:
            self._delete(old)

    def settle(self, trace_ids: Iterable[str]) -> None:
        """These traces are stored (or decided): segments nothing else holds are deleted."""
        with self._lock:
            counts: Counter[int] = Counter()
            for trace_id in trace_ids:
                counts.update(self._traces.pop(trace_id, Counter()))
            for number, count in counts.items():
                segment = self._segments.get(number)
                if segment is None:
                    continue
                segment.open -= count
                if segment.open <= 0 and segment is not self._current:
                    self._delete(segment)
                    self.refusing = None  # room was made
            current = self._current
            if current.open <= 0 and current.size > 0:
                # Everything in it is stored: raw content leaves the disk now, not at
                # the next megabyte or the next clean stop.
                try:
                    self._roll()
                except OSError as exc:
                    logger.warning("faithmon: could not roll the spool (%s)", exc.strerror)

    def _delete(self, segment: _Segment) -> None:
        try:
            segment.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            logger.warning("faithmon: could not delete spool segment (%s)", exc.strerror)
            return
        self._segments.pop(segment.number, None)

    def recovered(self) -> Iterator[tuple[int, list[TraceItem]]]:
        """The items of each segment an earlier process left, oldest segment first.

        The caller holds the segment's traces (``hold``) before it hands them on,
        so a segment is deleted only once all of them are stored again.
        """
        for number in self._recovered:
            segment = self._segments.get(number)
            if segment is None:
                continue
            items: list[TraceItem] = []
            for payload in self._entries(segment.path):
                try:
                    items.extend(decode(payload))
                except (ValueError, TypeError, IndexError):
                    self.skipped += 1
            yield number, items
        with self._lock:
            for number in self._recovered:
                segment = self._segments.get(number)
                if segment is not None and segment.open <= 0:
                    self._delete(segment)
            self._recovered = []

    def items_of(self, trace_ids: Collection[str]) -> list[TraceItem]:
        """The spooled items of these unsettled traces, read back from their segments."""
        with self._lock:
            numbers = sorted({n for t in trace_ids for n in self._traces.get(t, ())})
            # Up to the size each had now: an entry being appended is not read half-written.
            found = [self._segments[n] for n in numbers if n in self._segments]
            segments = [(s.path, s.size) for s in found]
        wanted = set(trace_ids)
        items: list[TraceItem] = []
        for path, size in segments:
            for payload in self._entries(path, size):
                try:
                    items.extend(i for i in decode(payload) if i.trace_id in wanted)
                except (ValueError, TypeError, IndexError):
                    continue  # counted as skipped when the segment was first replayed
        return items

    def _entries(self, path: Path, size: int | None = None) -> Iterator[bytes]:
        data = path.read_bytes()[:size]
        offset = 0
        view = memoryview(data)
        while offset + _HEADER.size <= len(data):
            magic, length, crc = _HEADER.unpack_from(data, offset)
            start = offset + _HEADER.size
            if magic != _MAGIC or start + length > len(data):
                self.skipped += 1  # torn tail: the write never finished, never acknowledged
                logger.warning("faithmon: spool segment %s ends in a torn entry", path.name)
                return
            payload = bytes(view[start : start + length])
            offset = start + length
            if zlib.crc32(payload) != crc:
                self.skipped += 1
                logger.warning("faithmon: a spool entry in %s failed its checksum", path.name)
                continue
            yield payload

    def hold(self, number: int, traces: Iterable[str]) -> None:
        """Hold a recovered segment for ``traces`` until they are settled."""
        with self._lock:
            segment = self._segments.get(number)
            if segment is not None:
                self._hold(segment, traces)

    def close(self) -> None:
        with self._lock:
            if self._current.file is not None:
                os.fsync(self._current.file.fileno())
                self._current.file.close()
                self._current.file = None
            if self._current.open <= 0:
                self._delete(self._current)
            for segment in list(self._segments.values()):
                if segment.open <= 0 and segment.number not in self._recovered:
                    self._delete(segment)
        fcntl.flock(self._lock_file, fcntl.LOCK_UN)
        self._lock_file.close()


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


def _write_whole(segment: _Segment, entry: bytes) -> None:
    """Write every byte of ``entry`` or none: a short write is cut back and raised."""
    view = memoryview(entry)
    written = 0
    try:
        while written < len(entry):
            count = segment.file.write(view[written:])
            if not count:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written += count
    except OSError:
        if written:
            # The segment is opened for appending, so the next entry starts here again.
            os.ftruncate(segment.file.fileno(), segment.size)
        raise


def _fsync_dir(directory: Path) -> None:
    # A new file's name is durable only once its folder is synced.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
