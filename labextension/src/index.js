// The course's JupyterLab command "Check with the course's graders": a notebook toolbar button
// and a command-palette entry that save the notebook, send it through the student's own Jupyter
// server (attention_course/integrations/lab_check.py) to the course's grading service on
// JupyterHub, and show its answer: the PASS/FAIL lines and hints, the checks left, or why not
// and when the next check is allowed, in the student's own time. "My checks with the course's
// graders" lists the student's own checks. Nothing is added where the server has no grading
// service to send to (a JupyterLab outside the course's hub).
//
// Everything shown is set as text, never as HTML: the answer quotes the student's own code.
//
// Both dialogs (this Check dialog, and nbgrader's Validate dialog wherever the extension is
// loaded) are made readable without a mouse and zoomed in: the dialog is named by its title,
// and its message region, which scrolls, takes the focus when it opens, so that arrows, PageDown
// and Space scroll it (style/index.css fits it to a small window).

import { Dialog, ICommandPalette, ToolbarButton } from '@jupyterlab/apputils';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

const CHECK = 'attention-course:check';
const LIST = 'attention-course:list-checks';
const ENDPOINT = 'attention-course/hub-check';
const LABEL = "Check with the course's graders";
const LIST_LABEL = "My checks with the course's graders";
const BUTTON_LABEL = 'Check with graders';
const CATEGORY = 'Course';

// ---- the student's server

async function ask(method, path, query) {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, path) + URLExt.objectToQueryString(query || {});
  let response;
  try {
    response = await ServerConnection.makeRequest(url, { method }, settings);
  } catch (error) {
    const said = `your Jupyter server does not answer (${error.message || error})`;
    return { status: 0, body: { error: said } };
  }
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = null;
  }
  if (!body || typeof body !== 'object') {
    body = { error: `your Jupyter server answered ${response.status}, with nothing to read` };
  }
  return { status: response.status, body };
}

// ---- words and times

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

// A moment in the student's own time zone, with the zone's name: "Thu, 3 Dec 2026, 22:35 GMT+5:30".
function localTime(iso) {
  const moment = new Date(iso);
  if (!iso || Number.isNaN(moment.getTime())) {
    return String(iso);
  }
  return moment.toLocaleString(undefined, {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short'
  });
}

function timeElement(iso) {
  const node = element('time', 'ac-check-time', localTime(iso));
  node.dateTime = iso;
  return node;
}

function windowText(seconds) {
  if (seconds === 3600) {
    return 'hour';
  }
  if (seconds % 3600 === 0) {
    return `${seconds / 3600} hours`;
  }
  if (seconds % 60 === 0) {
    return `${seconds / 60} minutes`;
  }
  return `${seconds} seconds`;
}

// The check's feedback, line by line: its total, each function's heading, PASS/FAIL/NOTE lines
// and the hints under them (each wraps at the dialog's width, none is cut).
function feedbackLines(text) {
  const box = element('div', 'ac-check-feedback');
  let first = true;
  for (const raw of String(text || '').split('\n')) {
    if (!raw.trim()) {
      continue;
    }
    const tag = /^(PASS|FAIL|NOTE) /.exec(raw);
    let line;
    if (tag) {
      line = element('div', `ac-check-line ac-check-${tag[1].toLowerCase()}`);
      line.append(element('span', 'ac-check-tag', tag[1]), document.createTextNode(raw.slice(4)));
    } else if (/^\s/.test(raw)) {
      line = element('div', 'ac-check-line ac-check-hint', raw.trim());
    } else if (raw.startsWith('(graded by')) {
      line = element('div', 'ac-check-line ac-check-by', raw);
    } else {
      line = element('div', `ac-check-line ${first ? 'ac-check-total' : 'ac-check-function'}`, raw);
    }
    first = false;
    box.append(line);
  }
  return box;
}

function leftText(assignment, body) {
  const left = body.checks_left;
  if (left === undefined || left === null) {
    return null;
  }
  let text = `Checks of ${assignment} left: ${left}`;
  if (body.per_day && body.window_seconds) {
    text += ` (${body.per_day} per ${windowText(body.window_seconds)})`;
  }
  return text + '.';
}

// ---- dialogs readable by keyboard and zoomed in

let named = 0;

// `dialog` (a .jp-Dialog node): named by its title; its body a focusable, named region that
// scrolls, focused once the dialog has put the focus on its button. Called on every change of
// the page: the title may be written after the dialog is attached.
function readable(dialog) {
  const content = dialog.querySelector('.jp-Dialog-content');
  const header = dialog.querySelector('.jp-Dialog-header');
  const body = dialog.querySelector('.jp-Dialog-body');
  if (!content || !body) {
    return;
  }
  const title = header ? header.textContent.trim() : '';
  if (title && !content.hasAttribute('aria-labelledby')) {
    named += 1;
    header.id = header.id || `ac-dialog-title-${named}`;
    content.setAttribute('aria-labelledby', header.id);
    content.removeAttribute('aria-label');
    body.setAttribute('aria-label', `${title}: the message`);
  }
  if (dialog.classList.contains('ac-readable-dialog')) {
    return;
  }
  dialog.classList.add('ac-readable-dialog');
  content.setAttribute('role', 'dialog');
  content.setAttribute('aria-modal', 'true');
  if (!title) {
    content.setAttribute('aria-label', 'Message');
    body.setAttribute('aria-label', 'The message');
  }
  body.setAttribute('role', 'region');
  body.tabIndex = 0;
  requestAnimationFrame(() => requestAnimationFrame(() => body.focus()));
}

