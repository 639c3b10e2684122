"""The grading worker: runs a student's program cells, then calls its functions, one at a time.

Runs as a script inside the sandbox (`python -I worker.py SETTINGS`), standard library and numpy
only. The grading process sends one frame per step ("cell" or "call") and waits for the reply
under its own deadline; this process only answers. A cell or call that runs past its time (its
CPU time, or a longer wall-clock backstop for code that sleeps: both sent with the request) is
interrupted here by an alarm; one that ignores the alarm is killed from outside. Whatever this
process replies is untrusted: the grading process checks every frame and compares values itself.
"""

import mmap
import os
import signal
import sys
import time
import warnings
from types import FrameType
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import alarm  # noqa: E402
import boot  # noqa: E402
import numpy as np  # noqa: E402
import wire  # noqa: E402

# Keep our own references: student code may patch numpy or builtins after this point.
_asarray = np.asarray
_ndarray = np.ndarray
_generic = np.generic
_errstate = np.errstate
_monotonic = time.monotonic
_setitimer = signal.setitimer
_write_frame = wire.write_frame

MAX_DEPTH = 4
MAX_ITEMS = 64
MAX_MESSAGE = 500
REQUEST_CAPS = wire.Caps(1 << 24, 1 << 30, 1 << 27)  # requests come from the grading process


class StepTimeout(BaseException):
    """Raised by the alarm when a cell or a call runs past its time (not an Exception)."""


_step = alarm.Step()  # the running step (its limits, and when its time is up)


def _arm(request: dict[str, Any]) -> None:
    limit = float(request["timeout"])
    wall = float(request.get("wall", limit))
    _setitimer(signal.ITIMER_REAL, _step.arm(limit, wall, float(request.get("idle", 0.0))))


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    ring = _step.next_ring()
    if ring > 0:  # only slowed down (a busy machine), or a look at a step that seems asleep
        _setitimer(signal.ITIMER_REAL, ring)
        return
    raise StepTimeout()


def _short(text: object) -> str:
    text = str(text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _exception_record(exc: BaseException) -> dict[str, str]:
    try:
        message = str(exc)
    except BaseException:  # a hostile __str__
        message = "<message unavailable>"
    return {"type": type(exc).__name__, "message": _short(message)}


class _Encoder:
    """Turns a return value into JSON plus arrays; refuses anything else."""

    def __init__(self, max_elements: int) -> None:
        self.arrays: list[np.ndarray] = []
        self.left = max_elements

    def encode(self, obj: object, depth: int = 0) -> dict[str, Any]:
        if depth > MAX_DEPTH:
            return {"unsupported": "nested too deeply"}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            if isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) > 2**62:
                return {"float": float(obj)}
            if isinstance(obj, str):
                obj = _short(obj)
            return {"value": obj}
        if isinstance(obj, (_ndarray, _generic)):
            arr = _asarray(obj)
            arr = arr.view(_ndarray) if isinstance(arr, _ndarray) else _asarray(arr)
            if arr.dtype.kind not in wire.ARRAY_KINDS or arr.dtype.itemsize > wire.MAX_ITEMSIZE:
                return {"unsupported": f"an array of {arr.dtype.name}, not of numbers"}
            if arr.size > self.left:
                return {"unsupported": f"an array of {arr.size} elements, too large to grade"}
            self.left -= arr.size
            self.arrays.append(np.array(arr, copy=True, subok=False))
            return {"array": len(self.arrays) - 1, "scalar": isinstance(obj, _generic)}
        if isinstance(obj, (tuple, list)):
            kind = "tuple" if isinstance(obj, tuple) else "list"
            return {kind: [self.encode(x, depth + 1) for x in list(obj)[:MAX_ITEMS]]}
        if isinstance(obj, dict):
            items = list(obj.items())[:MAX_ITEMS]
            return {"dict": {str(k)[:100]: self.encode(v, depth + 1) for k, v in items}}
        return {"unsupported": type(obj).__name__}


# The inputs of the calls with read-only inputs: a sealed memory file the grading process wrote
# before this process started, mapped here read-only (writes into it fail in the kernel).
_shared: dict[str, Any] = {"map": None}


def _map_inputs(settings: dict[str, Any]) -> None:
    fd, size = settings.get("inputs_fd"), int(settings.get("inputs_bytes", 0))
    if fd is None or size <= 0:
        return
    _shared["map"] = mmap.mmap(int(fd), size, access=mmap.ACCESS_READ)  # shared
    os.close(int(fd))


def _decode_input(spec: dict[str, Any], arrays: list[np.ndarray]) -> Any:
    if "array" in spec:
        return np.array(arrays[spec["array"]], copy=True)
    if "shared" in spec:  # a view of the read-only memory file, never a copy
        where = spec["shared"]
        dtype = np.dtype(where["dtype"])
        count = int(np.prod(where["shape"], dtype=np.int64))
        flat = np.frombuffer(_shared["map"], dtype, count, int(where["offset"]))
        return flat.reshape(where["shape"])
    if "tuple" in spec:
        return tuple(_decode_input(s, arrays) for s in spec["tuple"])
    if "list" in spec:
        return [_decode_input(s, arrays) for s in spec["list"]]
    return spec["value"]


