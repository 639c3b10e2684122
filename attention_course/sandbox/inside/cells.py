"""Runs a notebook's code cells in an IPython shell and records their outputs as a kernel would.

Runs as a script inside the sandbox (`python -I cells.py SETTINGS`). It replaces a Jupyter
kernel during autograding: the grading process sends one cell at a time and waits for its
outputs under its own deadline. Outputs are nbformat dicts, made the way nbclient makes them
from a kernel's messages: `stream` (stdout and stderr, consecutive writes merged),
`display_data` (`display()`, and figures where the notebook asks for `%matplotlib inline`),
`execute_result` (with its execution count) and `error` (IPython's own traceback). Text
written straight to the file descriptors (C code, subprocesses) joins the stream of its cell.
Each cell's outputs are capped; the alarm of a cell that runs too long (its CPU time, or a
longer wall-clock backstop for a cell that sleeps: both sent with the request) raises
KeyboardInterrupt, as a kernel interrupt does.
"""

import base64
import builtins
import json
import os
import signal
import sys
import time
from collections.abc import Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from IPython.core.compilerop import CachingCompiler
    from IPython.core.interactiveshell import InteractiveShell

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import alarm  # noqa: E402
import boot  # noqa: E402
import wire  # noqa: E402

FD_OUT = "/tmp/.cell-stdout"
FD_ERR = "/tmp/.cell-stderr"
REQUEST_CAPS = wire.Caps(1 << 26, 0, 0)
_setitimer = signal.setitimer
_monotonic = time.monotonic
_write_frame = wire.write_frame


