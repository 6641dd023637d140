"""The notebooks in JupyterLab, as the README sets it up (``pytest -m e2e``).

A JupyterLab server from this environment (with its Jupytext pairing) serves a scratch
folder holding copies of the notebooks, their paired scripts and ``jupytext.toml``;
headless Chromium opens them in JupyterLab's default layout, 1400 px wide.  Autosave is
set to every ``AUTOSAVE_S`` seconds instead of two minutes, so a test need not wait.

* **Opening changes nothing.**  Each exercises and book notebook is opened, its kernel
  starts, autosave gets two chances to run; the notebook must not be marked modified
  and both files must be byte for byte what the repository holds (``git status`` stays
  clean).  This is what ``tools/run_notebooks.py`` stores the kernelspec for.
* **Live widgets work.**  Each book notebook with a live widget is run top to bottom
  in a scratch copy; in every widget each slider track is at least ``MIN_TRACK_PX``
  wide, no label is cut, every slider shows its value (Chapter 10's hardening
  constants start at the text's 500 and 20, ``START_READOUTS``), and moving the
  first control (a key press on a slider, another option of a menu) redraws the
  figure.  A stored kernel-free player shows its note in the untrusted,
  freshly opened notebook, and steps once its cell has run.

Screenshots land in ``_build/e2e/screenshots/lab-*.png``.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from e2e_helpers import ARTEFACTS, ROOT, missing, start_chromium

pytestmark = pytest.mark.e2e

AUTOSAVE_S = 3
WIDTH, HEIGHT = 1400, 900
MIN_TRACK_PX = 150
# the start values the text names, as a live widget shows them: {page: {widget: {label: readout}}}
START_READOUTS = {'book/10_selective_induction': {1: {'lam': '500', 'beta': '20'}}}
TOKEN = 'taotp-e2e'
PANEL = '.jp-NotebookPanel:not(.lm-mod-hidden)'      # the notebook on show
SHOTS = ARTEFACTS / 'screenshots'
OPENED = sorted(f'{folder}/{p.stem}' for folder in ('exercises', 'book')
                for p in (ROOT / folder).glob('*.ipynb'))
WITH_WIDGETS = sorted(f'book/{p.stem}' for p in (ROOT / 'book').glob('*.py')
                      if '.widget()' in p.read_text())


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on a scratch folder, and its REST API."""

    def __init__(self, folder):
        jupyter = Path(sys.executable).parent / 'jupyter'
        if not jupyter.exists():
            missing('JupyterLab is not installed (pip install -r requirements.txt)')
        self.folder, self.port = Path(folder), _free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        state = self.folder / '.lab'
        settings = state / 'settings' / '@jupyterlab' / 'docmanager-extension'
        settings.mkdir(parents=True)
        (settings / 'plugin.jupyterlab-settings').write_text(
            json.dumps({'autosave': True, 'autosaveInterval': AUTOSAVE_S}))
        env = {**os.environ, 'JUPYTER_DATA_DIR': str(state / 'data'),
               'JUPYTER_RUNTIME_DIR': str(state / 'runtime'),
               'JUPYTER_CONFIG_DIR': str(state / 'config')}
        env.pop('TAOTP_PROGRESS', None)
        env.pop('TAOTP_IMAGES', None)                  # a reader's kernel draws its pictures
        env['TAOTP_PROGRESS'] = str(state / 'progress.json')
        args = [str(jupyter), 'lab', '--no-browser', f'--port={self.port}',
                f'--IdentityProvider.token={TOKEN}', f'--ServerApp.root_dir={self.folder}',
                '--LabApp.expose_app_in_browser=True',
                f'--LabApp.workspaces_dir={state / "workspaces"}',
                f'--LabApp.user_settings_dir={state / "settings"}']
        if hasattr(os, 'geteuid') and os.geteuid() == 0:
            args.append('--allow-root')                    # CI containers run as root
        self.log = open(state / 'server.log', 'w')
        self.process = subprocess.Popen(args, env=env, cwd=self.folder, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                self.api('status')
                return
            except OSError:
                time.sleep(0.5)
        self.close()
        log = (state / 'server.log').read_text()[-2000:]
        raise AssertionError(f'JupyterLab did not start: {log}')

    def api(self, path, method='GET'):
        request = urllib.request.Request(f'{self.url}/api/{path}', method=method,
                                         headers={'Authorization': f'token {TOKEN}'})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def kernels_idle(self, path):
        sessions = [s for s in self.api('sessions') if s['path'] == path]
        return bool(sessions) and all(s['kernel']['execution_state'] == 'idle' for s in sessions)

    def shut_down_kernels(self):
        for session in self.api('sessions'):
            self.api(f'sessions/{session["id"]}', method='DELETE')

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def _copy(page, folder):
    """``page``'s notebook and paired script, with the pairing config, into ``folder``."""
    (folder / page).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / 'jupytext.toml', folder)
    for ext in ('.ipynb', '.py'):
        shutil.copy(ROOT / f'{page}{ext}', folder / f'{page}{ext}')


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    """One JupyterLab server on a scratch folder (each test copies its notebooks in)."""
    server = Lab(tmp_path_factory.mktemp('lab'))
    yield server
    server.close()


