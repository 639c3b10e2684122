"""A sandbox with one layer of the zygote's child taken away, for the tests that must see it go:
a copy of the inside scripts with lines of `inside/zygote.py` replaced, used by every zygote and
sandbox started until the test ends (the jail's arguments are weakened by patching
`jail.command` instead)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from attention_course.sandbox import jail, zygotes


@contextmanager
def weakened_zygote(
    monkeypatch: pytest.MonkeyPatch, folder: Path, replace: dict[str, str]
) -> Iterator[None]:
    """Zygotes whose script has each line `old` of `replace` replaced by its `new` (each must
    be there: a weakening that changes nothing is a test that proves nothing)."""
    copy = folder / "inside"
    shutil.copytree(jail.INSIDE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    script = copy / "zygote.py"
    text = script.read_text()
    for old, new in replace.items():
        assert text.count(old) == 1, f"not once in inside/zygote.py: {old!r}"
        text = text.replace(old, new)
    script.write_text(text)
    for path in [copy, *copy.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    folder.chmod(0o755)
    zygotes.stop_all()
    monkeypatch.setattr(jail, "INSIDE_DIR", copy)
    try:
        yield
    finally:
        zygotes.stop_all()  # the next sandbox starts a zygote of the real scripts


# The layers of the zygote's child, each as the line that makes it and the check of it (the
# child refuses to run when the kernel shows the layer missing: both go for the doctor to see).
CAPABILITY_CHECK = '    wrong = [n for n in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh") if int(status[n], 16)]\n'  # noqa: E501
NO_CAPABILITY_DROP = {
    "        _drop_capabilities()\n": "",
    CAPABILITY_CHECK: "    wrong: list[str] = []\n",
}
NO_FILTER = {
    '            _load_filter(state["filter"])\n': "            pass\n",
    '    wanted = {"NoNewPrivs": "1", "Seccomp": "2"} if filtered else {"NoNewPrivs": "1"}\n': (
        '    wanted = {"NoNewPrivs": "1"}\n'
    ),
}
# (root here may have no supplementary groups to keep: its own group is given instead)
KEEPS_GROUPS = {"        os.setgroups([])\n": "        os.setgroups([0])\n"}