class Outputs:
    """The outputs of the cell being run, as nbformat output dicts, within a byte budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.reset()

    def reset(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.pending: dict[str, str] = {}
        self.used = 0
        self.truncated = False
        self.clear_pending = False
        self.display_ids: dict[Any, list[int]] = {}  # a display's id (the student's) -> items

    def _room(self, size: int) -> bool:
        if self.truncated:
            return False
        if self.used + size > self.budget:
            self._truncate()
            return False
        self.used += size
        return True

    def _truncate(self) -> None:
        self.truncated = True
        self.items.append(
            {
                "output_type": "stream",
                "name": "stderr",
                "text": f"\n[output truncated: a cell may show at most {self.budget} bytes]\n",
            }
        )

    def _before_output(self) -> None:
        if self.clear_pending:
            self.items.clear()
            self.display_ids.clear()
            self.clear_pending = False

    def stream(self, name: str, text: str) -> None:
        """Kept aside, as a kernel buffers its streams: they are written out, stdout first,
        before the next display, result or error and at the end of the cell."""
        if text:
            self.pending[name] = self.pending.get(name, "") + text
            if len(self.pending[name]) > self.budget:
                self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, {}
        for name in ("stdout", "stderr"):
            text = pending.get(name)
            if not text:
                continue
            self._before_output()
            if self.truncated:
                continue
            data = text.encode("utf-8", "replace")
            cut = len(data) > self.budget - self.used
            if cut:  # what fits, then the note
                text = data[: max(0, self.budget - self.used)].decode("utf-8", "ignore")
            self.used += len(text.encode("utf-8"))
            last = self.items[-1] if self.items else None
            if last and last["output_type"] == "stream" and last["name"] == name:
                last["text"] += text
            else:
                self.items.append({"output_type": "stream", "name": name, "text": text})
            if cut:
                self._truncate()

    def display(
        self,
        data: Any,
        metadata: Any,
        transient: Any,
        update: bool,
        execution_count: int | None = None,
    ) -> None:
        self.flush()
        bundle = _plain_bundle(data)
        metadata = _plain(metadata or {})
        display_id = (transient or {}).get("display_id") if isinstance(transient, dict) else None
        if update:
            for index in self.display_ids.get(display_id, []):
                self.items[index]["data"] = bundle
                self.items[index]["metadata"] = metadata
            return
        self._before_output()
        if not self._room(len(json.dumps(bundle)) + len(json.dumps(metadata))):
            return
        item: dict[str, Any]
        if execution_count is None:
            item = {"output_type": "display_data", "data": bundle, "metadata": metadata}
        else:
            item = {
                "output_type": "execute_result",
                "data": bundle,
                "metadata": metadata,
                "execution_count": execution_count,
            }
        if display_id:
            self.display_ids.setdefault(display_id, []).append(len(self.items))
        self.items.append(item)

    def error(self, ename: str, evalue: str, traceback: Iterable[object]) -> None:
        self.flush()
        self._before_output()
        lines = [str(line) for line in traceback]
        size = len(ename) + len(evalue) + sum(len(line) for line in lines)
        if not self._room(min(size, 4096)):
            return
        self.items.append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": lines}
        )

    def clear(self, wait: bool) -> None:
        if wait:
            self.clear_pending = True
        else:
            self.items.clear()
            self.display_ids.clear()


def _plain(value: object) -> Any:
    """A JSON-able copy (metadata of displays can hold anything)."""
    return json.loads(json.dumps(value, default=repr))


def _plain_bundle(data: Any) -> dict[str, Any]:
    bundle: dict[str, Any] = {}
    for mime, value in dict(data).items():
        if isinstance(value, bytes | bytearray):
            if mime.startswith("text/") or mime.endswith("+xml"):
                value = bytes(value).decode("utf-8", "replace")
            else:
                value = base64.b64encode(bytes(value)).decode("ascii")
        bundle[str(mime)] = _plain(value)
    return bundle


class FdCapture:
    """Text written to the file descriptors 1 and 2 (not through sys.stdout), per cell."""

    def __init__(self) -> None:
        self.offsets = {FD_OUT: 0, FD_ERR: 0}

    def collect(self, outputs: Outputs) -> None:
        for path, name in ((FD_OUT, "stdout"), (FD_ERR, "stderr")):
            try:
                with open(path, "rb") as f:
                    f.seek(self.offsets[path])
                    data = f.read(outputs.budget + 1)
                    self.offsets[path] = f.tell()
            except OSError:
                continue
            if data:
                outputs.stream(name, data.decode("utf-8", "replace"))


def _kernel_compiler() -> "type[CachingCompiler]":
    """ipykernel's compiler, so that cells get the file names a kernel gives them (in
    tracebacks and warnings); loaded alone, without the rest of ipykernel."""
    import importlib.util

    from IPython.core.compilerop import CachingCompiler

    spec = importlib.util.find_spec("ipykernel")
    if spec is None or not spec.submodule_search_locations:
        return CachingCompiler
    path = os.path.join(list(spec.submodule_search_locations)[0], "compiler.py")
    loaded = importlib.util.spec_from_file_location("_kernel_compiler", path)
    if loaded is None or loaded.loader is None:  # (a .py file always has a spec and a loader)
        return CachingCompiler
    module = importlib.util.module_from_spec(loaded)
    try:
        loaded.loader.exec_module(module)
        compiler: type[CachingCompiler] = module.XCachingCompiler
        return compiler
    except Exception:
        return CachingCompiler


_prepared: dict[str, Any] = {}


def prepare() -> None:
    """Import what every notebook run imports, and find the kernel's compiler, ahead of any
    notebook (a zygote does it once, before it forks: inside/zygote.py)."""
    from IPython.core import displayhook, displaypub, error, interactiveshell  # noqa: F401

    _prepared["compiler"] = _kernel_compiler()


def make_shell(outputs: Outputs) -> "InteractiveShell":
    import io

    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets import Type

    class Stream(io.TextIOBase):
        def __init__(self, name: str, fd: int) -> None:
            self.name = name
            self._fd = fd

        def write(self, text: str) -> int:
            if not isinstance(text, str):
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            outputs.stream(self.name, text)
            return len(text)

        def writable(self) -> bool:
            return True

        def fileno(self) -> int:
            return self._fd

        # typeshed has TextIOBase.encoding as an attribute; it is a read-only property
        @property
        def encoding(self) -> str:  # type: ignore[override]
            return "UTF-8"

    class Publisher(DisplayPublisher):
        def publish(
            self,
            data: Any,
            metadata: Any = None,
            source: Any = None,
            *,
            transient: Any = None,
            update: bool = False,
            **kw: Any,
        ) -> None:
            outputs.display(data, metadata, transient, update)

        def clear_output(self, wait: bool = False) -> None:
            outputs.clear(wait)

    class Hook(DisplayHook):
        def start_displayhook(self) -> None:
            self._bundle: tuple[Any, Any] | None = None

        def write_output_prompt(self) -> None:
            pass

        def write_format_data(self, format_dict: Any, md_dict: Any = None) -> None:
            self._bundle = (format_dict, md_dict)

        def finish_displayhook(self) -> None:
            if self._bundle and self._bundle[0]:
                data, metadata = self._bundle
                outputs.display(data, metadata, None, False, execution_count=self.prompt_count)
            self._bundle = None

    class Shell(InteractiveShell):
        display_pub_class = Type(Publisher)
        displayhook_class = Type(Hook)

        def enable_gui(self, gui: str | None = None) -> None:
            if gui not in (None, "inline"):  # no event loop here: only inline figures
                from IPython.core.error import UsageError

                raise UsageError(f"no {gui} GUI while grading: use %matplotlib inline")

        def _showtraceback(
            self, etype: type[BaseException], evalue: BaseException, stb: list[str]
        ) -> None:
            outputs.error(str(etype.__name__), str(evalue), stb)

        def init_virtualenv(self) -> None:
            pass

    sys.stdout = Stream("stdout", 1)
    sys.stderr = Stream("stderr", 2)

    def no_input(prompt: object = "") -> NoReturn:
        from IPython.core.error import StdinNotImplementedError

        raise StdinNotImplementedError(
            "raw_input was called, but this frontend does not support input requests."
        )

    builtins.input = no_input
    shell = Shell.instance(
        compiler_class=_prepared.get("compiler") or _kernel_compiler(),
        colors="neutral",
        history_length=0,
        cache_size=1000,
    )
    assert shell.history_manager is not None  # made by the shell's own start-up
    shell.history_manager.enabled = False
    shell.user_ns["input"] = no_input
    return shell


_alarm: dict[str, bool] = {"fired": False}
_cell = alarm.Step()  # the running cell (its limits, and when its time is up)


def _arm(request: dict[str, Any]) -> None:
    limit = float(request["timeout"])
    wall = float(request.get("wall", limit))
    _setitimer(signal.ITIMER_REAL, _cell.arm(limit, wall, float(request.get("idle", 0.0))))


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    """The cell's time is up: interrupt it exactly as a kernel interrupt would (unless a busy
    machine only slowed it down: then the alarm rings again when its CPU time may be up)."""
    ring = _cell.next_ring()
    if ring > 0:
        _setitimer(signal.ITIMER_REAL, ring)
        return
    _alarm["fired"] = True
    raise KeyboardInterrupt()


def main() -> None:
    requests, replies, settings = boot.start(FD_OUT, FD_ERR)
    # Figures are not drawn in the graded copy (as in the course's kernel runs before): the
    # student saw them in their own session, and drawing them is most of a notebook's cost.
    # A notebook that asks for them (%matplotlib inline) gets them.
    os.environ.setdefault("MPLBACKEND", "Agg")
    for name, value in (("TERM", "xterm-color"), ("CLICOLOR", "1"), ("PAGER", "cat")):
        os.environ[name] = value
    outputs = Outputs(int(settings.get("cell_output_bytes", 2 << 20)))
    shell = make_shell(outputs)
    captured = FdCapture()
    signal.signal(signal.SIGALRM, _on_alarm)
    _write_frame(replies, {"op": "ready"})
    while True:
        try:
            request, _ = wire.read_frame(requests, REQUEST_CAPS)
        except (wire.Closed, wire.WireError):
            return
        if request.get("op") != "run":
            return
        outputs.reset()
        _alarm["fired"] = False
        shell.execution_count = int(request["execution_count"])
        _arm(request)
        try:  # (IPython leaves run_cell unannotated: hence the ignore)
            result = shell.run_cell(request["source"], store_history=True)  # type: ignore[no-untyped-call]
        except KeyboardInterrupt:  # the alarm between IPython's own handlers
            result = None
            outputs.error("KeyboardInterrupt", "", ["KeyboardInterrupt"])
        finally:
            _setitimer(signal.ITIMER_REAL, 0)
        captured.collect(outputs)
        outputs.flush()
        ok = result is not None and result.error_before_exec is None
        ok = ok and result.error_in_exec is None
        reply: dict[str, Any] = {
            "op": "run",
            "status": "ok" if ok else "error",
            "interrupted": _alarm["fired"],
        }
        reply["outputs"] = [] if request.get("silent") else outputs.items
        reply["seq"] = request.get("seq")
        _write_frame(replies, reply)


if __name__ == "__main__":
    main()
    os._exit(0)
