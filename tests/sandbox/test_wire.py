"""Frames as student code can write them (inside/wire.py): whatever the bytes, the reader gives
back a frame of plain numbers or its own refusal, never another exception.

The frames named in issue 17 first, then properties (Hypothesis): arbitrary bytes, arbitrary
JSON-ish headers with arbitrary array entries in a frame whose lengths are right, nesting of any
depth, every array of plain numbers read back as it was sent, and any outputs of a notebook
cell rebuilt into a notebook that can be written (sandbox/execute.py).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import struct
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.extra import numpy as hnp

from attention_course.sandbox.execute import inert_output
from attention_course.sandbox.inside import wire

# Nothing written into the repository: no example database, and Hypothesis's own cache (of
# Unicode's tables) in the machine's temporary folder.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "attention-course-hypothesis")
FUZZ = settings(max_examples=200, deadline=None, database=None)
FEW = settings(FUZZ, max_examples=60)  # the strategies that take longest to draw from

CAPS = wire.Caps(1 << 20, 1 << 12, 1000)

# Reading a frame warns about nothing (it runs beside student output): a warning fails a test.
pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(autouse=True)
def _no_garbage_of_earlier_tests():
    """Collect what earlier tests of this process left unclosed (a socket, an event loop)
    before each test, so a warning its collection raises is not taken for the reader's."""
    import gc
    import sys

    hook, sys.unraisablehook = sys.unraisablehook, lambda unraisable: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


def _frame(header: bytes, payload: bytes = b"") -> bytes:
    return wire.MAGIC + struct.pack("<IQ", len(header), len(payload)) + header + payload


def _array(spec: object, payload: bytes = b"\0" * 8) -> bytes:
    return _frame(json.dumps({"op": "call", "arrays": [spec]}).encode(), payload)


def _read(data: bytes, caps: wire.Caps = CAPS):
    """read_frame on `data`, as the grading process reads a sandbox's replies (with a
    deadline); a regular file is always ready, so only the bytes decide."""
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        return wire.read_frame(f.fileno(), caps, time.monotonic() + 10)


def _decodes_or_is_refused(data: bytes) -> None:
    """The property: a frame of plain numbers within the caps, or WireError / Closed."""
    try:
        header, arrays = _read(data)
    except (wire.WireError, wire.Closed):
        return
    assert isinstance(header, dict)
    json.dumps(header, ensure_ascii=False).encode("utf-8")  # text any file can hold
    assert sum(a.size for a in arrays) <= CAPS.elements
    for a in arrays:
        assert isinstance(a, np.ndarray) and a.dtype.kind in wire.ARRAY_KINDS
        assert a.dtype.itemsize <= wire.MAX_ITEMSIZE and a.dtype.fields is None


SPEC = {"shape": [1], "offset": 0}


DEEP = 100_000
REFUSED = {
    # dtype strings numpy parses as expressions or as records (SyntaxError, ValueError)
    "dtype ','": (_array(dict(SPEC, dtype=",")), "not plain numbers"),
    "dtype (1,)(1,)f8": (_array(dict(SPEC, dtype="(1,)(1,)f8")), "not plain numbers"),
    "subarray dtype": (_array(dict(SPEC, dtype="(2,)<f8"), b"\0" * 16), "not plain numbers"),
    "record dtype": (_array(dict(SPEC, dtype="<f8,<f8"), b"\0" * 16), "not plain numbers"),
    "dtype by name": (_array(dict(SPEC, dtype="float64")), "not plain numbers"),
    "no such number": (_array(dict(SPEC, dtype="<b2")), "not plain numbers"),
    "dtype not text": (_array(dict(SPEC, dtype=["<f8"])), "malformed dtype"),
    # shapes whose product overflows numpy, empty or not (ValueError in reshape)
    "empty, huge sides": (_array(dict(SPEC, dtype="<f8", shape=[0, 2**40, 2**40])), "elements"),
    "empty, a side past int64": (_array(dict(SPEC, dtype="<f8", shape=[0, 10**30])), "elements"),
    "product past int64": (_array(dict(SPEC, dtype="<f8", shape=[2**62, 2**62])), "elements"),
    "a bool side": (_array(dict(SPEC, dtype="<f8", shape=[True])), "shape"),
    "a float offset": (_array(dict(SPEC, dtype="<f8", offset=1.0)), "offset"),
    # an offset before the frame's payload, by one byte (numpy would refuse it otherwise)
    "offset -1": (_array(dict(SPEC, dtype="|u1", offset=-1)), "array outside its frame"),
    "past the end": (_array(dict(SPEC, dtype="<f8", offset=1)), "array outside its frame"),
    # headers nested 100000 deep (RecursionError in json), and one level past the limit
    "lists 100000 deep": (_frame(b"[" * DEEP + b"]" * DEEP), "nested more than 64"),
    "objects 100000 deep": (_frame(b'{"a":' * DEEP + b"0" + b"}" * DEEP), "nested more than 64"),
    "65 deep": (_frame(b'{"a": ' + b"[" * 64 + b"]" * 64 + b"}"), "nested more than 64"),
    # not an object, not JSON, not UTF-8, an integer too long to read, too many arrays
    "a list": (_frame(b'["op", 1]'), "not a JSON object"),
    "NaN": (_frame(b"NaN"), "not a JSON object"),
    "not UTF-8": (_frame(b'{"op": "\xff"}'), "not JSON"),
    "no brackets, not UTF-8": (_frame(b'{"op": ' + b"\xff" * 100 + b"}"), "not JSON"),
    "5000 digits": (_frame(b'{"n": ' + b"9" * 5000 + b"}"), "not JSON"),
    "arrays not a list": (_frame(b'{"arrays": {"0": 1}}'), "malformed array list"),
    "too many arrays": (
        _frame(json.dumps({"arrays": [{}] * (wire.MAX_ARRAYS + 1)}).encode()),
        "array list",
    ),
}