def run_cell(
    request: dict[str, Any], namespace: dict[str, Any]
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """Execute one program cell; the reply says which exception it raised, if any."""
    _arm(request)
    error: dict[str, str] | None = None
    try:
        code = compile(request["source"], f"<cell {request['id']}>", "exec")
        exec(code, namespace)
    except StepTimeout:
        error = {"type": "Timeout", "message": "the cell ran too long"}
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, anything a cell raises
        error = _exception_record(exc)
    finally:
        _setitimer(signal.ITIMER_REAL, 0)
    return {"op": "cell", "error": error}, []


# The pipes to the grading process, and the request being answered (its sequence number).
_link: dict[str, Any] = {"requests": -1, "replies": -1, "seq": None}
_read_frame = wire.read_frame


class OutsideError(Exception):
    """A function computed by the grading process could not be (its reason, from there)."""


def _outside(name: str, max_elements: int) -> Any:
    """A stand-in for `name` that has the grading process compute it: the arguments go out as
    a frame, the value comes back (its code never runs, nor is readable, here)."""

    def outside(*args: Any, **kwargs: Any) -> Any:
        encoder = _Encoder(max_elements)
        header = {
            "op": "outside",
            "seq": _link["seq"],
            "function": name,
            "args": [encoder.encode(a) for a in args],
            "kwargs": {str(k): encoder.encode(v) for k, v in kwargs.items()},
        }
        _write_frame(_link["replies"], header, encoder.arrays)
        reply, arrays = _read_frame(_link["requests"], REQUEST_CAPS)
        if reply.get("status") != "ok":
            raise OutsideError(str(reply.get("error", "no value")))
        return _decode_input(reply["value"], arrays)

    outside.__name__ = outside.__qualname__ = name
    return outside


def make_call(
    request: dict[str, Any], arrays: list[np.ndarray], namespace: dict[str, Any], max_elements: int
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """Call one graded function on the given inputs; plain data back."""
    for name in request.get("outside", ()):  # computed by the grading process, in this run
        namespace[name] = _outside(name, max_elements)
    fn = namespace.get(request["function"])
    if not callable(fn):
        return {"op": "call", "status": "missing"}, []
    args = [_decode_input(s, arrays) for s in request["args"]]
    kwargs = {k: _decode_input(v, arrays) for k, v in request["kwargs"].items()}
    result: dict[str, Any] = {"op": "call", "status": "ok"}
    encoder = _Encoder(max_elements)
    start = _monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _arm(request)
        try:
            # read-only inputs: called twice on the same arrays, the second value kept, so that
            # a call that changes its inputs' shape (X.shape = ...) shows it too
            for _ in range(2 if request.get("readonly") else 1):
                if request.get("errstate"):
                    with _errstate(over="raise", invalid="raise", divide="raise"):
                        value = fn(*args, **kwargs)
                else:
                    value = fn(*args, **kwargs)
            _setitimer(signal.ITIMER_REAL, 0)
            result["value"] = encoder.encode(value)
        except StepTimeout:
            result = {"op": "call", "status": "timeout"}
        except BaseException as exc:
            _setitimer(signal.ITIMER_REAL, 0)
            result = {"op": "call", "status": "error", "error": _exception_record(exc)}
        finally:
            _setitimer(signal.ITIMER_REAL, 0)
    result["seconds"] = _monotonic() - start
    result["warnings"] = [_short(f"{w.category.__name__}: {w.message}") for w in list(caught)[:10]]
    return result, encoder.arrays


def main() -> None:
    requests, replies, settings = boot.start()
    max_elements = int(settings.get("max_elements", 1 << 22))
    _map_inputs(settings)
    _link.update(requests=requests, replies=replies)
    signal.signal(signal.SIGALRM, _on_alarm)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    _write_frame(replies, {"op": "ready"})
    while True:
        try:
            request, arrays = wire.read_frame(requests, REQUEST_CAPS)
        except (wire.Closed, wire.WireError):
            return
        op = request.get("op")
        _link["seq"] = request.get("seq")
        if op == "cell":
            reply, out = run_cell(request, namespace)
        elif op == "call":
            try:
                reply, out = make_call(request, arrays, namespace, max_elements)
            except BaseException as exc:  # a failure outside the student's function
                reply, out = {"op": "call", "status": "error", "error": _exception_record(exc)}, []
        else:
            return
        reply["seq"] = request.get("seq")
        try:
            _write_frame(replies, reply, out)
        except wire.WireError as exc:  # e.g. a value the encoder let through by mistake
            error = {"op": op, "status": "error", "error": _exception_record(exc)}
            _write_frame(replies, dict(error, seq=request.get("seq")))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)
