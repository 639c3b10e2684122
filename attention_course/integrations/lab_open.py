"""Open an assignment's notebook from a link: `GET {base_url}attention-course/open?assignment=A`
on a student's own Jupyter server.

Where an LMS launch lands a student (lms/identity.py, `landing`): the released assignment is
fetched from the course's exchange into the student's folder if it is not there yet (as
nbgrader's Assignments tab fetches it, as the student), then the browser goes on to its
notebook in JupyterLab. An assignment not released yet is a page saying so, with a link to
JupyterLab. Only the server's owner reaches it (the hub says who may).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

ROUTE = "attention-course/open"
ASSIGNMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>body {{ font-family: sans-serif; max-width: 40em; margin: 2em auto; padding: 0 1em;
line-height: 1.5; }} a {{ color: #0b57d0; }}</style></head>
<body><main><h1>{title}</h1><p>{text}</p><p><a href="{lab}">Open JupyterLab</a></p></main>
</body></html>
"""


def _fetch(root: str, course_id: str, assignment: str) -> bool:
    """Fetch a released assignment into `root` as nbgrader's Assignments tab does (its list
    first: an assignment not released is no error); whether it was there to fetch."""
    from nbgrader.server_extensions.assignment_list.handlers import AssignmentList

    lister = AssignmentList()
    lister.root_dir = root
    listed = lister.list_released_assignments(course_id)
    released = {a.get("assignment_id") for a in listed.get("value") or [] if isinstance(a, dict)}
    if not listed.get("success") or assignment not in released:
        return False
    return bool(lister.fetch_assignment(course_id, assignment).get("success"))


def _course_id(root: str) -> str:
    from nbgrader.server_extensions.assignment_list.handlers import AssignmentList

    lister = AssignmentList()
    lister.root_dir = root
    return str(lister.load_config().CourseDirectory.get("course_id") or "")


def _handlers() -> list[tuple[str, type]]:
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from tornado import web

    class OpenHandler(JupyterHandler):
        def _page(self, status: int, title: str, text: str) -> None:
            self.set_status(status)
            self.set_header("Content-Type", "text/html; charset=utf-8")
            lab = url_path_join(self.base_url, "lab")
            self.finish(PAGE.format(title=html.escape(title), text=html.escape(text), lab=lab))

        @web.authenticated
        async def get(self) -> None:
            assignment = self.get_argument("assignment", "")
            if not ASSIGNMENT.fullmatch(assignment):
                self._page(400, "No such assignment", "The link names no valid assignment.")
                return
            root = str(Path(self.settings["server_root_dir"]).expanduser())
            notebook = Path(root) / assignment / f"{assignment}.ipynb"
            if not notebook.is_file():
                # (in the server's own thread, as nbgrader's Assignments tab: it changes folder)
                fetched = _fetch(root, _course_id(root), assignment)
                if not fetched or not notebook.is_file():
                    self._page(
                        404,
                        f"{assignment} is not released yet",
                        f"The course has not released {assignment} yet, or it could not be "
                        "fetched; try the link again later, or fetch it in JupyterLab's "
                        "Assignments tab.",
                    )
                    return
                self.log.info("attention_course: fetched %s for the link that opens it", assignment)
            target = url_path_join(self.base_url, "lab", "tree", assignment, notebook.name)
            self.redirect(target)

    return [(ROUTE, OpenHandler)]


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "attention_course.integrations.lab_open"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.utils import url_path_join

    base = serverapp.web_app.settings["base_url"]
    routes = [(url_path_join(base, route), handler) for route, handler in _handlers()]
    serverapp.web_app.add_handlers(".*$", routes)
