"""The check service under a bounded burst on 127.0.0.1, with one abusive student: each honest
check's latency, printed. Asserts nothing.

    python benchmarks/check_service_burst.py [--students 10] [--checks 5] [--workers 1]

A real JupyterHub (DummyAuthenticator, configurable-http-proxy from the setup's node tools)
starts the service as a managed service (`attention-course hub-check-service`, this course,
a gradebook of its own in a temporary folder, `--per-day` large enough for the burst). Each
of `--students` students checks the instructor's attention_basics `--checks` times, one check
after the other (a student has one check pending at a time), all students at once; meanwhile
one more student (mallory) sends parse bombs (one code cell `x=[a,a,...]` of 1.4 MB, no
assignment named) back to back until the honest checks are done. Printed: for each honest
check, the time its POST took to be answered (the notebook read: 202) and the time until it
was graded; their medians and maxima; mallory's requests and how they were answered; the
service's peak resident memory (VmHWM) and its data limit.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attention_course.cli.samples import sample_notebooks  # noqa: E402

PROXY = ROOT / ".venv" / "node_tools" / "node_modules" / ".bin" / "configurable-http-proxy"
SERVICE = "course-check"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(url: str, token: str, body: bytes | None = None, method: str | None = None):
    req = urllib.request.Request(
        url, data=body, headers={"Authorization": f"token {token}"}, method=method
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw)
        except ValueError:
            return exc.code, {"raw": raw.decode(errors="replace")[:200]}
    except (urllib.error.URLError, ConnectionError) as exc:  # not listening (yet), or reset
        return 0, {"error": str(exc)}


def bomb() -> bytes:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x=[" + "a," * 700_000 + "]"))
    return nbformat.writes(nb).encode()


def service_pid(course: Path) -> int | None:
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"hub-check-service" in argv and str(course).encode() in argv:
            return int(proc.name)
    return None


def proc_field(pid: int, name: str) -> str:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "?"
    found = re.search(rf"{name}:\s+(\d+) kB", text)
    return f"{int(found.group(1)) / 1024:.0f} MiB" if found else "?"


def data_limit(pid: int) -> str:
    try:
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
            if line.startswith("Max data size"):
                soft = line.split()[3]
                return "unlimited" if soft == "unlimited" else f"{int(soft) / 2**20:.0f} MiB"
    except OSError:
        pass
    return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--checks", type=int, default=5, help="checks of each student")
    parser.add_argument("--workers", type=int, default=1, help="checks graded at once")
    args = parser.parse_args()
    if not PROXY.exists():
        print(f"no {PROXY}: run scripts/setup.sh first", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="check-burst-"))
    hub_port, api_port, proxy_port, service_port = (free_port() for _ in range(4))
    admin = secrets.token_hex(16)
    program = Path(sys.executable).with_name("attention-course")
    per_day = args.checks + 1000
    command = [str(program), "hub-check-service", "--course", str(ROOT)]
    command += ["--db", f"sqlite:///{tmp / 'checks.db'}", "--per-day", str(per_day)]
    command += ["--workers", str(args.workers)]
    config = f"""
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {proxy_port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.JupyterHub.db_url = "sqlite:///{tmp / "hub.sqlite"}"
c.JupyterHub.cookie_secret_file = "{tmp / "cookie_secret"}"
c.JupyterHub.pid_file = "{tmp / "hub.pid"}"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.services = [
    {{"name": {SERVICE!r}, "url": "http://127.0.0.1:{service_port}", "command": {command!r}}},
    {{"name": "bench", "api_token": {admin!r}}},
]
c.JupyterHub.load_roles = [
    {{"name": "user", "scopes": ["self", "access:services!service={SERVICE}"]}},
    {{"name": "bench", "scopes": ["admin:users", "tokens"], "services": ["bench"]}},
]
"""
    (tmp / "jupyterhub_config.py").write_text(config)
    log = (tmp / "hub.log").open("w")
    hub = subprocess.Popen(
        [str(Path(sys.executable).with_name("jupyterhub")), "-f", "jupyterhub_config.py"],
        cwd=tmp,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{hub_port}/hub/api"
    service = f"http://127.0.0.1:{service_port}/services/{SERVICE}/api/"
    try:
        deadline = time.monotonic() + 120
        while call(base + "/users", admin)[0] != 200:
            if time.monotonic() > deadline or hub.poll() is not None:
                print((tmp / "hub.log").read_text()[-3000:], file=sys.stderr)
                return 1
            time.sleep(0.5)
        names = [f"student{i}" for i in range(args.students)] + ["mallory"]
        tokens = {}
        for name in names:
            call(f"{base}/users/{name}", admin, b"{}")
            _, made = call(f"{base}/users/{name}/tokens", admin, b'{"note": "burst"}')
            tokens[name] = made["token"]
        while call(service + "limit?assignment=attention_basics", tokens["mallory"])[0] != 200:
            if time.monotonic() > deadline:
                print((tmp / "hub.log").read_text()[-3000:], file=sys.stderr)
                return 1
            time.sleep(0.5)
        pid = service_pid(ROOT)
        honest = sample_notebooks("attention_basics", ROOT)["demo-instructor"]
        import nbformat

        results: list[tuple[str, float, float, str]] = []
        lock = threading.Lock()
        done = threading.Event()

        def student(name: str) -> None:
            for n in range(args.checks):
                honest.metadata["burst"] = f"{name}-{n}"  # another notebook each time
                body = nbformat.writes(honest).encode()
                start = time.monotonic()
                status, answer = call(service + "checks", tokens[name], body)
                taken = time.monotonic() - start
                if status != 202:
                    with lock:
                        results.append((name, taken, float("nan"), f"{status} {answer}"))
                    continue
                check = service + f"checks/{answer['check']['id']}"
                while True:
                    _, found = call(check, tokens[name])
                    state = found.get("check", {}).get("state")
                    if state not in ("queued", "running"):
                        break
                    time.sleep(0.2)
                with lock:
                    results.append((name, taken, time.monotonic() - start, str(state)))

        abuse: list[tuple[float, int, str]] = []

        def mallory() -> None:
            body = bomb()
            while not done.is_set():
                start = time.monotonic()
                status, answer = call(service + "checks", tokens["mallory"], body)
                abuse.append((time.monotonic() - start, status, str(answer.get("error"))[:90]))

        attacker = threading.Thread(target=mallory)
        attacker.start()
        time.sleep(1.0)  # mallory's first bomb is being read
        began = time.monotonic()
        threads = [threading.Thread(target=student, args=(n,)) for n in names[:-1]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - began
        done.set()
        attacker.join()
        print(
            f"{len(results)} honest checks from {args.students} students, {args.workers} "
            f"grading worker(s), while mallory sent {len(abuse)} parse bombs; {wall:.1f} s"
        )
        print("student     POST answered (s)   graded after (s)   state")
        for name, taken, total, state in sorted(results):
            print(f"{name:<11} {taken:>17.3f}   {total:>16.1f}   {state}")
        posts = [r[1] for r in results]
        totals = [r[2] for r in results if r[2] == r[2]]
        print(f"POST answered: median {statistics.median(posts):.3f} s, max {max(posts):.3f} s")
        if totals:
            print(
                f"graded after:  median {statistics.median(totals):.1f} s, max {max(totals):.1f} s"
            )
        answered = sorted({(s, e) for _, s, e in abuse})
        print(
            f"mallory's bombs: {len(abuse)}, answered in median "
            f"{statistics.median(a[0] for a in abuse):.2f} s; answers: {answered}"
        )
        if pid is not None:
            print(
                f"service (pid {pid}): peak resident {proc_field(pid, 'VmHWM')}, now "
                f"{proc_field(pid, 'VmRSS')}, data limit {data_limit(pid)}"
            )
    finally:
        hub.terminate()
        try:
            hub.wait(30)
        except subprocess.TimeoutExpired:
            hub.kill()
        log.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