@pytest.mark.parametrize("name", REFUSED)
def test_the_frames_that_crashed_the_reader_are_refused(name):
    data, words = REFUSED[name]
    with pytest.raises(wire.WireError, match=words):
        _read(data)


def test_what_the_limits_allow_is_read():
    """Nesting of exactly the limit, brackets inside strings, emoji, and an empty array with
    long sides are all fine (a limit refuses only what is over it)."""
    deep = b"[" * (wire.MAX_HEADER_DEPTH - 1) + b"]" * (wire.MAX_HEADER_DEPTH - 1)
    header, _ = _read(_frame(b'{"a": ' + deep + b', "s": "[[[[\\"{{{{"}'))
    assert header["s"] == '[[[["{{{{'
    header, _ = _read(_frame(json.dumps({"t": "\U0001f600 ok"}).encode()))
    assert header["t"] == "\U0001f600 ok"
    _, (empty,) = _read(_array({"dtype": "<f8", "shape": [0, 1000], "offset": 0}, b""))
    assert empty.shape == (0, 1000)


def test_a_frame_over_its_byte_caps_is_refused_saying_its_size_and_the_limit():
    caps = wire.Caps(3000, 5000, 1000)  # 8000 bytes in all
    with pytest.raises(wire.WireError) as refused:
        _read(wire.MAGIC + struct.pack("<IQ", 10, 5001), caps)
    assert str(refused.value) == "a frame of 5011 bytes is over the 8000 byte limit"
    with pytest.raises(wire.WireError, match="a frame of 3001 bytes is over"):
        _read(wire.MAGIC + struct.pack("<IQ", 3001, 0), caps)
    header = {"arrays": [{"dtype": "<f8", "shape": [625], "offset": 0}], "pad": ""}
    header["pad"] = "x" * (3000 - len(json.dumps(header)))
    _, (at_the_caps,) = _read(_frame(json.dumps(header).encode(), b"\0" * 5000), caps)
    assert at_the_caps.shape == (625,)


def _zeros(count: int, arrays: int = 1, dims: int = 1) -> bytes:
    """A frame of `arrays` arrays of `count` float64 zeros each (`dims` dimensions)."""
    shape = [count] + [1] * (dims - 1)
    spec = {"dtype": "<f8", "shape": shape, "offset": 0}
    return _frame(json.dumps({"arrays": [spec] * arrays}).encode(), b"\0" * (8 * count))


