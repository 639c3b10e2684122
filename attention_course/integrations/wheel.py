"""The engine as a wheel: what every deployment installs (Gradescope's setup.sh, a JupyterHub's
students' environment, Dask workers), built from the engine that is running.

The wheel holds the `attention_course` package only: no course, no graders, no answers. It is
built from this package's own files and metadata (so an installed engine can build it too, not
only a checkout), and the same files give the same bytes. The package's prebuilt JupyterLab
extension (labextension/) is also installed where JupyterLab finds it,
{prefix}/share/jupyter/labextensions/ (the wheel's data), as pyproject.toml's data-files install it.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from importlib import metadata
from pathlib import Path

import attention_course

DIST = "attention-course"
PACKAGE = Path(attention_course.__file__).resolve().parent
DATA_SUFFIXES = (".py", ".j2", ".json", ".yaml", ".js")
LABEXTENSION = PACKAGE / "labextension"  # prebuilt (scripts/build_labextension.py)
LABEXTENSION_DATA = "share/jupyter/labextensions/@attention-course/check"
EPOCH = (1980, 1, 1, 0, 0, 0)


def version() -> str:
    return attention_course.__version__


def wheel_name() -> str:
    return f"attention_course-{version()}-py3-none-any.whl"


def dependencies() -> list[str]:
    """The engine's declared dependencies (Requires-Dist, without extras' ones)."""
    try:
        found = metadata.metadata(DIST).get_all("Requires-Dist") or []
    except metadata.PackageNotFoundError:
        found = []
    return [d for d in found if "extra ==" not in d]


def pinned_dependencies() -> list[str]:
    """The dependencies pinned to the versions installed here (the ones it was tested with);
    one not installed here keeps its range."""
    lines = []
    for dep in dependencies():
        named = re.match(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?", dep)  # "numpy>=1.26" -> "numpy"
        if named is None:
            raise ValueError(f"not a dependency: {dep!r}")
        name, extras = named.group(1), named.group(2) or ""
        try:
            lines.append(f"{name}{extras}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            lines.append(dep.split(";")[0].strip())
    return lines


def _files() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix in DATA_SUFFIXES and "__pycache__" not in p.parts
    )


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _metadata_text() -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {DIST}",
        f"Version: {version()}",
        "Summary: The attention-course grading engine (courses are folders it reads by path)",
        "Requires-Python: >=3.11",
        *[f"Requires-Dist: {d}" for d in dependencies()],
    ]
    return "\n".join(lines) + "\n"


def build_wheel(folder: Path) -> Path:
    """Write the engine's wheel into `folder`; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / wheel_name()
    info = f"attention_course-{version()}.dist-info"
    entries: list[tuple[str, bytes]] = [
        ("attention_course/" + p.relative_to(PACKAGE).as_posix(), p.read_bytes()) for p in _files()
    ]
    entries += [
        (
            f"attention_course-{version()}.data/data/{LABEXTENSION_DATA}/"
            + p.relative_to(LABEXTENSION).as_posix(),
            p.read_bytes(),
        )
        for p in _files()
        if LABEXTENSION in p.parents
    ]
    entries += [
        (f"{info}/METADATA", _metadata_text().encode()),
        (
            f"{info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: attention-course\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n",
        ),
        (
            f"{info}/entry_points.txt",
            b"[console_scripts]\nattention-course = attention_course.cli.main:main\n",
        ),
    ]
    record = [_record_line(name, data) for name, data in entries] + [f"{info}/RECORD,,"]
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            zinfo = zipfile.ZipInfo(name, date_time=EPOCH)
            zinfo.external_attr = 0o644 << 16
            zinfo.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(zinfo, data)
    return out