function readableDialogs() {
  const look = () => {
    for (const dialog of document.querySelectorAll('.jp-Dialog')) {
      if (dialog.querySelector('#validation-message') || dialog.classList.contains('ac-check-dialog')) {
        readable(dialog);
      }
    }
  };
  new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
  look();
}

// ---- the dialog's body

class CheckView extends Widget {
  constructor() {
    super();
    this.addClass('ac-check');
    this._timer = null;
  }

  say(...nodes) {
    this.stop();
    this.node.replaceChildren(...nodes);
  }

  // What is happening while the graders work: a check takes seconds, more in a queue.
  waiting(name) {
    const seconds = element('span', 'ac-check-seconds', '0 s');
    const started = Date.now();
    this.say(
      element('p', 'ac-check-status', `Checking ${name} with the course's graders…`),
      element(
        'p',
        'ac-check-explain',
        "Your notebook is saved and sent to the course's grading service. It runs your " +
          'notebook in a sandbox and tests every function with the hidden graders, as the ' +
          "final grade will. This takes a few seconds, longer when other students' checks " +
          'are ahead of yours.'
      ),
      element('p', 'ac-check-explain', 'You may close this window: the answer opens when it is ready.'),
      (() => {
        const line = element('p', 'ac-check-waited', 'Waiting: ');
        line.append(seconds);
        return line;
      })()
    );
    this._timer = setInterval(() => {
      seconds.textContent = `${Math.round((Date.now() - started) / 1000)} s`;
    }, 1000);
  }

  // The answer of the student's server: the check, or why there was none.
  answer(status, body) {
    if (status === 200 && body.check) {
      this.say(...checkNodes(body.check, body));
      return;
    }
    const nodes = [element('p', 'ac-check-refused', `Not checked: ${body.reason || body.error || 'no answer'}.`)];
    if (body.next_allowed) {
      const line = element('p', 'ac-check-next', 'Your next check is allowed from ');
      line.append(timeElement(body.next_allowed), document.createTextNode(' (your time).'));
      nodes.push(line);
    }
    this.say(...nodes);
  }

  stop() {
    if (this._timer !== null) {
      clearInterval(this._timer);
      this._timer = null;
    }
  }

  dispose() {
    this.stop();
    super.dispose();
  }
}

// A check as its student reads it: what became of it, its feedback, the checks left.
function checkNodes(check, body) {
  const nodes = [];
  const state = check.state;
  if (state === 'queued' || state === 'running') {
    nodes.push(
      element(
        'p',
        'ac-check-status',
        `No answer yet: the check is still ${state === 'queued' ? 'waiting its turn' : 'running'}. ` +
          `Its answer will be under “${LIST_LABEL}” (command palette) when it is ready.`
      )
    );
    return nodes;
  }
  if (check.finished) {
    const line = element('p', 'ac-check-when', `${check.assignment}, checked `);
    line.append(timeElement(check.finished));
    nodes.push(line);
  }
  if (state === 'failed') {
    nodes.push(element('p', 'ac-check-uncounted', 'This check does not count against your checks.'));
  }
  const left = body ? leftText(check.assignment, body) : null;
  if (left) {
    nodes.push(element('p', 'ac-check-left', left));
  }
  nodes.push(feedbackLines(check.feedback));
  return nodes;
}

// ---- the commands

