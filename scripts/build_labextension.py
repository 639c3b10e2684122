"""Build the course's JupyterLab extension ("Check with the course's graders", labextension/)
into attention_course/labextension/, the prebuilt files the wheel ships (so installing the
engine needs no node); `--check` builds it aside and says whether the committed files are what
the sources build, file for file.

    .venv/bin/python scripts/build_labextension.py           # remake attention_course/labextension/
    .venv/bin/python scripts/build_labextension.py --check   # exit 1, naming the files that differ

It builds the standard way, with JupyterLab's builder (`jupyter labextension build`, here its
Python function): @jupyter/builder (rspack) and the JupyterLab core metadata it builds against
(@jupyterlab/core-meta), both pinned by labextension/package-lock.json and installed by
scripts/setup.sh into .venv/node_tools/labextension. The sources are built in a temporary copy,
never in the repository; the same sources and lock give the same bytes wherever they are built
(labextension/rspack.config.js).
"""

from __future__ import annotations

import argparse
import filecmp
import logging
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "labextension"
OUTPUT = ROOT / "attention_course" / "labextension"
NODE_TOOLS = ROOT / ".venv" / "node_tools" / "labextension"
# What the build reads from labextension/ (package-lock.json only pins what setup.sh installs).
SOURCES = ("package.json", "rspack.config.js", "src", "style")
# Copied beside the built files as it is: how JupyterLab says the extension was installed.
INSTALL_FILE = "install.json"


class BuildError(RuntimeError):
    """The extension cannot be built here: one line saying why."""


def builder_ready() -> None:
    """BuildError unless .venv/node_tools/labextension holds what the lock pins."""
    lock = SOURCE / "package-lock.json"
    installed = NODE_TOOLS / "package-lock.json"
    if not (NODE_TOOLS / "node_modules" / "@jupyter" / "builder").is_dir():
        raise BuildError(f"{NODE_TOOLS}: the builder is not installed (bash scripts/setup.sh)")
    if not installed.is_file() or installed.read_bytes() != lock.read_bytes():
        raise BuildError(f"{NODE_TOOLS}: not what {lock} pins (bash scripts/setup.sh)")


def build(into: Path) -> Path:
    """Build the extension from a copy of its sources in `into`; returns the built folder."""
    from jupyter_builder.federated_extensions import build_labextension

    builder_ready()
    work = into / "labextension"
    work.mkdir(parents=True)
    for name in SOURCES:
        source = SOURCE / name
        if source.is_dir():
            shutil.copytree(source, work / name)
        else:
            shutil.copy(source, work / name)
    (work / "node_modules").symlink_to(NODE_TOOLS / "node_modules", target_is_directory=True)
    logger = logging.getLogger("build_labextension")
    try:
        build_labextension(str(work), logger=logger)
    except Exception as exc:  # noqa: BLE001 (the builder's failures are of any type)
        raise BuildError(f"the builder failed: {exc}") from None
    built = work / "built"
    shutil.copy(SOURCE / INSTALL_FILE, built / INSTALL_FILE)
    return built


def differences(built: Path, committed: Path) -> list[str]:
    """The files (relative paths) that are not the same in both folders."""
    names = {p.relative_to(built) for p in built.rglob("*") if p.is_file()}
    names |= {p.relative_to(committed) for p in committed.rglob("*") if p.is_file()}
    return sorted(
        str(name)
        for name in names
        if not (built / name).is_file()
        or not (committed / name).is_file()
        or not filecmp.cmp(built / name, committed / name, shallow=False)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="only say whether the committed build is fresh"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    with tempfile.TemporaryDirectory(prefix="attention-labextension-") as folder:
        try:
            built = build(Path(folder))
        except BuildError as exc:
            print(f"build_labextension: {exc}", file=sys.stderr)
            return 2
        if args.check:
            stale = differences(built, OUTPUT)
            if stale:
                print(
                    f"{OUTPUT.relative_to(ROOT)} is not what labextension/ builds "
                    f"({', '.join(stale)}): run scripts/build_labextension.py",
                    file=sys.stderr,
                )
                return 1
            print(f"{OUTPUT.relative_to(ROOT)} is what labextension/ builds")
            return 0
        if OUTPUT.exists():
            shutil.rmtree(OUTPUT)
        shutil.copytree(built, OUTPUT)
    print(f"built {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