@pytest.fixture(scope='module')
def browser():
    session = start_chromium(WIDTH, HEIGHT)
    yield session
    session.quit()
    shutil.rmtree(session.profile_dir, ignore_errors=True)


def _open(browser, lab, path):
    """Open ``path`` (relative to the lab's folder) and wait until its kernel is idle."""
    url = f'{lab.url}/lab/tree/{path}?reset&token={TOKEN}'     # reset: no tab of before
    try:
        browser.get(url)
    except Exception:                       # a "leave page?" prompt of the previous one
        browser.switch_to.alert.accept()
        browser.get(url)
    deadline = time.time() + 90
    while not (browser.execute_script(f'return !!document.querySelector("{PANEL} .jp-Cell")')
               and lab.kernels_idle(path)):
        assert time.time() < deadline, f'{path}: the notebook or its kernel did not start'
        time.sleep(0.5)


DIRTY = 'return !!document.querySelector(".jp-mod-dirty")'   # the tab of a modified document
SCROLL_DOWN = ('for (const p of document.querySelectorAll(".jp-WindowedPanel-outer, '
               '.jp-Notebook")) p.scrollTop += 2000')


@pytest.fixture(scope='module')
def opened(lab, browser):
    """Open a notebook (once) in a scratch copy: is it marked modified, which files changed."""
    seen = {}

    def visit(page):
        if page not in seen:
            folder = lab.folder / 'opened'
            _copy(page, folder)
            _open(browser, lab, f'opened/{page}.ipynb')
            time.sleep(2.5 * AUTOSAVE_S + 1)            # two chances for autosave
            changed = [ext for ext in ('.ipynb', '.py') if (folder / f'{page}{ext}').read_bytes()
                       != (ROOT / f'{page}{ext}').read_bytes()]
            notes = 'return document.querySelectorAll(".taotp-player-note").length'
            deadline = time.time() + 30     # a long notebook renders its lower cells later
            players = '.player(' in (ROOT / f'{page}.py').read_text()
            while players and not browser.execute_script(notes) and time.time() < deadline:
                browser.execute_script(SCROLL_DOWN)
                time.sleep(0.5)
            seen[page] = {'dirty': browser.execute_script(DIRTY), 'changed': changed,
                          'player_notes': browser.execute_script(notes)}
            lab.shut_down_kernels()
        return seen[page]
    return visit


@pytest.mark.parametrize('page', OPENED)
def test_opening_a_notebook_leaves_it_unchanged(opened, page):
    found = opened(page)
    assert not found['changed'], f'JupyterLab rewrote {page}{found["changed"]} on opening it'
    assert not found['dirty'], f'{page} is marked modified as soon as it is opened'


@pytest.mark.parametrize('page', WITH_WIDGETS)
def test_players_say_where_they_step_in_a_freshly_opened_notebook(opened, page):
    """Untrusted, the stored players do not step; their note says so (and where they do)."""
    source = (ROOT / f'{page}.py').read_text()
    if '.player(' in source:
        assert opened(page)['player_notes'] >= 1


WIDGETS = r'''
const views = [...document.querySelectorAll('PANEL .jp-OutputArea-output')]
  .map(o => o.querySelector('.widget-vbox'))
  .filter(v => v && v.querySelector('.widget-hbox') && v.querySelector('.widget-output'));
const label = e => e.querySelector('.widget-label');
const cut = e => label(e).scrollWidth > label(e).clientWidth + 1;
return views.map((view, i) => {
  view.dataset.taotpView = i;
  return {
    sliders: [...view.querySelectorAll('.widget-slider')].map(s => ({
      label: label(s).textContent, label_cut: cut(s),
      track: Math.round((s.querySelector('.slider-container') || s).getBoundingClientRect().width),
      readout: ((s.querySelector('.widget-readout') || {}).value ||
                (s.querySelector('.widget-readout') || {}).textContent || '').trim()})),
    menus: [...view.querySelectorAll('.widget-dropdown')].map(d => ({
      label: label(d).textContent, label_cut: cut(d)})),
    image: (view.querySelector('.widget-output img') || {}).src || null};
});
'''.replace('PANEL', PANEL)

IMAGE_CHANGES = r'''
const [index, before, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const view = document.querySelector(`[data-taotp-view="${index}"]`);
const image = () => (view.querySelector('.widget-output img') || {}).src || null;
const start = Date.now();
(function wait() {
  const now = image();
  if (now && now !== before) return done(true);
  if (Date.now() - start > 60000) return done(false);
  setTimeout(wait, 250);
})();
'''


