"""A JupyterLab server for the browser tests, and what a person does in it (open, run, validate)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.processes import free_port, stop_process

BIN = Path(sys.executable).parent
LABEXTENSION = Path(__file__).resolve().parents[2] / "attention_course" / "labextension"
START_TIMEOUT = 90  # seconds for JupyterLab to answer
RUN_TIMEOUT_MS = 180_000  # running a whole notebook, validating one

# Lab settings of the test servers: every cell in the DOM (so it can be measured).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
# No news for the instructor's server; the students' has none from their configuration alone.
NO_NEWS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


@dataclass
class LabServer:
    """A running JupyterLab: its process, address and token."""

    process: subprocess.Popen
    port: int
    token: str
    root: Path
    log: Path

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Shut the server down (it stops its kernels), killing it if it does not stop."""
        stop_process(self.process, timeout=20)


def start_lab(
    root: Path, state: Path, config_path: Path | None = None, lab_settings: dict | None = None
) -> LabServer:
    """JupyterLab with nbgrader's extensions on 127.0.0.1, serving `root` (its working folder
    too, where nbgrader looks for nbgrader_config.py). `state` holds its settings, workspaces,
    runtime files and log, and its own JUPYTER_CONFIG_DIR (empty, so the user's ~/.jupyter is
    never read); `config_path` goes on JUPYTER_CONFIG_PATH, as students' configuration does
    (README, Students' JupyterLab). `lab_settings` are added to LAB_SETTINGS. The course's own
    JupyterLab extension is installed in its data folder."""
    settings = state / "settings"
    for name, data in {**LAB_SETTINGS, **(lab_settings or {})}.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    config_dir = state / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    # The course's JupyterLab extension where an installed wheel puts it (this checkout's
    # editable install puts no data files anywhere): {data dir}/labextensions.
    extension = state / "data" / "labextensions" / "@attention-course" / "check"
    extension.parent.mkdir(parents=True, exist_ok=True)
    extension.symlink_to(LABEXTENSION, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    if config_path is not None:
        env["JUPYTER_CONFIG_PATH"] = str(config_path)
    env.update(
        JUPYTER_CONFIG_DIR=str(config_dir),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTER_DATA_DIR=str(state / "data"),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        MPLCONFIGDIR=str(state / "matplotlib"),
    )
    # Matplotlib's first import builds a font cache and says so on stderr: build it here, so
    # that a notebook's stderr only ever holds what its code wrote.
    subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], env=env, check=True)
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        str(BIN / "jupyter-lab"),
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={state / 'workspaces'}",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = state / "jupyterlab.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    server = LabServer(process, port, token, root, log)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited ({process.returncode}):\n{server.log_tail()}")
        try:
            request = urllib.request.Request(server.url("/api/status"), headers=server.headers())
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return server
        except OSError:
            pass
        time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"JupyterLab did not answer in {START_TIMEOUT} s:\n{server.log_tail()}")


# --- what a person does in JupyterLab -----------------------------------------------------------

_CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"

ERROR_OUTPUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# A code cell whose source is hidden shows no prompt: the cells after it tell that it ran.
WAIT_FOR_RUN = """([until, selector, error]) => {
  const cells = [...document.querySelectorAll(selector)]
    .filter(c => c.classList.contains('jp-CodeCell') && !c.querySelector('.jp-InputPlaceholder'));
  const prompts = cells.map(c => c.querySelector('.jp-InputArea-prompt')?.textContent || '');
  if (!prompts.length || prompts.some(t => t.includes('*'))) return false;
  if (until === 'all') return prompts.every(t => /\\[\\d+\\]/.test(t));
  return cells.some(c => c.querySelector(error));
}"""


def open_notebook(page, lab: LabServer, path: str) -> None:
    """Open `path` in a fresh JupyterLab workspace and wait for its kernel."""
    workspace = "w" + secrets.token_hex(4)
    page.goto(lab.url(f"/lab/workspaces/{workspace}/tree/{path}?reset"))
    page.wait_for_selector(".jp-NotebookPanel", timeout=60_000)
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=60_000)


def cells(page):
    """The open notebook's cells, in notebook order."""
    return page.locator(_CELLS)


def run_all(page, until: str = "all") -> None:
    """Run > Run All Cells, as a student does; wait until every code cell has run (`all`) or the
    run stopped at an error (`error`)."""
    page.locator(".lm-MenuBar-item", has_text="Run").click()
    page.locator('li.lm-Menu-item[data-command="runmenu:run-all"]').click()
    page.wait_for_function(WAIT_FOR_RUN, arg=[until, _CELLS, ERROR_OUTPUT], timeout=RUN_TIMEOUT_MS)


def validate(page) -> str:
    """Press nbgrader's Validate button; returns the dialog's text (the dialog stays open)."""
    toolbar = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-toolbar")
    toolbar.get_by_role("button", name="Validate").click()
    message = page.locator(".jp-Dialog #validation-message")
    message.wait_for(timeout=RUN_TIMEOUT_MS)
    return message.inner_text()


def close_dialog(page) -> None:
    page.locator(".jp-Dialog").get_by_role("button", name="Ok").click()
    page.locator(".jp-Dialog").wait_for(state="detached")