def test_the_caps_on_a_frames_arrays_refuse_one_more_and_no_fewer():
    """1000 elements in all (CAPS), 65536 arrays, 32 dimensions: exactly these are read."""
    assert [a.size for a in _read(_zeros(500, arrays=2))[1]] == [500, 500]
    specs = [{"dtype": "|u1", "shape": [n], "offset": 0} for n in (500, 501)]
    one_more = _frame(json.dumps({"arrays": specs}).encode(), b"\0" * 1001)
    with pytest.raises(wire.WireError, match="arrays of more than 1000 elements"):
        _read(one_more)
    many = wire.Caps(1 << 23, 8, 1000)
    assert len(_read(_zeros(0, arrays=65536), many)[1]) == 65536
    with pytest.raises(wire.WireError, match="malformed array list"):
        _read(_zeros(0, arrays=65537), many)
    assert _read(_zeros(1, dims=32))[1][0].shape == (1,) * 32
    with pytest.raises(wire.WireError, match="malformed array shape"):
        _read(_zeros(1, dims=33))
    odd = wire.Caps(1 << 20, 1 << 12, 999)  # one side past the cap, told as such
    with pytest.raises(wire.WireError, match=r"^an array of more than 999 elements$"):
        _read(_array({"dtype": "|u1", "shape": [1000], "offset": 0}, b"\0" * 1000), odd)
    with pytest.raises(wire.WireError) as refused:  # a dtype is shown by its first 20 characters
        _read(_array(dict(SPEC, dtype="float64" + "x" * 30)))
    assert (
        str(refused.value) == f"an array of dtype {('float64' + 'x' * 13)!r} is not plain numbers"
    )


def test_nesting_is_counted_across_a_header_of_more_than_a_million_brackets():
    """The brackets are counted a million at a time, the depth carried from one million to
    the next: 64 deep where it ends is read, 65 refused, however far in it goes past."""
    caps = wire.Caps(1 << 22, 8, 1000)
    many = b"[]," * 600_000  # the first million of brackets ends inside these, 63 or 64 deep
    read = b'{"a": ' + b"[" * 62 + many + b"[]" + b"]" * 62 + b"}"
    header, _ = _read(_frame(read), caps)
    inner = header["a"]
    for _ in range(61):
        (inner,) = inner
    assert len(inner) == 600_001
    with pytest.raises(wire.WireError, match="nested more than 64"):
        _read(_frame(b'{"a": ' + b"[" * 62 + many + b"[[]]" + b"]" * 62 + b"}"), caps)


def test_frames_that_arrive_in_pieces_are_read_whole_one_after_the_other():
    """A reader gets what a pipe holds: parts of a frame, or the end of one with the start of
    the next. Each frame is read whole, and no byte of the next is taken with it."""
    frames = [wire.pack({"n": n, "pad": "x" * n}, [np.arange(n, dtype=np.int16)]) for n in (3, 50)]
    data = b"".join(frames) * 3
    r, w = os.pipe()

    def trickle() -> None:
        for start in range(0, len(data), 7):
            os.write(w, data[start : start + 7])
            time.sleep(0.001)
        os.close(w)

    writer = threading.Thread(target=trickle)
    writer.start()
    try:
        got = [wire.read_frame(r, CAPS, time.monotonic() + 10) for _ in range(6)]
    finally:
        writer.join()
        os.close(r)
    assert [h["n"] for h, _ in got] == [3, 50] * 3
    assert all(a.tolist() == list(range(h["n"])) for h, (a,) in got)


