"""Memory a sandbox shares: the sealed file of read-only inputs (sandbox/program.py), which no
one can write, grow, shrink or unseal, and the sandbox's own /dev/shm (jail.py), which holds
what multiprocessing needs and is capped apart from /tmp."""

from __future__ import annotations

import errno
import fcntl
import os

import numpy as np
import pytest

from attention_course.sandbox import confined
from attention_course.sandbox.program import SharedInputs, run_program

MiB = 1024**2


def test_the_sealed_inputs_can_be_read_and_never_changed():
    shared = SharedInputs()
    shared.add(np.arange(6.0))
    fd = shared.open()
    assert fd is not None
    try:
        assert os.pread(fd, 8 * 6, 0) == np.arange(6.0).tobytes()
        # opened again for writing (as code that holds the descriptor may), by its owner
        writable = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)
        try:
            for change in (
                lambda: os.pwrite(writable, b"\0" * 8, 0),
                lambda: os.ftruncate(writable, 0),  # shrink
                lambda: os.ftruncate(writable, 1 << 20),  # grow
                lambda: fcntl.fcntl(writable, fcntl.F_ADD_SEALS, 0),  # sealed for good
            ):
                with pytest.raises(PermissionError) as refused:
                    change()
                assert refused.value.errno == errno.EPERM
        finally:
            os.close(writable)
        assert os.fstat(fd).st_size == 8 * 6
        assert os.pread(fd, 8 * 6, 0) == np.arange(6.0).tobytes()
    finally:
        os.close(fd)


SHM = """
import os
with open("/dev/shm/eight", "wb") as f:
    f.write(b"x" * (8 << 20))
try:
    with open("/dev/shm/more", "wb") as f:
        f.write(b"x" * (16 << 20))
except OSError:
    pass
else:
    raise AssertionError("more than 16 MiB written into /dev/shm")
"""


def test_the_sandboxes_shared_memory_holds_16_mb_and_no_more():
    run = run_program([("shm", SHM)], [])
    assert run.cell_errors == [], run.cell_errors


def test_the_probe_names_the_bubblewrap_it_found():
    import subprocess

    version = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout
    assert version.split()[0] == "bubblewrap"
    status = confined.probe()
    assert status.ok, status.detail
    assert status.detail.startswith(f"bubblewrap {version.split()[1]}, ")
