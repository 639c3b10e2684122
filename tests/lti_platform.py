"""An LTI 1.3 platform (the LMS's side) for the tests, on 127.0.0.1: lti1p3platform (a
third-party library of the platform side, PyPI) does the protocol (the OIDC login initiation,
the signed id_token with the platform's own RSA key, its JWKS, the client-credentials access
tokens it checks against the tool's published keys, the AGS line items and scores endpoints
with their scopes); this file gives it a web server (tornado) and the storage it leaves to its
user (users, links, line items, the scores it received).

    with Platform(hub_url) as platform:      # the hub's address: its login, callback, JWKS
        platform.user("ada", roles=[LEARNER])
        platform.link("basics", custom={"assignment": "attention_basics"})
        url = platform.launch_url("ada", "basics")   # a browser that opens it launches the tool
        platform.scores   # every score posted, per line item, as received

`tamper(id_token) -> id_token`, when set, changes each id_token after the platform signed it
(a launch whose signature no longer holds).
"""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import threading
import time
import typing as t
from dataclasses import dataclass, field
from urllib.parse import urlencode

from jwcrypto.jwk import JWK
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService
from tornado.httpserver import HTTPServer
from tornado.web import Application, RequestHandler

from tests.processes import free_port

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
INSTITUTION_INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"
CLIENT_ID = "attention-hub-tool"
DEPLOYMENT_ID = "deployment-1"
CONTEXT_ID = "course-context-1"


@dataclass
class User:
    sub: str
    roles: list[str]
    custom: dict[str, str] = field(default_factory=dict)


@dataclass
class Link:
    id: str
    custom: dict[str, str] = field(default_factory=dict)
    target: str = ""  # the link's target_link_uri (default: the hub)
    lineitem: str = ""  # a line item the LMS made for the link (a Canvas assignment's)


class _Request(Request):
    """A tornado request as lti1p3platform reads requests."""

    def build_metadata(self, request: t.Any) -> t.Any:
        flat = {k: v[-1].decode() for k, v in request.query_arguments.items()}
        form = {k: v[-1].decode() for k, v in request.body_arguments.items()}
        body = request.body.decode() if request.body else ""
        try:
            parsed = json.loads(body) if body and not form else None
        except ValueError:
            parsed = None
        return {
            "method": request.method,
            "form_data": form,
            "get_data": flat,
            "headers": request.headers,
            "content_type": request.headers.get("Content-Type"),
            "path": request.path,
            "json": parsed,
        }


