"""Frames between the grading processes and the sandbox: JSON headers and raw numeric arrays.

A frame is `MAGIC`, the header's length (4 bytes) and the payload's length (8 bytes), then a JSON
header and the payload: the raw bytes of the arrays the header lists (dtype, shape). There is no
pickle, no compression and no object array anywhere, and the reader checks every length, dtype
and element count against its caps BEFORE it allocates, so a frame written by student code can
be wrong or hostile but never expands, executes or exhausts the reader.

This file runs on both sides: imported by the grading process, and loaded as a script's
neighbour inside the sandbox (standard library and numpy only).
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

MAGIC = b"ACW1"
_PREFIX = struct.Struct("<4sIQ")  # magic, header bytes, payload bytes

# Plain numbers only: booleans, integers, floats and complex numbers of at most 16 bytes.
ARRAY_KINDS = "biufc"
MAX_ITEMSIZE = 16


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
        arr = np.asarray(arr)
        if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make 0-d arrays 1-d)
            arr = arr.copy(order="C")
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
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Deadline()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise Deadline()
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise Closed()
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _arrays(specs: object, payload: bytes, caps: Caps) -> list[np.ndarray]:
    if not isinstance(specs, list):
        raise WireError("malformed array list")
    arrays, total = [], 0
    for spec in specs:
        if not isinstance(spec, dict):
            raise WireError("malformed array entry")
        try:
            dtype = np.dtype(str(spec["dtype"]))
        except (KeyError, TypeError):
            raise WireError("malformed dtype") from None
        if dtype.kind not in ARRAY_KINDS or dtype.itemsize > MAX_ITEMSIZE or dtype.fields:
            raise WireError(f"an array of dtype {str(dtype)[:20]} is not plain numbers")
        shape = spec.get("shape")
        offset = spec.get("offset")
        if (
            not isinstance(shape, list)
            or len(shape) > 32
            or not all(type(d) is int and d >= 0 for d in shape)
            or type(offset) is not int
        ):
            raise WireError("malformed array shape")
        count = 1
        for d in shape:
            count = min(count * d, caps.elements + 1)  # never a huge number, whatever the dims
        total += count
        if total > caps.elements:
            raise WireError(f"arrays of more than {caps.elements} elements")
        size = count * dtype.itemsize
        if offset < 0 or offset + size > len(payload):
            raise WireError("array outside its frame")
        arrays.append(np.frombuffer(payload, dtype, count, offset).reshape(tuple(shape)).copy())
    return arrays


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
    try:
        header = json.loads(_read_exactly(fd, header_len, deadline))
    except (ValueError, UnicodeDecodeError):
        raise WireError("malformed frame header") from None
    if not isinstance(header, dict):
        raise WireError("malformed frame header")
    payload = _read_exactly(fd, payload_len, deadline)
    return header, _arrays(header.get("arrays", []), payload, caps)
