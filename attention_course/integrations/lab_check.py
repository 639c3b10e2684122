"""The "Check with the course's graders" endpoints of a student's own Jupyter server.

`POST {base_url}attention-course/hub-check?path=NOTEBOOK` sends the notebook (read from the
server's folder, as its contents manager gives it) to the course's grading service with the
server's own hub token and the service's address ($JUPYTERHUB_API_TOKEN,
$ATTENTION_COURSE_CHECK_URL), waits for the answer and returns it as the service gave it: the
check (state, score, PASS/FAIL lines and hints) and the checks left, or the refusal, its reason
and when the next check is allowed. `GET {base_url}attention-course/hub-check` says whether
this server can check at all (it has a service to send to), without asking the service;
`GET {base_url}attention-course/hub-check/checks` lists the server's owner's own checks.

The course's JupyterLab extension (labextension/, prebuilt into attention_course/labextension/)
calls them with the page's own credentials, and shows its button only where the first says
yes; nobody but the server's owner reaches them (the hub says who may).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from attention_course.settings import CHECK_URL_ENV, HUB_CHECK

ROUTE = "attention-course/hub-check"
# What a refusal's answer keeps of the service's, besides its one line: why, and from when.
KEPT = ("reason", "next_allowed", "next_allowed_text")


def availability() -> tuple[bool, str]:
    """Whether this server can send checks (a service's address and a hub token), and if not,
    why not."""
    from attention_course.integrations.check_client import TOKEN_ENV

    if not os.environ.get(CHECK_URL_ENV):
        return False, f"no grading service: ${CHECK_URL_ENV} is not set (not on the course's hub)"
    if not os.environ.get(TOKEN_ENV):
        return False, f"no hub token: ${TOKEN_ENV} is not set (not on JupyterHub)"
    return True, ""


def _handlers() -> list[tuple[str, type]]:
    from jupyter_server.base.handlers import APIHandler
    from jupyter_server.utils import ensure_async
    from tornado import web

    from attention_course.integrations.check_client import ServiceError, call, check, where

    class Answering(APIHandler):
        def _answer(self, status: int, body: dict[str, Any]) -> None:
            self.set_status(status)
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            self.finish(json.dumps(body))

        def _refused(self, exc: ServiceError) -> None:
            kept = {k: v for k, v in exc.answer.items() if k in KEPT}
            self._answer(exc.status or 502, {"error": str(exc), **kept})

    class CheckHandler(Answering):
        @web.authenticated
        async def get(self) -> None:
            available, reason = availability()
            self._answer(200, {"available": available, "reason": reason})

        @web.authenticated
        async def post(self) -> None:
            path = self.get_argument("path", "")
            try:
                model = await ensure_async(
                    self.contents_manager.get(path, content=True, type="file", format="text")
                )
            except web.HTTPError as exc:
                self._answer(exc.status_code, {"error": f"{path}: {exc.log_message or exc}"})
                return
            notebook = str(model["content"]).encode()
            assignment = self.get_argument("assignment", None)
            try:
                url, token = where()
                found = await asyncio.to_thread(
                    check, notebook, assignment, url, token, HUB_CHECK.wait
                )
            except ServiceError as exc:
                self._refused(exc)
                return
            self._answer(200, found)

    class ChecksHandler(Answering):
        @web.authenticated
        async def get(self) -> None:
            try:
                url, token = where()
                found = await asyncio.to_thread(call, url, token, "api/checks")
            except ServiceError as exc:
                self._refused(exc)
                return
            self._answer(200, {"checks": found.get("checks", [])})

    return [(ROUTE, CheckHandler), (ROUTE + "/checks", ChecksHandler)]


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "attention_course.integrations.lab_check"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the endpoints under the server's base URL."""
    from jupyter_server.utils import url_path_join

    base = serverapp.web_app.settings["base_url"]
    routes = [(url_path_join(base, route), handler) for route, handler in _handlers()]
    serverapp.web_app.add_handlers(".*$", routes)
    serverapp.log.info("attention_course: checks with the course's graders at %s", routes[0][0])