def test_before_its_deadline_a_frame_is_waited_for_and_so_is_room_to_write_it():
    """A frame that comes after more than a second, and room in a full pipe made after more
    than a second, the deadline further still: read, and written, not given up on."""
    late_r, late_w = os.pipe()
    full_r, full_w = os.pipe()
    os.set_blocking(full_w, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(full_w, b"\0" * 65536)
    os.set_blocking(full_w, True)
    read: list = []

    def later() -> None:
        time.sleep(1.2)
        os.write(late_w, wire.pack({"op": "late"}))
        while os.read(full_r, 65536):  # room, at last (then the frame written into it)
            pass

    def reader() -> None:
        read.append(wire.read_frame(late_r, CAPS, time.monotonic() + 20)[0])

    threads = [threading.Thread(target=later), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    try:
        wire.write_frame(full_w, {"op": "written"}, deadline=time.monotonic() + 20)
    finally:
        os.close(full_w)
        for thread in threads:
            thread.join()
        for fd in (late_r, late_w, full_r):
            os.close(fd)
    assert read == [{"op": "late", "arrays": []}]


def test_past_its_deadline_a_frame_is_neither_waited_for_nor_written_to_a_full_pipe():
    r, w = os.pipe()
    try:
        start = time.monotonic()
        with pytest.raises(wire.Deadline):
            wire.read_frame(r, CAPS, start - 1)  # nothing to read
        os.write(w, wire.pack({"op": "late"}))  # a whole frame there, a moment too late
        with pytest.raises(wire.Deadline):
            wire.read_frame(r, CAPS, time.monotonic())
        os.set_blocking(w, False)
        with contextlib.suppress(BlockingIOError):
            while True:
                os.write(w, b"\0" * 65536)  # full
        with pytest.raises(wire.Deadline):
            wire.write_frame(w, {"op": "x"}, deadline=start - 1)
        assert time.monotonic() - start < 5
    finally:
        os.close(r)
        os.close(w)


def test_a_lone_surrogate_becomes_text_a_file_can_hold():
    """json reads "\\ud800" (escaped or as raw bytes); nbformat could not write it out."""
    for raw in (json.dumps({"m": "a\ud800b", "\udc00": 1}).encode(), b'{"m": "a\xed\xa0\x80b"}'):
        header, _ = _read(_frame(raw))
        assert header["m"] == "a?b"
        json.dumps(header, ensure_ascii=False).encode("utf-8")


@FUZZ
@given(st.binary(max_size=400) | st.binary(max_size=400).map(lambda b: wire.MAGIC + b))
@example(_frame(b"[" * 5000))
@example(_frame(b'"' + b"\\" * 3000))
def test_any_bytes_are_a_frame_or_refused(data):
    _decodes_or_is_refused(data)


# JSON values as a peer can write them: any text (lone surrogates too), any integer, NaN and
# infinities, nested lists and objects.
TEXT = st.text(st.characters() | st.sampled_from(["\ud800", "\udfff"]), max_size=12)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
DTYPES = st.sampled_from(
    ["<f8", "|b1", "<i4", "|u1", "<c16", ">f8", "=i2", "<f16", "<f2", "|O", "<U2", "|V8", "<c32"]
    + [",", "(1,)(1,)f8", "(2,)f8", "f8,f8", "<M8", "<m8[s]", "S3", "", "<f8 ", "b1\n"]
)
SPECS = st.fixed_dictionaries(
    {},
    optional={
        "dtype": DTYPES | TEXT | JSONISH,
        "shape": st.lists(st.integers(min_value=-2, max_value=2**70), max_size=40) | JSONISH,
        "offset": st.integers(min_value=-(2**64), max_value=2**64) | JSONISH,
    },
)
HEADERS = st.dictionaries(TEXT, JSONISH, max_size=4).flatmap(
    lambda h: st.one_of(
        st.just(h),
        st.lists(SPECS | JSONISH, max_size=4).map(lambda specs: dict(h, arrays=specs)),
        JSONISH.map(lambda arrays: dict(h, arrays=arrays)),
    )
)


@FEW
@given(HEADERS | JSONISH, st.binary(max_size=64))
def test_any_header_in_a_well_formed_frame_is_read_or_refused(header, payload):
    _decodes_or_is_refused(_frame(json.dumps(header).encode(), payload))


@FUZZ
@given(st.integers(min_value=0, max_value=3000), st.booleans())
def test_any_nesting_is_read_or_refused(depth, objects):
    if objects:
        text = b'{"a": ' * depth + b"0" + b"}" * depth
    else:
        text = b"[" * depth + b"]" * depth
    _decodes_or_is_refused(_frame(text))


NUMBERS = st.sampled_from(
    [np.dtype(c).newbyteorder(o) for c in "?bBhHiIlLqQefdgFD" for o in "<>"]
).filter(lambda d: d.itemsize <= wire.MAX_ITEMSIZE)


@FEW
@given(st.lists(hnp.arrays(NUMBERS, hnp.array_shapes(min_dims=0, max_side=4)), max_size=4))
def test_arrays_of_plain_numbers_come_back_as_they_were_sent(arrays):
    caps = wire.Caps(1 << 16, 1 << 16, 10_000)
    header, got = _read(wire.pack({"op": "call"}, arrays), caps)
    assert header["op"] == "call" and len(got) == len(arrays)
    for sent, back in zip(arrays, got, strict=True):
        assert back.dtype == sent.dtype and back.shape == sent.shape
        assert back.tobytes() == sent.tobytes()


OUTPUTS = st.fixed_dictionaries(
    {},
    optional={
        "output_type": st.sampled_from(["stream", "error", "display_data", "execute_result"])
        | JSONISH,
        "name": st.sampled_from(["stdout", "stderr"]) | JSONISH,
        "text": JSONISH,
        "ename": JSONISH,
        "evalue": JSONISH,
        "traceback": JSONISH,
        "data": st.dictionaries(
            st.sampled_from(["text/plain", "image/png", "text/html"]) | TEXT, JSONISH
        )
        | JSONISH,
        "metadata": JSONISH,
        "execution_count": JSONISH,
    },
)


@FEW
@given(st.lists(OUTPUTS | JSONISH, max_size=3))
def test_any_outputs_a_notebook_process_sends_make_a_notebook_that_can_be_written(outputs):
    """A cell's outputs as they come off the wire, each rebuilt by the notebook run
    (execute.inert_output, which nbformat validates) and written out as UTF-8."""
    header, _ = _read(wire.pack({"op": "run", "outputs": outputs}))
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [inert_output(o, 1000) for o in header["outputs"]]
    json.dumps(nbformat.v4.new_notebook(cells=[cell]), ensure_ascii=False).encode("utf-8")


def test_every_dtype_the_pattern_admits_is_read_as_plain_numbers_or_refused():
    """The dtype's text is all that decides: each of the 125 texts the wire's pattern admits
    (a byte order, a kind, a size) is an array of plain numbers of its size, or refused."""
    read = 0
    for order, kind, size in itertools.product(["", "<", ">", "|", "="], "biufc", (1, 2, 4, 8, 16)):
        text = f"{order}{kind}{size}"
        try:
            _, (got,) = _read(_array(dict(SPEC, dtype=text), b"\0" * size))
        except wire.WireError as refused:
            assert str(refused) == f"an array of dtype {text} is not plain numbers"
            continue
        assert got.dtype.kind == kind and got.dtype.itemsize == size and got.shape == (1,), text
        assert got.dtype.fields is None and got.dtype.subdtype is None
        read += 1
    assert read >= 60  # all but the sizes this machine has no number of ("b2", "i16", ...)


def test_arrays_of_any_layout_and_byte_order_come_back_as_they_were():
    base = np.arange(24.0).reshape(2, 3, 4)
    sent = [base.T, base[:, ::2, 1], np.float32(2.5), base.astype(">i4"), np.asfortranarray(base)]
    _, got = _read(wire.pack({"op": "call"}, sent))
    for one, back in zip(sent, got, strict=True):
        assert back.shape == np.shape(one) and back.dtype == np.asarray(one).dtype
        assert np.array_equal(back, one)


def test_a_frame_written_with_no_deadline_is_written_whole():
    """Without a deadline (the sandbox's side writes so), a frame larger than a pipe holds is
    written whole while the other end reads it."""
    r, w = os.pipe()
    big = np.arange(1 << 17, dtype=np.float64)  # 1 MB: many times a pipe's 64 KB
    writer = threading.Thread(target=wire.write_frame, args=(w, {"op": "reply"}, [big]))
    writer.start()
    try:
        header, (got,) = wire.read_frame(r, wire.Caps(1 << 10, 1 << 21, 1 << 18))
    finally:
        writer.join(timeout=10)
        os.close(r)
        os.close(w)
    assert header["op"] == "reply" and np.array_equal(got, big)


def test_a_failure_the_checks_did_not_foresee_is_still_a_malformed_frame():
    """The last line of the reader: any exception its decoding still raises is a WireError
    naming what was read and the exception's kind, never the exception itself."""
    with pytest.raises(wire.WireError, match=r"^malformed header \(ZeroDivisionError\)$"):
        wire._decoded("header", lambda: 1 / 0)
    refused = wire.WireError("an array of more than 3 elements")

    def refuses():
        raise refused

    with pytest.raises(wire.WireError) as said:
        wire._decoded("arrays", refuses)
    assert said.value is refused  # a refusal of the checks is said as it is


def test_empty_arrays_take_no_bytes_of_the_payload_whatever_follows_them():
    sent = [np.zeros((0, 3)), np.array([1.0, 2.0]), np.zeros((2, 0), dtype=np.int8), np.ones(3)]
    _, got = _read(wire.pack({"op": "call"}, sent))
    assert [a.shape for a in got] == [(0, 3), (2,), (2, 0), (3,)]
    assert np.array_equal(got[1], [1.0, 2.0]) and np.array_equal(got[3], np.ones(3))
