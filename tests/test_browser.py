"""Every page of the built book in a real browser (headless Chromium at 1280 px).

The book is built with the README's command into a scratch folder (``_build/html`` is
reused when it is newer than every book source; ``TAOTP_BOOK_HTML`` names another built
folder).  Each page is loaded once; the
checks below read what that visit found:

* the page loads with no console error and fetches nothing from the network;
* every ``<img>`` decodes; MathJax typesets every formula, with no error and no raw
  ``$`` or ``\\(`` left in the text;
* no output shows a traceback, a warning, a function repr or a machine path, except
  the tracebacks of cells tagged ``raises-exception`` (with package-relative paths);
* at 1280 px the index of programs shows every column, and any other wide table,
  code block or display equation scrolls inside its own box (nothing is cut off);
* each kernel-free player says what it is and steps to a different frame;
* the Colab launch button and badge open the notebook in the configured repository;
* one search field, and no script included twice.

Screenshots go to ``_build/e2e/screenshots`` (the top of each page, the index table,
each page's first player after a step).
"""
import os
import re
import shutil
from pathlib import Path

import pytest

from e2e_helpers import ARTEFACTS, ROOT, build_book, colab_links, fresh_build, start_chromium

pytestmark = pytest.mark.e2e

TOC = (ROOT / '_toc.yml').read_text()
PAGES = [m.split('/', 1)[1] for m in re.findall(r'(?:root|file):\s*(book/\S+)', TOC)]
NOTEBOOKS = [p for p in PAGES if (ROOT / 'book' / f'{p}.ipynb').exists()]
KEY_TABLES = {'programs': ['ch', 'program', 'L', 'H', 'd', 'MLP', 'total', 'source',
                           'non-zero', 'source']}
SHOTS = ARTEFACTS / 'screenshots'

INSPECT = r'''
const [root, done] = [arguments[0], arguments[arguments.length - 1]];
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const article = document.querySelector('.bd-article');
  const text = e => (e.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 120);
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  // the nearest box inside the article that scrolls sideways (the theme lets the whole
  // article scroll, which moves every paragraph: that does not count as reachable)
  const scrollBox = e => {
    for (let p = e.parentElement; p && p !== article; p = p.parentElement) {
      if (scrolls(p)) return p;
    }
    return null;
  };
  const r = {};

  r.images = [];
  for (const img of document.images) {
    img.loading = 'eager';
    try { await img.decode(); } catch (err) { /* reported below */ }
    if (!(img.complete && img.naturalWidth > 0)) {
      r.images.push((img.getAttribute('src') || '').slice(0, 100));
    }
  }
  r.remote = performance.getEntriesByType('resource').map(e => e.name)
    .filter(u => /^https?:/.test(u));
  const scripts = [...document.scripts]
    .map(s => s.src ? 'src ' + s.src : 'inline ' + s.textContent.trim())
    .filter(s => s !== 'inline ');
  r.duplicate_scripts = [...new Set(scripts.filter((s, i) => scripts.indexOf(s) !== i))]
    .map(s => s.slice(0, 120));
  r.widget_snapshots = document.querySelectorAll(
    'script[type^="application/vnd.jupyter.widget"], .jupyter-widgets').length;
  r.search_fields = [...document.querySelectorAll('.search-button-field')]
    .filter(e => e.offsetParent !== null && e.getBoundingClientRect().width > 0).length;

  r.math = document.querySelectorAll('mjx-container').length;
  r.math_errors = [...document.querySelectorAll('mjx-merror, [data-mjx-error]')].map(text);
  r.untypeset = [...article.querySelectorAll('.math')]
    .filter(e => !e.querySelector('mjx-container')).map(text);
  r.raw_tex = [];
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const skip = 'pre, code, kbd, script, style, mjx-container, .highlight';
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest(skip)) continue;
    if (/\$|\\\(|\\\[/.test(n.textContent)) r.raw_tex.push(n.textContent.trim().slice(0, 120));
  }

  r.noisy_outputs = []; r.reprs = []; r.paths = []; r.error_demos = 0;
  for (const cell of article.querySelectorAll('div.cell')) {
    const outputs = [...cell.querySelectorAll('.cell_output')];
    const out = outputs.map(o => o.textContent).join('\n');
    const demo = cell.classList.contains('tag_raises-exception');
    if (demo && cell.querySelector('.output.traceback')) r.error_demos += 1;
    const noisy = cell.querySelector('.output.traceback, .output.stderr') ||
      /Traceback \(most recent call last\)|\b[A-Z]\w*Warning\b|\bWarning:/.test(out);
    if (noisy && !demo) r.noisy_outputs.push(text(cell));
    const repr = out.match(/<(function|bound method|built-in function|lambda)\b[^>]*>|\bobject at 0x[0-9a-f]+/);
    if (repr) r.reprs.push(repr[0]);
    const path = out.match(new RegExp(root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') +
      '|[\\w/.-]*(site|dist)-packages/|ipykernel_\\d+/'));
    if (path) r.paths.push(path[0]);
  }

  r.page_overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  r.tables = [...article.querySelectorAll('table')].map(t => {
    const box = scrollBox(t);
    const frame = (box || t.parentElement).getBoundingClientRect();
    const cells = t.rows.length ? [...t.rows[0].cells] : [];
    return {
      head: cells.map(c => c.textContent.trim()),
      hidden: cells.filter(c => c.getBoundingClientRect().right > frame.right + 1)
        .map(c => c.textContent.trim()),
      scrolls: !!box, in_output: !!t.closest('.cell_output')};
  });
  r.cut_off = [];
  for (const e of article.querySelectorAll('pre, mjx-container[display="true"]')) {
    const inner = e.tagName === 'PRE' ? e.scrollWidth : (e.querySelector('svg') ||
      e).getBoundingClientRect().width;
    if (inner > e.clientWidth + 1 && !scrolls(e) && !scrollBox(e)) r.cut_off.push(text(e));
  }

  r.players = [...article.querySelectorAll('.taotp-player')].map(p => ({
    id: p.id,
    note: !!(p.previousElementSibling &&
             p.previousElementSibling.classList.contains('taotp-player-note')),
    frames: +p.querySelector('input[type=range]').max + 1}));
  r.colab = [...document.querySelectorAll('a[href*="colab.research.google.com"]')]
    .map(a => ({href: a.href, in_article: !!a.closest('.bd-article'),
                exercises: a.classList.contains('taotp-colab-link'),
                image: (a.querySelector('img') || {}).src || null}));
  r.github = [...document.querySelectorAll('a[href^="https://github.com/"]')].map(a => a.href);
  done(r);
})().catch(err => done({failed: String(err)}));
'''

