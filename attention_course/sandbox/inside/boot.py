"""The first steps of every program that runs student code, before any student code runs.

It caps the number of processes and threads (RLIMIT_NPROC counts this sandbox's own user),
moves the request and reply pipes off stdin and stdout (so a stray `print` cannot break a
frame), points the standard streams where the program wants them, and gives matplotlib the
font cache the grading machine prepared, so the sandbox does not rebuild it every time.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
from typing import Any


def start(
    stdout_path: str = os.devnull, stderr_path: str | None = None
) -> tuple[int, int, dict[str, Any]]:
    """Returns (request fd, reply fd, settings). Settings come as JSON in argv[1]."""
    settings: dict[str, Any] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    nproc = int(settings.get("nproc", 0))
    if nproc > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    requests, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    out = os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out, 1)
    if stderr_path is not None:
        err = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(err, 2)
    cache = settings.get("mpl_cache")
    config = os.environ.get("MPLCONFIGDIR")
    if cache and config and os.path.isdir(cache):
        os.makedirs(config, exist_ok=True)
        for name in os.listdir(cache):
            if name.endswith(".json"):
                shutil.copyfile(os.path.join(cache, name), os.path.join(config, name))
    return requests, replies, settings
