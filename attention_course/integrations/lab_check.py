"""The "Check with the course's graders" endpoint of a student's own Jupyter server.

`POST {base_url}attention-course/hub-check?path=NOTEBOOK` sends the notebook (read from the
server's folder, as its contents manager gives it) to the course's grading service with the
server's own hub token and the service's address ($JUPYTERHUB_API_TOKEN,
$ATTENTION_COURSE_CHECK_URL), waits for the answer and returns it as the service gave it: the
check (state, score, PASS/FAIL lines and hints) and the checks left, or the refusal and when the
next check is allowed. A JupyterLab button or a notebook's page calls it with the page's own
credentials; nobody but the server's owner reaches it (the hub says who may).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from attention_course.settings import HUB_CHECK

ROUTE = "attention-course/hub-check"


def _handler() -> type:
    from jupyter_server.base.handlers import APIHandler
    from jupyter_server.utils import ensure_async
    from tornado import web

    from attention_course.integrations.check_client import ServiceError, check, where

    class CheckHandler(APIHandler):
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
                kept = {k: v for k, v in exc.answer.items() if k.startswith("next_allowed")}
                self._answer(exc.status or 502, {"error": str(exc), **kept})
                return
            self._answer(200, found)

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            self.set_status(status)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps(body))

    return CheckHandler


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "attention_course.integrations.lab_check"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the endpoint under the server's base URL."""
    from jupyter_server.utils import url_path_join

    route = url_path_join(serverapp.web_app.settings["base_url"], ROUTE)
    serverapp.web_app.add_handlers(".*$", [(route, _handler())])
    serverapp.log.info("attention_course: checks with the course's graders at %s", route)
