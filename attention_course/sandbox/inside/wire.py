"""Frames between the grading processes and the sandbox: JSON headers and raw numeric arrays.

A frame is `MAGIC`, the header's length (4 bytes) and the payload's length (8 bytes), then a JSON
header and the payload: the raw bytes of the arrays the header lists (dtype, shape). There is no
pickle, no compression and no object array anywhere, and the reader checks every length, dtype
and element count against its caps BEFORE it allocates, so a frame written by student code can
be wrong or hostile but never expands, executes or exhausts the reader. Whatever the bytes, the
reader returns a frame or raises one of its own three exceptions: `WireError` (the frame does
not decode), `Closed` or `Deadline`; nothing else comes out of decoding. A header's strings are
always text that can be written out (a lone half of a surrogate pair becomes "?").

This file runs on both sides: imported by the grading process, and loaded as a script's
neighbour inside the sandbox (standard library and numpy only).
"""

from __future__ import annotations

import json
import os
import re
import select
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

_T = TypeVar("_T")

MAGIC = b"ACW1"
_PREFIX = struct.Struct("<4sIQ")  # magic, header bytes, payload bytes

# Plain numbers only: booleans, integers, floats and complex numbers of at most 16 bytes.
ARRAY_KINDS = "biufc"
MAX_ITEMSIZE = 16
# A dtype on the wire is exactly what `arr.dtype.str` writes for such numbers ("<f8", "|b1").
_DTYPE = re.compile(r"[<>|=]?[biufc](?:1|2|4|8|16)")
MAX_DIMS = 32  # dimensions of one array
MAX_ARRAYS = 1 << 16  # arrays in one frame
MAX_HEADER_DEPTH = 64  # lists and objects nested in a header
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a JSON string, escapes and all
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_CLOSING = np.frombuffer(b"]}", np.uint8)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")  # escaped, or raw (which json takes)


class WireError(ValueError):
    """A frame that breaks the protocol or a cap (written by a broken or hostile peer)."""


class Closed(EOFError):
    """The peer closed its end before a whole frame arrived."""


class Deadline(TimeoutError):
    """No whole frame arrived before the deadline."""


