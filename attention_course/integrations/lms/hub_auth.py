"""The hub's authenticator for LTI 1.3 launches: jupyterhub-ltiauthenticator (the JupyterHub
project's own) with what one course needs around it. It runs in the hub (as root), from the
`lti` extra; `attention-course jupyterhub --lti` writes the two lines that use it.

The library checks a launch: the OIDC state, the id_token's signature (the platform's JWKS),
issuer, audience, age, required claims, and its nonce against the browser's cookie. Around it:

- the platform, client, deployments and LMS courses are course.toml's `[lms]` (read at start);
- a launch's nonce is used once: a launch replayed (cookies and all) is refused (files.py);
- `identity.decide`: the deployment and LMS course, the roles (the instructor's environment for
  an instructor's context role only; a student's launch asking for it is refused), the stable
  student id, the assignment the link names;
- a new student's local account is made (its home 0700), and the launch is recorded for
  `lms push` (files.py); the user lands on the assignment's notebook, or formgrader;
- every refusal is one warning line in the hub's log, "LTI launch refused: REASON (...)";
- /hub/lti13/jwks serves the tool's public key (for the LMS's registration).
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

import jwt
from jupyterhub.handlers import BaseHandler
from jupyterhub.utils import url_path_join
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import ValidationError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler
from tornado.web import HTTPError
from traitlets import Unicode, default

from attention_course.course import Course
from attention_course.errors import UserError
from attention_course.integrations.lms import config, files, keys
from attention_course.integrations.lms.identity import Decision, Refused, decide, landing

REFUSED = "LTI launch refused"
FIRST_USER_UID = 1000  # below: the system's own accounts, never a student's
HOME_MODE = 0o700
SYSTEM_TOOLS = "/usr/sbin:/sbin:/usr/bin:/bin"  # useradd, whatever the hub's PATH


def _claims_said(encoded: str) -> str:
    """What a refused launch claims (unverified: for the log only)."""
    try:
        said = jwt.decode(encoded, options={"verify_signature": False})
    except jwt.PyJWTError:
        return "not a JWT"
    return f"iss {said.get('iss')!r}, sub {said.get('sub')!r}"


class CourseCallbackHandler(LTI13CallbackHandler):
    """The launch (the platform's form post of the id_token)."""

    def _refuse(self, status: int, reason: str) -> NoReturn:
        encoded = self.get_argument("id_token", "")
        self.log.warning("%s: %s (%s)", REFUSED, reason, _claims_said(encoded))
        raise HTTPError(status, f"{REFUSED}: {reason}")

    async def post(self) -> None:
        auth: CourseLTI13Authenticator = self.authenticator
        encoded = self.get_argument("id_token", "")
        try:
            said = jwt.decode(encoded, options={"verify_signature": False})
        except jwt.PyJWTError:
            said = {}
        if said and said.get("iss") != auth.issuer:
            self._refuse(401, f"issuer {said.get('iss')!r} is not this course's platform")
        try:
            token = self.decode_and_validate_launch_request()
        except ValidationError as exc:
            self._refuse(401, str(exc))
        except HTTPError as exc:  # the library's own refusals (state, nonce cookies)
            self._refuse(exc.status_code, exc.log_message or str(exc))
        nonce = str(token.get("nonce", ""))
        fresh = await asyncio.to_thread(auth.use_nonce, nonce, float(token.get("exp", 0)))
        if not fresh:
            self._refuse(401, "its nonce was used before (a replayed launch)")
        try:
            decision = auth.decide(token)
        except Refused as exc:
            self._refuse(403, str(exc))
        user = await self.login_user({"decision": decision})
        if user is None:
            self._refuse(403, "the hub did not log the user in")
        target = url_path_join(user.url, landing(decision))
        spawn = url_path_join(self.hub.base_url, "spawn", user.name)
        self.log.info(
            "LTI launch: %s (LMS user %r%s) -> %s",
            user.name,
            decision.sub,
            ", instructor" if decision.instructor else "",
            target,
        )
        self.redirect(f"{spawn}?next={quote(target, safe='')}")


class ToolKeysHandler(BaseHandler):
    """GET /hub/lti13/jwks: the tool's public key (the LMS checks `lms push`'s signatures)."""

    def check_xsrf_cookie(self) -> None:
        return

    async def get(self) -> None:
        auth: CourseLTI13Authenticator = self.authenticator
        try:
            private = keys.read_private(auth.course_root, auth.lms.settings)
        except UserError as exc:
            raise HTTPError(404, str(exc)) from None
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps({"keys": [keys.public_jwk(private)]}))


class CourseLTI13Authenticator(LTI13Authenticator):
    """LTI 1.3 launches into the course's hub (see the module)."""

    callback_handler = CourseCallbackHandler
    course = Unicode(config=True, help="The course folder (course.toml's [lms]).")
    instructor = Unicode(config=True, help="The instructor's local account.")

    @default("allow_all")
    def _allow_all(self) -> bool:
        return True  # who may log in is decided per launch (identity.decide)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.course_root = Path(self.course)
        try:
            self.lms = config.require(self.course_root)
            self.lms.need("authorize_url", "jwks_url")
            self.assignments = Course.load(self.course_root).all_assignments
        except UserError as exc:
            raise ValueError(str(exc)) from None
        self.issuer = self.lms.issuer
        self.client_id = {self.lms.client_id}
        self.authorize_url = self.lms.authorize_url
        self.jwks_endpoint = self.lms.jwks_url
        self.username_key = "sub"

    def get_handlers(self, app: Any) -> list:
        return [*super().get_handlers(app), ("/lti13/jwks", ToolKeysHandler)]

    def use_nonce(self, nonce: str, expires: float) -> bool:
        return bool(nonce) and files.use_nonce(self.course_root, nonce, expires, self.lms.settings)

    def decide(self, token: dict) -> Decision:
        return decide(
            token,
            issuer=self.lms.issuer,
            deployments=self.lms.deployments,
            contexts=self.lms.contexts,
            instructor_account=self.instructor,
            assignments=self.assignments,
            settings=self.lms.settings,
        )

    async def authenticate(self, handler: Any, data: dict | None = None) -> dict | None:
        decision = (data or {}).get("decision")
        if not isinstance(decision, Decision):
            return None  # only launches log in (there is no password form)
        if not decision.instructor:
            try:
                await asyncio.to_thread(self.ensure_account, decision.hub_user)
            except Refused as exc:
                self.log.warning("%s: %s (sub %r)", REFUSED, exc, decision.sub)
                raise HTTPError(403, f"{REFUSED}: {exc}") from None
        await asyncio.to_thread(files.record_launch, self.course_root, decision, self.lms.settings)
        return {"name": decision.hub_user}

    def ensure_account(self, name: str) -> None:
        """A student's local account, made at their first launch (home 0700: students do not
        read each other's work); an existing system account is never a student's."""
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            entry = None
        if entry is not None:
            if entry.pw_uid < FIRST_USER_UID:
                raise Refused(f"account {name!r} is a system account")
            return
        home = Path(self.lms.settings.home_base) / name
        useradd = shutil.which("useradd", path=SYSTEM_TOOLS) or "useradd"
        made = subprocess.run(
            [useradd, "--create-home", "--home-dir", str(home), "--user-group",
             "--shell", "/bin/bash", name],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if made.returncode != 0:
            raise Refused(f"account {name!r} could not be made: {made.stderr.strip()}")
        os.chmod(home, HOME_MODE)
        self.log.info("LTI: made the local account %s (home %s)", name, home)