class Platform:
    """The platform (see the module). Its issuer is its own address."""

    def __init__(self, hub_url: str, issuer: str | None = None, tool_keys: dict | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.issuer = issuer or self.url
        self.hub_url = hub_url.rstrip("/")
        self.tool_keys = tool_keys  # the tool's JWKS as given, else read from the hub's
        key = JWK.generate(kty="RSA", size=2048)
        self.private_pem = key.export_to_pem(private_key=True, password=None).decode()
        self.public_pem = key.export_to_pem().decode()
        self.users: dict[str, User] = {}
        self.links: dict[str, Link] = {}
        self.lineitems: dict[str, dict] = {}
        self.scores: dict[str, list[dict]] = {}  # line item id -> every score received
        self.token_requests = 0
        self.tamper: t.Callable[[str], str] | None = None
        self.context_id = CONTEXT_ID
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # ---- what the platform knows

    def user(self, login: str, roles: list[str], custom: dict[str, str] | None = None) -> User:
        self.users[login] = User(f"user-{login}", roles, dict(custom or {}))
        return self.users[login]

    def link(self, link_id: str, custom: dict[str, str] | None = None, target: str = "") -> Link:
        self.links[link_id] = Link(link_id, dict(custom or {}), target)
        return self.links[link_id]

    def add_lineitem(self, item: dict) -> dict:
        with self._lock:
            item = {**item, "id": f"{self.url}/ags/lineitems/{next(self._ids)}"}
            self.lineitems[item["id"]] = item
            return item

    def launch_url(self, login: str, link_id: str) -> str:
        """The address a user opens to launch `link_id` (the LMS's page of the link)."""
        return f"{self.url}/launch?{urlencode({'user': login, 'link': link_id})}"

    @property
    def lineitems_url(self) -> str:
        return f"{self.url}/ags/lineitems"

    # ---- lti1p3platform's configuration

    def registration(self) -> Registration:
        found = (
            Registration()
            .set_iss(self.issuer)
            .set_client_id(CLIENT_ID)
            .set_deployment_id(DEPLOYMENT_ID)
            .set_launch_url(f"{self.hub_url}/hub")
            .set_oidc_login_url(f"{self.hub_url}/hub/lti13/oauth_login")
            .set_tool_key_set_url(f"{self.hub_url}/hub/lti13/jwks")
            .set_platform_public_key(self.public_pem)
            .set_platform_private_key(self.private_pem)
        )
        if self.tool_keys is not None:
            found.set_tool_key_set(self.tool_keys)
        return found

    def conf(self) -> LTI1P3PlatformConfAbstract:
        platform = self

        class Conf(LTI1P3PlatformConfAbstract):
            def init_platform_config(self, **kwargs: t.Any) -> None:
                self._registration = platform.registration()

            def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
                return platform.registration()

        return Conf()

    def lms_table(self, **extra: object) -> str:
        """course.toml's [lms] table for this platform (`extra`: more keys, as TOML values)."""
        values: dict[str, object] = {
            "issuer": self.issuer,
            "client_id": CLIENT_ID,
            "deployments": [DEPLOYMENT_ID],
            "contexts": [CONTEXT_ID],
            "authorize_url": f"{self.url}/authorize",
            "jwks_url": f"{self.url}/jwks",
            "token_url": f"{self.url}/token",
            **extra,
        }
        return "\n[lms]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())

    # ---- the server

    def __enter__(self) -> Platform:
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            server = HTTPServer(self._application())
            server.listen(self.port, "127.0.0.1")
            ready.set()
            self._loop.run_forever()
            server.stop()

        self._thread = threading.Thread(target=serve, name="lti-platform", daemon=True)
        self._thread.start()
        ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _application(self) -> Application:
        platform = self

        class Base(RequestHandler):
            def check_xsrf_cookie(self) -> None:
                return

            def answer(self, response: t.Any) -> None:
                self.set_status(response.code)
                if response.result is not None:
                    self.set_header("Content-Type", response.media_type)
                    self.finish(json.dumps(response.result))
                else:
                    self.finish(json.dumps({"message": response.message}))

        class Launch(Base):
            """The LMS page of a link: initiates the tool's OIDC login (lti1p3platform)."""

            def get(self) -> None:
                login = self.get_argument("user")
                link = self.get_argument("link")

                class Login(OIDCLoginAbstract):
                    def set_lti_message_hint(self, **kwargs: t.Any) -> None:
                        self._lti_message_hint = kwargs["hint"]

                    def get_redirect(self, url: str) -> str:
                        return url

                oidc = Login(_Request(self.request), platform.conf())
                oidc.set_lti_message_hint(hint=link)
                target = platform.links[link].target
                if target:
                    oidc.set_launch_url(target)
                self.redirect(oidc.initiate_login(login))

        class Authorize(Base):
            """The OIDC authentication request: the signed launch, posted to the tool."""

            def get(self) -> None:
                login = self.get_argument("login_hint")
                user = platform.users.get(login)
                link = platform.links.get(self.get_argument("lti_message_hint", ""))
                if user is None or link is None:
                    self.send_error(403)
                    return

                class Message(LTIAdvantageMessageLaunchAbstract):
                    def prepare_launch(self, preflight_response: dict) -> None:
                        self.set_user_data(user.sub, user.roles)
                        self.set_resource_link_claim(link.id, title=link.id)
                        self.set_launch_context_claim(
                            platform.context_id, context_title="Attention", context_label="ATT"
                        )
                        self.set_custom_parameters_claim({**user.custom, **link.custom})
                        self.set_ags(platform.lineitems_url, link.lineitem or None)
                        if link.target:
                            self.set_launch_url(link.target)

                    def render_launch_form(self, launch_data: dict, **kwargs: t.Any) -> str:
                        token = launch_data["id_token"]
                        if platform.tamper is not None:
                            token = platform.tamper(token)
                        fields = {"id_token": token, "state": launch_data["state"]}
                        inputs = "".join(
                            f'<input type="hidden" name="{k}" value="{html.escape(v)}">'
                            for k, v in fields.items()
                        )
                        action = html.escape(launch_data["launch_url"])
                        return (
                            '<!DOCTYPE html><html lang="en"><head><title>Launching</title>'
                            f'</head><body><form id="launch" method="post" action="{action}">'
                            f"{inputs}</form><script>document.getElementById('launch')"
                            ".submit()</script></body></html>"
                        )

                message = Message(_Request(self.request), platform.conf())
                self.finish(message.lti_launch())

        class Jwks(Base):
            def get(self) -> None:
                conf = platform.conf()
                self.finish(json.dumps(conf.get_jwks()))

        class Token(Base):
            def post(self) -> None:
                form = {k: v[-1].decode() for k, v in self.request.body_arguments.items()}
                platform.token_requests += 1
                try:
                    answer = platform.conf().get_access_token(form)
                except Exception as exc:  # noqa: BLE001 (the library's refusal: a 400)
                    self.set_status(400)
                    self.finish(json.dumps({"error": "invalid_client", "detail": str(exc)}))
                    return
                self.finish(json.dumps(answer))

        class Grades(AssignmentsGradesService):
            def find_lineitems(self, page: int = 1, limit=None, **query: t.Any) -> t.Any:
                items = list(platform.lineitems.values())
                if query.get("resource_id"):
                    items = [i for i in items if i.get("resourceId") == query["resource_id"]]
                if query.get("tag"):
                    items = [i for i in items if i.get("tag") == query["tag"]]
                return {"content": items, "has_next": False, "next": None}

            def find_lineitem(self, line_item_id: str) -> t.Any:
                from lti1p3platform.exceptions import LineItemNotFoundException

                if line_item_id not in platform.lineitems:
                    raise LineItemNotFoundException(line_item_id)
                return platform.lineitems[line_item_id]

            def create_lineitem(self, creation_data: t.Any) -> t.Any:
                return platform.add_lineitem(dict(creation_data))

            def update_lineitem(self, update_data: t.Any) -> t.Any:
                platform.lineitems[update_data["id"]].update(update_data)
                return platform.lineitems[update_data["id"]]

            def delete_lineitem(self, line_item_id: str) -> None:
                platform.lineitems.pop(line_item_id, None)

            def update_score(self, line_item_id: str, score: t.Any) -> UpdateScoreStatus:
                from lti1p3platform.exceptions import LineItemNotFoundException

                if line_item_id not in platform.lineitems:
                    raise LineItemNotFoundException(line_item_id)
                with platform._lock:
                    platform.scores.setdefault(line_item_id, []).append(dict(score))
                return UpdateScoreStatus.SUCCESS

            def get_results(self, line_item_id: str, page: int = 1, limit=None, user_id=None):
                return {"content": [], "has_next": False, "next": None}

        def service(request: t.Any, lineitem: str | None = None) -> Grades:
            return Grades(_Request(request), platform.conf(), platform.lineitems_url, lineitem)

        class LineItems(Base):
            def get(self) -> None:
                grades = service(self.request)
                page = grades.handle_resp(grades.handle_get_lineitems)
                if page.result is not None:  # the library's page: its items, the next link
                    if page.result.get("next"):
                        self.set_header("Link", f'<{page.result["next"]}>; rel="next"')
                    page.result = page.result["content"]
                self.answer(page)

            def post(self) -> None:
                grades = service(self.request)
                self.answer(grades.handle_resp(grades.handle_create_lineitem))

        class LineItem(Base):
            def get(self, number: str) -> None:
                item = f"{platform.lineitems_url}/{number}"
                grades = service(self.request, item)
                self.answer(grades.handle_resp(grades.handle_get_lineitem, line_item_id=item))

        class Scores(Base):
            def post(self, number: str) -> None:
                item = f"{platform.lineitems_url}/{number}"
                grades = service(self.request, item)
                self.answer(grades.handle_resp(grades.handle_update_score, line_item_id=item))

        return Application(
            [
                (r"/launch", Launch),
                (r"/authorize", Authorize),
                (r"/jwks", Jwks),
                (r"/token", Token),
                (r"/ags/lineitems", LineItems),
                (r"/ags/lineitems/(\d+)", LineItem),
                (r"/ags/lineitems/(\d+)/scores", Scores),
            ]
        )


def wait_for(check: t.Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()