def _array_spec(arr: np.ndarray, offset: int) -> dict[str, Any]:
    return {"dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset}


def pack(header: dict[str, Any], arrays: Sequence[np.ndarray] = ()) -> bytes:
    """One frame: `header` (JSON-able) plus `arrays` listed under header["arrays"]."""
    specs, chunks, offset = [], [], 0
    for arr in arrays:
        arr = np.asarray(arr)  # (its bytes are taken in C order, whatever its layout)
        if arr.dtype.kind not in ARRAY_KINDS or arr.dtype.itemsize > MAX_ITEMSIZE:
            raise WireError(f"cannot send an array of dtype {arr.dtype}")
        specs.append(_array_spec(arr, offset))
        data = arr.tobytes()
        chunks.append(data)
        offset += len(data)
    body = dict(header, arrays=specs)
    text = json.dumps(body, allow_nan=True).encode()
    return _PREFIX.pack(MAGIC, len(text), offset) + text + b"".join(chunks)


def write_frame(
    fd: int,
    header: dict[str, Any],
    arrays: Sequence[np.ndarray] = (),
    deadline: float | None = None,
) -> None:
    """Write one frame; with a deadline, never block past it (raises Deadline)."""
    data = memoryview(pack(header, arrays))
    while data:
        if deadline is not None:
            left = deadline - time.monotonic()
            _, ready, _ = select.select([], [fd], [], max(left, 0))
            if not ready:
                raise Deadline()
            n = os.write(fd, data[: select.PIPE_BUF])
        else:
            n = os.write(fd, data)
        data = data[n:]


class Caps:
    """What a reader accepts from one frame."""

    def __init__(self, header_bytes: int, payload_bytes: int, elements: int):
        self.header_bytes = header_bytes
        self.payload_bytes = payload_bytes
        self.elements = elements


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes:
    """`n` bytes (within the caps: checked before), read into their place as they come."""
    data = bytearray(n)
    view, got = memoryview(data), 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Deadline()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise Deadline()
        count = os.readv(fd, [view[got:]])
        if not count:
            raise Closed()
        got += count
    return bytes(data)


def _deeper(text: bytes, limit: int) -> bool:
    """Whether brackets nest more than `limit` deep in `text`, counted at C speed."""
    marks = text.translate(None, _NOT_BRACKETS)
    if len(marks) <= limit:  # nested no deeper than it has brackets (most frames: no counting)
        return False
    level, chunk = 0, 1_048_576  # brackets counted at once (their running counts: 8 MiB)
    for start in range(0, len(marks), chunk):
        part = np.frombuffer(marks, np.uint8, min(chunk, len(marks) - start), start)
        closing = np.isin(part, _CLOSING)
        running = level + np.cumsum(1 - 2 * closing.astype(np.int64))
        if int(running.max()) > limit:
            return True
        level = int(running[-1])
    return False


def _too_deep(text: bytes, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` deep in JSON `text`, found without
    parsing it. Brackets inside strings do not count; they are only taken out (the slower
    pass) when counting them too would go over the limit."""
    return _deeper(text, limit) and _deeper(_STRING.sub(b"", text), limit)


def _header(text: bytes) -> dict[str, Any]:
    """The JSON object of a frame's header, within the nesting limit."""
    if _too_deep(text, MAX_HEADER_DEPTH):
        raise WireError(f"a frame header nested more than {MAX_HEADER_DEPTH} deep")
    try:
        header: object = json.loads(text)
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        raise WireError("malformed frame header (not JSON)") from None
    if not isinstance(header, dict):
        raise WireError("malformed frame header (not a JSON object)")
    if _SURROGATE.search(text):  # emoji (a pair of halves: fine), or a half alone
        # A lone half of a surrogate pair is no text a file or a terminal can hold: "?".
        plain = json.dumps(header, ensure_ascii=False).encode("utf-8", "replace")
        return cast(dict[str, Any], json.loads(plain))  # (the object, written and read again)
    return header


def _dtype(spec: dict[str, Any]) -> np.dtype[Any]:
    """A plain number dtype, from its exact `dtype.str` form only (never a dtype expression)."""
    text = spec.get("dtype")
    if not isinstance(text, str):
        raise WireError("malformed dtype")
    if not _DTYPE.fullmatch(text):
        raise WireError(f"an array of dtype {text[:20]!r} is not plain numbers")
    try:  # the pattern admits one kind of ARRAY_KINDS, at most MAX_ITEMSIZE bytes, no fields
        return np.dtype(text)
    except TypeError:  # a size this machine has no such number of ("b2", "f16" elsewhere)
        raise WireError(f"an array of dtype {text} is not plain numbers") from None


def _shape(spec: dict[str, Any], caps: Caps) -> tuple[tuple[int, ...], int]:
    """(shape, element count): non-negative ints whose product, an empty dimension counted as
    one, is within the element cap (checked as it is multiplied: one side, at most as long as
    the header's longest number, past the cap at a time)."""
    shape = spec.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMS
        or not all(type(d) is int and d >= 0 for d in shape)
    ):
        raise WireError("malformed array shape")
    extent = 1
    for d in shape:
        extent *= max(d, 1)
        if extent > caps.elements:
            raise WireError(f"an array of more than {caps.elements} elements")
    return tuple(shape), 0 if 0 in shape else extent


def _arrays(specs: object, payload: bytes, caps: Caps) -> list[np.ndarray]:
    if not isinstance(specs, list) or len(specs) > MAX_ARRAYS:
        raise WireError("malformed array list")
    arrays, total = [], 0
    for spec in specs:
        if not isinstance(spec, dict):
            raise WireError("malformed array entry")
        dtype = _dtype(spec)
        shape, count = _shape(spec, caps)
        total += count
        if total > caps.elements:
            raise WireError(f"arrays of more than {caps.elements} elements")
        offset = spec.get("offset")
        if type(offset) is not int:
            raise WireError("malformed array offset")
        if offset < 0 or offset + count * dtype.itemsize > len(payload):
            raise WireError("array outside its frame")
        flat = np.frombuffer(payload, dtype, count, offset) if count else np.empty(0, dtype)
        arrays.append(flat.reshape(shape).copy())
    return arrays


def _decoded(what: str, decode: Callable[[], _T]) -> _T:
    """`decode()`, with any failure it still has in it made a WireError (the checks above are
    meant to leave none: this is the last line, so a frame never escapes as something else)."""
    try:
        return decode()
    except WireError:
        raise
    except Exception as exc:
        raise WireError(f"malformed {what} ({type(exc).__name__})") from None


def read_frame(
    fd: int, caps: Caps, deadline: float | None = None
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The next frame on `fd`: (header, arrays). Raises WireError, Closed or Deadline."""
    magic, header_len, payload_len = _PREFIX.unpack(_read_exactly(fd, _PREFIX.size, deadline))
    if magic != MAGIC:
        raise WireError("not a frame")
    if header_len > caps.header_bytes or payload_len > caps.payload_bytes:
        raise WireError(
            f"a frame of {header_len + payload_len} bytes is over the "
            f"{caps.header_bytes + caps.payload_bytes} byte limit"
        )
    text = _read_exactly(fd, header_len, deadline)
    header = _decoded("frame header", lambda: _header(text))
    payload = _read_exactly(fd, payload_len, deadline)
    return header, _decoded("array", lambda: _arrays(header.get("arrays", []), payload, caps))