def _move_first_control(browser, index, image):
    '''Move the first control of widget ``index`` as a reader would; did the figure change?'''
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
    first = browser.find_element('css selector',
                                 f'[data-taotp-view="{index}"] .widget-hbox > :first-child')
    browser.execute_script('arguments[0].scrollIntoView({block: "center"})', first)
    handles = first.find_elements('css selector', '.noUi-handle')
    if handles:
        handles[0].send_keys(Keys.ARROW_RIGHT)         # one step up, as a key press does
    else:
        menu = Select(first.find_element('css selector', 'select'))
        current = menu.options.index(menu.first_selected_option)
        menu.select_by_index((current + 1) % len(menu.options))
    changed = browser.execute_async_script(IMAGE_CHANGES, index, image)
    return {'control': first.text.strip()[:40], 'changed': changed}


STEP_PLAYER = r'''
const done = arguments[arguments.length - 1];
const player = document.querySelector('PANEL .taotp-player');
if (!player) return done(null);
const img = player.querySelector('img'), before = img.src;
player.querySelector('[data-step="1"]').click();
setTimeout(() => done(img.src !== before), 300);
'''.replace('PANEL', PANEL)


# cells queued or running ([*]) or not run yet ([ ])
RUNNING = r'''
return [...document.querySelectorAll('PANEL .jp-InputPrompt')]
  .filter(p => /\[(\*| )\]/.test(p.textContent)).length;
'''.replace('PANEL', PANEL)
STDERR = r'''
return [...document.querySelectorAll(
  'PANEL .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
  .map(e => e.textContent.slice(0, 300));
'''.replace('PANEL', PANEL)


@pytest.fixture(scope='module')
def ran(lab, browser):
    """Run a notebook with live widgets (once) top to bottom in JupyterLab: what they did."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen = {}

    def visit(page):
        if page in seen:
            return seen[page]
        _copy(page, lab.folder / 'ran')
        path = f'ran/{page}.ipynb'
        _open(browser, lab, path)
        browser.find_element('css selector', f'{PANEL} .jp-Cell').click()    # focus the notebook
        browser.execute_script("return jupyterapp.commands.execute('notebook:run-all-cells')")
        deadline = time.time() + 300
        while True:
            time.sleep(1)
            pending = browser.execute_script(RUNNING)
            if not pending and lab.kernels_idle(path):
                break
            assert time.time() < deadline, f'{page} did not finish running in JupyterLab'
        widgets = browser.execute_script(WIDGETS)
        moves = [_move_first_control(browser, i, w['image']) for i, w in enumerate(widgets)]
        player_steps = browser.execute_async_script(STEP_PLAYER)
        errors = browser.execute_script(STDERR)
        for i in range(len(widgets)):
            view = browser.find_element('css selector', f'[data-taotp-view="{i}"]')
            browser.execute_script('arguments[0].scrollIntoView()', view)
            view.screenshot(str(SHOTS / f'lab-{page.replace("/", "-")}-widget-{i}.png'))
        seen[page] = {'widgets': widgets, 'moves': moves, 'player_steps': player_steps,
                      'errors': errors}
        lab.shut_down_kernels()
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        report = {p: {**v, 'widgets': [{**w, 'image': bool(w['image'])} for w in v['widgets']]}
                  for p, v in seen.items()}
        (ARTEFACTS / 'lab-widgets.json').write_text(json.dumps(report, indent=1))
        return seen[page]
    return visit


@pytest.mark.parametrize('page', WITH_WIDGETS)
def test_live_widgets_are_usable_and_redraw(ran, page):
    found = ran(page)
    assert not found['errors'], f'{page} wrote to stderr in JupyterLab: {found["errors"]}'
    assert found['widgets'], f'{page}: no live widget showed up after running it'
    for i, (widget, move) in enumerate(zip(found['widgets'], found['moves'])):
        for slider in widget['sliders']:
            assert slider['track'] >= MIN_TRACK_PX, \
                f'{page} widget {i}: the track of {slider["label"]} is {slider["track"]} px'
            assert not slider['label_cut'], f'{page} widget {i}: label {slider["label"]} is cut'
            assert slider['readout'].strip(), f'{page} widget {i}: {slider["label"]} has no readout'
        for menu in widget['menus']:
            assert not menu['label_cut'], f'{page} widget {i}: label {menu["label"]} is cut'
        assert widget['image'], f'{page} widget {i} shows no figure'
        assert move['changed'], f'{page} widget {i}: moving {move["control"]!r} did not redraw'
    for i, readouts in START_READOUTS.get(page, {}).items():
        shown = {s['label']: s['readout'] for s in found['widgets'][i]['sliders']}
        assert {k: shown.get(k) for k in readouts} == readouts, \
            f'{page} widget {i} starts at {shown}, the text names {readouts}'


@pytest.mark.parametrize('page', [p for p in WITH_WIDGETS if '.player(' in
                                  (ROOT / f'{p}.py').read_text()])
def test_players_step_once_their_cell_has_run(ran, page):
    assert ran(page)['player_steps'], f'{page}: the re-run player did not step'
