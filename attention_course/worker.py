"""The grading worker: runs a student's code in its own process and records plain data.

This file runs as a script (`python worker.py JOB_DIR`) in a process of its own, under the
limits set by `sandbox.py`. It depends on the standard library and numpy only. It reads
`JOB_DIR/job.json` and `JOB_DIR/inputs.npz`, executes the program cells (the notebook's set-up
and solution cells), then makes the requested calls one by one. Before each step it appends a
line to `progress.jsonl`, so the parent knows what was running if the process dies; after each
call it writes `r<i>.json` (+ `r<i>.npz` for arrays). Nothing it writes is trusted by the parent:
arrays are read back with `allow_pickle=False` and everything else is plain JSON.
"""

import json
import os
import signal
import sys
import time
import traceback
import warnings

import numpy as np

# Keep our own references: student code may patch numpy or builtins after this point.
_savez = np.savez
_load = np.load
_asarray = np.asarray
_ndarray = np.ndarray
_errstate = np.errstate
_dumps = json.dumps
_open = open
_monotonic = time.monotonic

MAX_DEPTH = 4
MAX_MESSAGE = 500


class StepTimeout(BaseException):
    """Raised by the alarm when a cell or a call runs past its time (not an Exception)."""


def _on_alarm(signum, frame):
    raise StepTimeout()


def _progress(job_dir, event):
    with _open(os.path.join(job_dir, "progress.jsonl"), "a") as f:
        f.write(_dumps(event) + "\n")
        f.flush()


def _short(text):
    text = str(text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _exception_record(exc):
    try:
        message = str(exc)
    except BaseException:  # a hostile __str__
        message = "<message unavailable>"
    return {"type": type(exc).__name__, "message": _short(message)}


class _Encoder:
    """Turns a return value into JSON plus named arrays; refuses anything else."""

    def __init__(self):
        self.arrays = {}

    def encode(self, obj, depth=0):
        if depth > MAX_DEPTH:
            return {"unsupported": "nested too deeply"}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            if isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) > 2**62:
                return {"float": float(obj)}
            return {"value": obj}
        if isinstance(obj, (_ndarray, np.generic)):
            arr = _asarray(obj)
            arr = arr.view(_ndarray) if isinstance(arr, _ndarray) else _asarray(arr)
            if arr.dtype.hasobject:
                return {"unsupported": "an array of Python objects"}
            name = f"a{len(self.arrays)}"
            self.arrays[name] = np.array(arr, copy=True, subok=False)
            return {"array": name, "scalar": isinstance(obj, np.generic)}
        if isinstance(obj, (tuple, list)):
            kind = "tuple" if isinstance(obj, tuple) else "list"
            return {kind: [self.encode(x, depth + 1) for x in list(obj)[:64]]}
        if isinstance(obj, dict):
            out = {}
            for k, v in list(obj.items())[:64]:
                out[str(k)] = self.encode(v, depth + 1)
            return {"dict": out}
        return {"unsupported": type(obj).__name__}


def _decode_input(spec, arrays):
    if "array" in spec:
        return np.array(arrays[spec["array"]], copy=True)
    if "tuple" in spec:
        return tuple(_decode_input(s, arrays) for s in spec["tuple"])
    return spec["value"]


def _run_cells(job, job_dir, namespace):
    skip = set(job.get("skip_cells", []))
    for i, cell in enumerate(job["cells"]):
        if i in skip:
            continue
        _progress(job_dir, {"step": "cell", "index": i})
        record = {"index": i, "error": None}
        signal.setitimer(signal.ITIMER_REAL, job["cell_timeout"])
        try:
            code = compile(cell["source"], f"<cell {cell['id']}>", "exec")
            exec(code, namespace)
        except StepTimeout:
            record["error"] = {"type": "Timeout", "message": "the cell ran too long"}
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, anything a cell raises
            record["error"] = _exception_record(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        _progress(job_dir, {"step": "cell_done", "index": i, "error": record["error"]})


def _make_call(call, arrays, namespace, timeout):
    fn = namespace.get(call["function"])
    if not callable(fn):
        return {"status": "missing"}, {}
    args = [_decode_input(s, arrays) for s in call["args"]]
    kwargs = {k: _decode_input(v, arrays) for k, v in call["kwargs"].items()}
    inputs = [a for a in list(args) + list(kwargs.values()) if isinstance(a, _ndarray)]
    if call.get("readonly"):
        for a in inputs:
            a.flags.writeable = False
    result = {"status": "ok"}
    encoder = _Encoder()
    start = _monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            if call.get("errstate"):
                with _errstate(over="raise", invalid="raise", divide="raise"):
                    value = fn(*args, **kwargs)
            else:
                value = fn(*args, **kwargs)
            signal.setitimer(signal.ITIMER_REAL, 0)
            result["value"] = encoder.encode(value)
        except StepTimeout:
            result = {"status": "timeout"}
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            result = {"status": "error", "error": _exception_record(exc)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    result["seconds"] = _monotonic() - start
    result["warnings"] = [_short(f"{w.category.__name__}: {w.message}") for w in list(caught)[:10]]
    result["inputs_after"] = [encoder.encode(a) for a in inputs]
    return result, encoder.arrays


def main(job_dir):
    with _open(os.path.join(job_dir, "job.json")) as f:
        job = json.load(f)
    with _load(os.path.join(job_dir, "inputs.npz"), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    signal.signal(signal.SIGALRM, _on_alarm)
    namespace = {"__name__": "__main__"}
    _run_cells(job, job_dir, namespace)
    timed_out = set()
    for i in job["run"]:
        call = job["calls"][i]
        _progress(job_dir, {"step": "call", "index": i})
        if call["function"] in timed_out:
            result, out_arrays = (
                {
                    "status": "skipped",
                    "detail": "not run: an earlier call of "
                    f"{call['function']} ran longer than the time limit",
                },
                {},
            )
        else:
            try:
                result, out_arrays = _make_call(call, arrays, namespace, job["call_timeout"])
            except BaseException as exc:  # a failure outside the student's function
                result, out_arrays = {"status": "error", "error": _exception_record(exc)}, {}
            if result["status"] == "timeout":
                timed_out.add(call["function"])
        if out_arrays:
            _savez(os.path.join(job_dir, f"r{i}.npz"), **out_arrays)
        with _open(os.path.join(job_dir, f"r{i}.json"), "w") as f:
            f.write(_dumps(result))
    _progress(job_dir, {"step": "done"})


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except BaseException:
        traceback.print_exc()
        sys.exit(3)
    sys.stdout.flush()
    os._exit(0)
