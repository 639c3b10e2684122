"""A student's side of the course's grading service (hub_check.py): send a notebook from the
student's server, with the server's own hub token ($JUPYTERHUB_API_TOKEN), and wait for the
answer."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from attention_course.settings import CHECK_URL_ENV

TOKEN_ENV = "JUPYTERHUB_API_TOKEN"
POLL_SECONDS = 1.0


class ServiceError(RuntimeError):
    """The service could not be reached or said no: one line, and its HTTP status (0 when
    nothing answered) and answer."""

    def __init__(self, message: str, status: int = 0, answer: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.answer = answer or {}


def where(url: str | None = None, token: str | None = None) -> tuple[str, str]:
    """The service's URL and the hub token to send: as given, else from the environment of
    the student's server ($ATTENTION_COURSE_CHECK_URL, $JUPYTERHUB_API_TOKEN)."""
    url = url or os.environ.get(CHECK_URL_ENV)
    token = token or os.environ.get(TOKEN_ENV)
    if not url:
        raise ServiceError(
            f"no check service: ${CHECK_URL_ENV} is not set (run this in your JupyterHub "
            "server's terminal, or give --url)"
        )
    if not token:
        raise ServiceError(f"no hub token: ${TOKEN_ENV} is not set (run this on JupyterHub)")
    return url.rstrip("/") + "/", token


def call(
    url: str, token: str, path: str, body: bytes | None = None, **query: str
) -> dict[str, Any]:
    """One request to the service; its JSON answer, or ServiceError."""
    address = url + path + ("?" + urllib.parse.urlencode(query) if query else "")
    request = urllib.request.Request(
        address,
        data=body,
        method="POST" if body is not None else "GET",
        headers={"Authorization": f"token {token}", "Content-Type": "application/x-ipynb+json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return _json(response.read(), response.status)
    except urllib.error.HTTPError as exc:
        answer = _json(exc.read(), exc.code)
        reason = answer.get("error") or exc.reason
        raise ServiceError(str(reason), exc.code, answer) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServiceError(f"the check service at {url} does not answer ({reason})") from None


def _json(raw: bytes, status: int) -> dict[str, Any]:
    try:
        found = json.loads(raw)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise ServiceError(f"the check service answered {status} with no JSON", status)
    return found


def check(
    notebook: bytes,
    assignment: str | None,
    url: str,
    token: str,
    wait: float,
) -> dict[str, Any]:
    """Ask a check of `notebook` and wait up to `wait` seconds for its answer: the check
    (state, score, feedback), the checks left and the limit (per_day, window_seconds);
    ServiceError when it is refused."""
    query = {"assignment": assignment} if assignment else {}
    asked = call(url, token, "api/checks", notebook, **query)
    found = asked["check"]
    deadline = time.monotonic() + wait
    while found["state"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        found = call(url, token, f"api/checks/{found['id']}")["check"]
    limit: dict[str, Any] = {k: asked[k] for k in ("per_day", "window_seconds") if k in asked}
    return {"check": found, "checks_left": asked.get("checks_left"), **limit}