async function checkNotebook(panel, busy) {
  const name = panel.context.localPath.split('/').pop();
  const view = new CheckView();
  view.say(element('p', 'ac-check-status', `Saving ${name}…`));
  let open = true;
  const dialog = new Dialog({
    title: LABEL,
    body: view,
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
  dialog.addClass('ac-check-dialog');
  void dialog.launch().then(() => {
    open = false;
  });
  busy.checking = true;
  let answer;
  try {
    try {
      await panel.context.save();
    } catch (error) {
      answer = { status: 0, body: { error: `${name} could not be saved (${error.message || error})` } };
    }
    if (!answer) {
      view.waiting(name);
      answer = await ask('POST', ENDPOINT, { path: panel.context.path });
    }
  } finally {
    busy.checking = false;
  }
  if (open) {
    view.answer(answer.status, answer.body);
    return;
  }
  // closed while waiting: the answer opens on its own
  const shown = new CheckView();
  shown.answer(answer.status, answer.body);
  const again = new Dialog({ title: LABEL, body: shown, buttons: [Dialog.okButton({ label: 'Close' })] });
  again.addClass('ac-check-dialog');
  await again.launch();
}

async function listChecks() {
  const view = new CheckView();
  view.say(element('p', 'ac-check-status', "Asking the course's grading service…"));
  const dialog = new Dialog({
    title: LIST_LABEL,
    body: view,
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
  dialog.addClass('ac-check-dialog');
  void dialog.launch();
  const { status, body } = await ask('GET', URLExt.join(ENDPOINT, 'checks'));
  if (status !== 200 || !Array.isArray(body.checks)) {
    view.answer(status === 200 ? 500 : status, body);
    return;
  }
  if (!body.checks.length) {
    view.say(element('p', 'ac-check-none', "You have no checks with the course's graders yet."));
    return;
  }
  const items = [...body.checks].reverse().map((check, index) => {
    const item = element('details', 'ac-check-item');
    item.open = index === 0;
    const summary = element('summary', 'ac-check-summary', `${check.assignment}, asked `);
    const score = check.score === null || check.score === undefined ? '' : `: ${check.score} / ${check.max_score}`;
    summary.append(timeElement(check.requested), document.createTextNode(` (${check.state}${score})`));
    item.append(summary, ...checkNodes(check, null));
    return item;
  });
  view.say(...items);
}

function addButton(panel, check) {
  const button = new ToolbarButton({
    className: 'ac-check-button',
    label: BUTTON_LABEL,
    tooltip: `${LABEL}: the hidden tests grade this notebook as the final grade will (checks are limited)`,
    onClick: () => {
      void check(panel);
    }
  });
  let index = 0;
  for (const item of panel.toolbar.children()) {
    if (!item || item.node.classList.contains('jp-Toolbar-spacer')) {
      break;
    }
    index += 1;
  }
  panel.toolbar.insertItem(index, 'attention-course-check', button);
}

const plugin = {
  id: '@attention-course/check:plugin',
  description: LABEL,
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: async (app, tracker, palette) => {
    readableDialogs();
    const { status, body } = await ask('GET', ENDPOINT);
    if (status !== 200 || body.available !== true) {
      console.info(`${LABEL}: not available here (${body.reason || body.error || status})`);
      return;
    }
    const busy = { checking: false };
    const check = async panel => {
      if (!busy.checking) {
        await checkNotebook(panel, busy);
      }
    };
    app.commands.addCommand(CHECK, {
      label: LABEL,
      caption: 'Send this notebook to the hidden graders (checks are limited per day)',
      isEnabled: () => tracker.currentWidget !== null && !busy.checking,
      execute: () => (tracker.currentWidget ? check(tracker.currentWidget) : undefined)
    });
    app.commands.addCommand(LIST, {
      label: LIST_LABEL,
      caption: 'Your earlier checks with the hidden graders and their answers',
      execute: () => listChecks()
    });
    if (palette) {
      palette.addItem({ command: CHECK, category: CATEGORY });
      palette.addItem({ command: LIST, category: CATEGORY });
    }
    tracker.forEach(panel => addButton(panel, check));
    tracker.widgetAdded.connect((_, panel) => addButton(panel, check));
  }
};

// ---- Formgrader in a browser tab of its own

// nbgrader's "Nbgrader > Formgrader" menu item (its menu plugin) opens formgrader in an iframe,
// which the hub's pages forbid (Content-Security-Policy frame-ancestors: a page of one user's
// server must not be framed, nbgrader #1947). On the instructor's hub server nbgrader's own
// formgrader plugin is off (attention_course/integrations/jupyterhub.py) and this command takes
// its id: the same menu item, and the command palette, open formgrader in a new browser tab.
const FORMGRADER = 'nbgrader:open-formgrader';
const FORMGRADER_PATH = 'formgrader';
const NBGRADER_FORMGRADER = '@jupyter/nbgrader:formgrader';

const formgrader = {
  id: '@attention-course/check:formgrader',
  description: 'Formgrader in a browser tab of its own',
  autoStart: true,
  optional: [ICommandPalette],
  activate: async (app, palette) => {
    if (!PageConfig.Extension.isDisabled(NBGRADER_FORMGRADER)) {
      return; // nbgrader's own formgrader plugin is on: its command stays
    }
    const { status } = await ask('GET', `${FORMGRADER_PATH}/api/assignments`);
    if (status !== 200) {
      return; // no formgrader on this server (a student's)
    }
    const address = () =>
      URLExt.join(ServerConnection.makeSettings().baseUrl, FORMGRADER_PATH);
    app.commands.addCommand(FORMGRADER, {
      label: 'Formgrader (new browser tab)',
      caption: 'Open formgrader in a browser tab of its own',
      execute: () => {
        window.open(address(), '_blank', 'noopener');
      }
    });
    if (palette) {
      palette.addItem({ command: FORMGRADER, category: 'nbgrader' });
    }
  }
};

export default [plugin, formgrader];