STEP = r'''
const [id, how, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const player = document.getElementById(id);
const img = player.querySelector('img'), range = player.querySelector('input[type=range]');
const before = {src: img.src, label: player.querySelector('.taotp-label').textContent};
if (how === 'click') {
  player.querySelector('[data-step="1"]').click();
} else {
  range.value = range.value === range.max ? range.min : range.max;   // drag to the far end
  range.dispatchEvent(new Event('input'));
}
img.decode().catch(() => null).then(() => done({
  changed: img.src !== before.src,
  label_changed: player.querySelector('.taotp-label').textContent !== before.label,
  decoded: img.complete && img.naturalWidth > 0}));
'''


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    """The HTML book: ``TAOTP_BOOK_HTML`` (a built folder), a fresh ``_build/html``, or a build."""
    given = os.environ.get('TAOTP_BOOK_HTML')
    if given:
        return Path(given)
    return fresh_build() or build_book(tmp_path_factory.mktemp('book'))


@pytest.fixture(scope='module')
def browser():
    session = start_chromium(1280, 900)
    yield session
    session.quit()
    shutil.rmtree(session.profile_dir, ignore_errors=True)


@pytest.fixture(scope='module')
def visits(site, browser):
    """Each page visited once (on first use): what the checks read."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen = {}

    def visit(page):
        if page not in seen:
            browser.get_log('browser')                       # drop the previous page's log
            browser.get((site / 'book' / f'{page}.html').as_uri())
            found = browser.execute_async_script(INSPECT, str(ROOT))
            assert 'failed' not in found, found
            found['console'] = [e['message'] for e in browser.get_log('browser')
                                if e['level'] == 'SEVERE']
            browser.execute_script('window.scrollTo(0, 0)')
            browser.save_screenshot(str(SHOTS / f'{page}.png'))
            found['steps'] = []
            for i, player in enumerate(found['players']):
                element = browser.find_element('id', player['id'])
                browser.execute_script('arguments[0].scrollIntoView({block: "center"})', element)
                clicked = browser.execute_async_script(STEP, player['id'], 'click')
                dragged = browser.execute_async_script(STEP, player['id'], 'drag')
                found['steps'].append((player['id'], clicked, dragged))
                if i == 0:
                    element.screenshot(str(SHOTS / f'{page}-player.png'))
            if page in KEY_TABLES:
                for table in browser.find_elements('css selector', '.bd-article .cell_output table'):
                    browser.execute_script('arguments[0].scrollIntoView()', table)
                    table.screenshot(str(SHOTS / f'{page}-table.png'))
            seen[page] = found
        return seen[page]
    return visit


@pytest.mark.parametrize('page', PAGES)
def test_page_loads_cleanly_and_offline(visits, page):
    found = visits(page)
    assert not found['console'], f'console errors: {found["console"]}'
    assert not found['remote'], f'fetched from the network: {found["remote"]}'
    assert not found['duplicate_scripts'], f'scripts included twice: {found["duplicate_scripts"]}'
    assert found['search_fields'] == 1, f'{found["search_fields"]} visible search fields'
    assert not found['widget_snapshots'], 'a static widget snapshot (blank or frozen without a kernel)'


@pytest.mark.parametrize('page', PAGES)
def test_every_image_decodes(visits, page):
    assert not visits(page)['images'], f'images that did not decode: {visits(page)["images"]}'


@pytest.mark.parametrize('page', PAGES)
def test_math_is_typeset(visits, page):
    found = visits(page)
    assert not found['math_errors'], f'MathJax errors: {found["math_errors"]}'
    assert not found['untypeset'], f'formulas left as TeX: {found["untypeset"][:5]}'
    assert not found['raw_tex'], f'raw $ or \\( in the text: {found["raw_tex"][:5]}'


@pytest.mark.parametrize('page', PAGES)
def test_outputs_show_no_tracebacks_warnings_reprs_or_paths(visits, page):
    found = visits(page)
    assert not found['noisy_outputs'], \
        f'a traceback or warning outside a raises-exception cell: {found["noisy_outputs"][:3]}'
    assert not found['reprs'], f'function or object reprs in outputs: {found["reprs"]}'
    assert not found['paths'], f'machine paths in outputs: {found["paths"]}'


def test_error_demos_are_shown(visits):
    """The tagged error cells (Chapter 1) do show their tracebacks."""
    assert visits('01_transformer')['error_demos'] >= 1


@pytest.mark.parametrize('page', PAGES)
def test_wide_content_is_reachable_at_1280px(visits, page):
    found = visits(page)
    assert found['page_overflow'] <= 0, f'the page scrolls sideways by {found["page_overflow"]} px'
    assert not found['cut_off'], f'code or equations cut off (no scrolling): {found["cut_off"][:3]}'
    for table in found['tables']:
        assert table['scrolls'] or not table['hidden'], \
            f'table {table["head"]}: columns {table["hidden"]} are cut off and cannot be scrolled to'


@pytest.mark.parametrize('page', sorted(KEY_TABLES))
def test_key_tables_show_every_column_at_1280px(visits, page):
    tables = [t for t in visits(page)['tables'] if t['in_output']]
    assert [t['head'] for t in tables] == [KEY_TABLES[page]]
    assert not tables[0]['hidden'], f'hidden columns at 1280 px: {tables[0]["hidden"]}'


@pytest.mark.parametrize('page', PAGES)
def test_each_player_is_labelled_and_steps(visits, page):
    found = visits(page)
    for player, (_, clicked, dragged) in zip(found['players'], found['steps']):
        assert player['note'], f'{player["id"]} has no note saying the live widget needs a kernel'
        assert player['frames'] >= 2, f'{player["id"]} has {player["frames"]} frame(s)'
        assert clicked['changed'] and clicked['label_changed'] and clicked['decoded'], \
            f'{player["id"]}: the next-frame button did not show a new frame: {clicked}'
        assert dragged['changed'] and dragged['decoded'], \
            f'{player["id"]}: dragging the slider to its far end did not change the frame: {dragged}'


def test_the_book_has_players(visits):
    assert sum(len(visits(p)['players']) for p in NOTEBOOKS) >= 9


@pytest.mark.parametrize('page', NOTEBOOKS)
def test_colab_links_open_this_notebook_in_the_configured_repository(visits, page):
    url, branch = colab_links().repository()
    github = url.split('github.com/', 1)[1]
    colab = f'https://colab.research.google.com/github/{github}/blob/{branch}/'
    found = visits(page)
    own = [c for c in found['colab'] if not c['exercises']]
    assert {c['href'] for c in own} == {f'{colab}book/{page}.ipynb'}, own
    badges = [c for c in own if c['in_article']]
    assert len(badges) == 1 and badges[0]['image'].endswith('/_static/colab-badge.svg'), badges
    assert any(not c['in_article'] for c in own), 'no Colab launch button'
    for link in (c['href'] for c in found['colab'] if c['exercises']):
        assert re.fullmatch(re.escape(colab) + r'(exercises|solutions)/\w+\.ipynb', link), link
    assert url in found['github'] or url + '/' in found['github'], 'no repository button'
    for link in found['github']:
        if '/blob/' in link and re.search(r'/(book|exercises|solutions)/\w+\.ipynb$', link):
            assert link.startswith(f'{url}/blob/{branch}/'), f'{link} is not in {url}'


WITHOUT_PUZZLES = {'11_trained'}     # its training puzzles live in chapters 2, 3, 5 and 7


def test_every_chapter_but_the_listed_ones_has_exercises():
    chapters = {p for p in NOTEBOOKS if p[:2].isdigit()}
    assert {p for p in chapters if not (ROOT / 'exercises' / f'{p}.ipynb').exists()} == \
        WITHOUT_PUZZLES


@pytest.mark.parametrize('page', [p for p in NOTEBOOKS
                                  if p[:2].isdigit() and p not in WITHOUT_PUZZLES])
def test_chapters_link_their_exercises_in_colab(visits, page):
    links = [c['href'] for c in visits(page)['colab'] if c['exercises']]
    assert any(link.endswith(f'exercises/{page}.ipynb') for link in links), links


def test_root_page_redirects_to_the_introduction(site):
    assert 'book/intro.html' in (site / 'index.html').read_text()
