"""The students' Jupyter configuration: nbgrader's student tools only, short Validate answers.

nbgrader installs every extension for everybody, so students see formgrader, "Create
Assignment" and the course list in JupyterLab. `write_student_config` writes a Jupyter
configuration folder for students, read-only for them: a JupyterLab started with the folder on
`JUPYTER_CONFIG_PATH` shows the Assignments tab (with readable submission times, see
jupyter_assignments.py) and the Validate button (answering with the failing check first, see
jupyter_validate.py), none of the instructor tools and no "get notified about official Jupyter
news?" question (JupyterLab's announcements are off), and nbgrader (its JupyterLab extensions
and `nbgrader fetch_assignment`/`submit`) finds the course's exchange.

`JUPYTER_CONFIG_PATH` is Jupyter's extra search path, read first: every folder on it is read
for the server's `jupyter_server_config.json`, JupyterLab's `labconfig/page_config.json` and
`nbgrader_config.json`, and is never written. Each student keeps their own writable
configuration folder (`JUPYTER_CONFIG_DIR`, by default ~/.jupyter), where JupyterLab saves
workspaces and settings. The folder is not meant as `JUPYTER_CONFIG_DIR`: Jupyter writes there.
"""

from __future__ import annotations

import json
from pathlib import Path

from attention_course.course import find_course

# The endpoints of the "Check with the course's graders" button (on the course's hub).
LAB_CHECK = "attention_course.integrations.lab_check"
# The link that opens an assignment's notebook, fetching it first (where an LMS launch lands).
LAB_OPEN = "attention_course.integrations.lab_open"
# Server extensions: off for students, or added for them.
SERVER_EXTENSIONS = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.course_list": False,
    "attention_course.integrations.jupyter_validate": True,
    "attention_course.integrations.jupyter_assignments": True,
    LAB_CHECK: True,
    LAB_OPEN: True,
}
# JupyterLab plugins of nbgrader that only instructors need.
NBGRADER_FORMGRADER = "@jupyter/nbgrader:formgrader"
INSTRUCTOR_PLUGINS = (
    NBGRADER_FORMGRADER,
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
)
# JupyterLab's news and update checks: a question on every student's screen (and a request to a
# website once answered yes), nothing a course needs.
QUIET_PLUGINS = ("@jupyterlab/apputils-extension:announcements",)


def course_settings(root: Path | None = None) -> tuple[str, str]:
    """(course id, exchange folder) from the course's nbgrader_config.py (default: the course
    found from the current folder)."""
    from traitlets.config.loader import PyFileConfigLoader

    root = root or find_course().root
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    return config.CourseDirectory.course_id, config.Exchange.root


# Everybody reads the folder; only its owner (the instructor, or root) writes it.
FOLDER_MODE = 0o755
FILE_MODE = 0o644


def write_student_config(
    dest: Path,
    course_id: str | None = None,
    exchange: str | None = None,
    root: Path | None = None,
) -> list[Path]:
    """Write the students' Jupyter configuration folder `dest`; returns the files written.

    `course_id` and `exchange` default to the course's (nbgrader_config.py). The folders it
    makes and the files it writes are readable by everybody, whatever the umask.
    """
    if course_id is None or exchange is None:
        default_id, default_exchange = course_settings(root)
        course_id = course_id or default_id
        exchange = exchange or default_exchange
    files = {
        dest / "jupyter_server_config.json": {
            "ServerApp": {"jpserver_extensions": SERVER_EXTENSIONS}
        },
        dest / "labconfig" / "page_config.json": {
            "disabledExtensions": {plugin: True for plugin in INSTRUCTOR_PLUGINS + QUIET_PLUGINS}
        },
        dest / "nbgrader_config.json": {
            "CourseDirectory": {"course_id": course_id},
            "Exchange": {"root": str(exchange)},
        },
    }
    for path, data in files.items():
        _make_folder(path.parent)
        path.write_text(json.dumps(data, indent=2) + "\n")
        path.chmod(FILE_MODE)
    return list(files)


def _make_folder(folder: Path) -> None:
    """`folder` and the parents it lacks, each readable by everybody (folders that exist are
    left as they are)."""
    if folder.is_dir():
        return
    _make_folder(folder.parent)
    folder.mkdir(exist_ok=True)
    folder.chmod(FOLDER_MODE)
