"""Shared pieces of the end-to-end tests (``pytest -m e2e``): the built book, a browser.

The tests that use them are marked ``e2e``; the README's test command leaves them out
and ``.ci/run`` runs them.  A tool that is missing (Chromium, chromedriver, Selenium,
Jupyter Book) skips the test only when the environment variable ``CI`` is unset; under
CI it is an error.
"""
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTEFACTS = ROOT / '_build' / 'e2e'           # screenshots and logs kept after a run
BOOK_SOURCES = ('_config.yml', '_toc.yml', 'book', 'exercises', '_vendor', '_ext')
# Chromium on a CI machine: no sandbox (root in a container), no GPU, and nothing that
# talks to the network by itself (toolchain notes: QUIC and background services hang
# offline).  A fresh profile per session.
CHROMIUM_FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync')


def missing(reason):
    """Skip (CI unset) or fail (CI set): a missing tool must never pass silently in CI."""
    if os.environ.get('CI'):
        pytest.fail(f'{reason}; CI is set, so this end-to-end check cannot be skipped')
    pytest.skip(f'{reason}; skipped because CI is unset (under CI this is an error)')


def colab_links():
    """``tools/colab_links.py`` as a module (the one place the repository URL is read)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('colab_links', ROOT / 'tools' / 'colab_links.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _newest(paths):
    times = [p.stat().st_mtime for path in paths
             for p in ([path] if path.is_file() else path.rglob('*')) if p.is_file()]
    return max(times, default=0.0)


def fresh_build():
    """``_build/html`` when it was built after every book source last changed, else None."""
    html = ROOT / '_build' / 'html'
    stamp = html / '.buildinfo'
    if not (stamp.exists() and (html / 'book' / 'intro.html').exists()):
        return None
    sources = [ROOT / name for name in BOOK_SOURCES if (ROOT / name).exists()]
    return html if stamp.stat().st_mtime > _newest(sources) else None


def build_book(out_dir):
    """The README's build command into ``out_dir``; returns the HTML folder."""
    jb = Path(sys.executable).parent / 'jupyter-book'
    if not jb.exists():
        missing('jupyter-book is not installed (pip install -e ".[book]")')
    result = subprocess.run([str(jb), 'build', '--all', '-W', '-n', '--keep-going',
                             '--path-output', str(out_dir), str(ROOT)],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return Path(out_dir) / '_build' / 'html'


def chromium_paths():
    """(browser, driver) executables, or a skip/fail saying what is missing."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing('Selenium is not installed (pip install -e ".[test]")')
    browser = shutil.which('chromium') or shutil.which('chromium-browser')
    driver = shutil.which('chromedriver')
    if not (browser and driver):
        missing('no Chromium with chromedriver on PATH (apt-get install chromium chromium-driver)')
    return browser, driver


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves a folder; remembers every path it could not serve (a 404 on a page)."""

    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        self.server.missing.append(f'{code} {self.path}')
        super().send_error(code, message, explain)


class BookServer:
    """The built book served over HTTP on a free local port (as a reader's server would).

    A page read from ``file://`` never asks for ``/favicon.ico`` and logs no 404; over
    HTTP a missing file is an error in the console and lands in ``missing``.
    """

    def __init__(self, folder):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.httpd.missing = []
        self.missing = self.httpd.missing
        self.url = f'http://127.0.0.1:{self.httpd.server_address[1]}'
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def start_chromium(width=1280, height=900, phone=False):
    """A headless Chromium driven by Selenium, with the browser console log enabled.

    The browser and driver are given by path, so Selenium Manager downloads nothing.
    ``phone``: the page is laid out as on a phone ``width`` CSS pixels wide (a mobile
    viewport at device scale 3; a desktop window cannot be made that narrow).
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    browser, driver = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix='taotp-chromium-')
    options.add_argument(f'--user-data-dir={profile}')
    options.add_argument(f'--window-size={width},{height}')
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    session = webdriver.Chrome(service=Service(driver), options=options)
    if phone:
        session.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {
            'width': width, 'height': height, 'deviceScaleFactor': 3, 'mobile': True})
    session.set_page_load_timeout(60)
    session.set_script_timeout(60)
    session.profile_dir = profile
    return session
