"""Every page of the built book in a real browser (headless Chromium), served over HTTP.

The book is built with the README's command into a scratch folder (``_build/html`` is
reused when it is newer than every book source; ``TAOTP_BOOK_HTML`` names another built
folder) and served from a local HTTP server, as a reader's server would serve it (a
missing file is a 404 in the console).  Each page of the table of contents (the
chapters, their puzzle pages from ``exercises/``, the appendix) is loaded once at
1280 x 900 and once on a 390 px phone; the checks below read what those visits found:

* the page loads with no console error, no 404 and nothing fetched from the network,
  and has the book's favicon;
* every ``<img>`` decodes; MathJax typesets every formula, with no error and no raw
  ``$`` or ``\\(`` left in the text;
* no output shows a traceback, a warning, a function repr or a machine path, except
  the tracebacks of cells tagged ``raises-exception`` (with package-relative paths);
* at 1280 px no output block (printed text, traceback, table, figure, player) is wider
  than the text column: the test lists every offender with its page and width; the
  index of programs and Chapter 12's records show every column, and any other wide
  table, code block or display equation scrolls inside its own box;
* on a 390 px phone no page is wider than the screen (offenders listed);
* each kernel-free player says what it is, steps to a different frame, and its
  smallest text is at least 10 px high at 1280 px;
* every chapter with puzzles links its puzzle page (which is a page of the book) and
  Colab; the solutions are not pages of the book;
* the Colab launch button and badge open the notebook in the configured repository;
* one search field, and no script included twice.

Screenshots go to ``_build/e2e/screenshots`` (the top of each page, the index table,
each page's first player after a step, and the outputs in ``SHOT_OUTPUTS``: Chapter
12's records table, Chapter 2's ``harden`` sweep, Chapter 4's generated passage);
``_build/e2e/overflow.json`` lists the offenders of both widths.
"""
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from e2e_helpers import (ARTEFACTS, ROOT, BookServer, build_book, colab_links, fresh_build,
                         start_chromium)
from taotp.chapters import CHAPTERS

pytestmark = pytest.mark.e2e

TOC = (ROOT / '_toc.yml').read_text()
# every page, named by its path without suffix: 'book/05_sort', 'exercises/05_sort', ...
PAGES = re.findall(r'(?:root|file):\s*((?:book|exercises)/\S+)', TOC)
NOTEBOOKS = [p for p in PAGES if (ROOT / f'{p}.ipynb').exists()]
CHAPTER_PAGES = [p for p in NOTEBOOKS if re.fullmatch(r'book/\d\d_\w+', p)]
EXERCISE_PAGES = [p for p in PAGES if p.startswith('exercises/')]
KEY_TABLES = {'book/programs': ['ch', 'program', 'L', 'H', 'd', 'MLP', 'total', 'source',
                                'non-zero', 'source'],
              'book/12_records': ['record', 'anchor: who, and how it counts', 'anchor',
                                  'ours: total / non-0', 'L·H·d', 'verified here']}
# outputs whose screenshot shows that every line and column is there: (page, file name,
# a piece of their text)
SHOT_OUTPUTS = [('book/12_records', 'records-table', 'anchor: who, and how it counts'),
                ('book/02_hello_world', 'hello-world-harden-sweep', 'ascii tokenizer'),
                ('book/04_search', 'search-generated-text', 'too rude too boisterous')]
SHOTS = ARTEFACTS / 'screenshots'
PHONE = (390, 844)
MIN_PLAYER_TEXT_PX = 10

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
    .filter(u => /^https?:/.test(u) && new URL(u).origin !== location.origin);
  const icon = document.querySelector('link[rel~="icon"]');
  r.favicon = icon ? icon.href : null;
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
  // every output block (printed text, traceback, table, figure, player) against the
  // text column it sits in; a box that scrolls its content sideways counts as too wide
  r.output_overflow = [];
  const cells = [...article.querySelectorAll('div.cell')];
  for (const output of article.querySelectorAll('.cell_output')) {
    const column = output.getBoundingClientRect();
    const cell = cells.indexOf(output.closest('div.cell'));
    for (const e of output.querySelectorAll('pre, table, img, .taotp-player, .output > div')) {
      const box = e.getBoundingClientRect();
      const width = Math.max(box.width, e.scrollWidth);
      const wider = box.right > column.right + 1 || e.scrollWidth > e.clientWidth + 1;
      if (wider) r.output_overflow.push({cell: cell, tag: e.tagName.toLowerCase(),
        width: Math.round(width), column: Math.round(column.width), text: text(e).slice(0, 80)});
    }
  }
  r.cut_off = [];
  for (const e of article.querySelectorAll('pre, mjx-container[display="true"]')) {
    const inner = e.tagName === 'PRE' ? e.scrollWidth : (e.querySelector('svg') ||
      e).getBoundingClientRect().width;
    if (inner > e.clientWidth + 1 && !scrolls(e) && !scrollBox(e)) r.cut_off.push(text(e));
  }

  r.players = [...article.querySelectorAll('.taotp-player')].map(p => {
    const img = p.querySelector('img');
    const inches = +p.dataset.widthIn, points = +p.dataset.textPt;
    return {
      id: p.id,
      note: !!(p.previousElementSibling &&
               p.previousElementSibling.classList.contains('taotp-player-note')),
      frames: +p.querySelector('input[type=range]').max + 1,
      width: Math.round(img.getBoundingClientRect().width),
      // the smallest text of its figures, in CSS px as shown (points / 72 inches)
      text_px: inches && points ? points / 72 * img.getBoundingClientRect().width / inches
                                : null};
  });
  r.links = [...article.querySelectorAll('a[href]')].map(a => a.href);
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
def server(site):
    served = BookServer(site)
    yield served
    served.close()


def _chromium(width, height, phone=False):
    session = start_chromium(width, height, phone=phone)
    yield session
    session.quit()
    shutil.rmtree(session.profile_dir, ignore_errors=True)


@pytest.fixture(scope='module')
def browser():
    yield from _chromium(1280, 900)


@pytest.fixture(scope='module')
def phone():
    yield from _chromium(*PHONE, phone=True)


def _wait_for_article(session, url, seconds=30):
    """Until ``url`` is the loaded document and its article is there (``get`` can return
    while the previous page is still being left)."""
    deadline = time.time() + seconds
    while not session.execute_script(
            'return location.href === arguments[0] && document.readyState === "complete" '
            '&& !!document.querySelector(".bd-article")', url):
        assert time.time() < deadline, f'{url} did not load'
        time.sleep(0.1)


def _shoot(session, element, path):
    """A screenshot of the whole ``element``: the window grows to hold it, then shrinks back
    (a screenshot cannot see below the window)."""
    size = session.get_window_size()
    height = session.execute_script('return arguments[0].getBoundingClientRect().height', element)
    if height + 100 > size['height']:
        session.set_window_size(size['width'], int(height) + 200)
    session.execute_script('arguments[0].scrollIntoView()', element)
    element.screenshot(str(path))
    session.set_window_size(size['width'], size['height'])


def _shot_name(page):
    return page.replace('/', '-')


OUTPUT_WITH = r'''
const piece = arguments[0];
return [...document.querySelectorAll('.bd-article .cell_output')].find(
  o => o.textContent.includes(piece)) || null;
'''


@pytest.fixture(scope='module')
def visits(server, browser):
    """Each page visited once at 1280 px (on first use): what the checks read."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen = {}

    def visit(page):
        if page not in seen:
            browser.get_log('browser')                       # drop the previous page's log
            del server.missing[:]
            browser.get(f'{server.url}/{page}.html')
            _wait_for_article(browser, f'{server.url}/{page}.html')
            found = browser.execute_async_script(INSPECT, str(ROOT))
            assert 'failed' not in found, found
            found['console'] = [e['message'] for e in browser.get_log('browser')
                                if e['level'] == 'SEVERE']
            found['missing'] = list(server.missing)
            browser.execute_script('window.scrollTo(0, 0)')
            browser.save_screenshot(str(SHOTS / f'{_shot_name(page)}.png'))
            found['steps'] = []
            for i, player in enumerate(found['players']):
                element = browser.find_element('id', player['id'])
                browser.execute_script('arguments[0].scrollIntoView({block: "center"})', element)
                clicked = browser.execute_async_script(STEP, player['id'], 'click')
                dragged = browser.execute_async_script(STEP, player['id'], 'drag')
                found['steps'].append((player['id'], clicked, dragged))
                if i == 0:
                    element.screenshot(str(SHOTS / f'{_shot_name(page)}-player.png'))
            if page == 'book/programs':
                for table in browser.find_elements('css selector', '.bd-article .cell_output table'):
                    _shoot(browser, table, SHOTS / 'programs-table.png')
            found['shots'] = {}
            for shot_page, name, piece in SHOT_OUTPUTS:
                if shot_page == page:
                    output = browser.execute_script(OUTPUT_WITH, piece)
                    if output is not None:
                        _shoot(browser, output, SHOTS / f'{name}.png')
                    found['shots'][name] = output is not None
            seen[page] = found
        return seen[page]
    return visit


PAGE_WIDTH = r'''
const root = document.documentElement, vw = root.clientWidth;
// what sticks out past the screen's right edge and is not inside a box that clips it
const clipped = e => {
  for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
    if (getComputedStyle(p).overflowX !== 'visible') return p.getBoundingClientRect().right <= vw + 1;
  }
  return false;
};
const wide = [];
for (const e of document.querySelectorAll('.bd-article *')) {
  if (e.getBoundingClientRect().right > vw + 1 && !clipped(e)) {
    wide.push(e.tagName.toLowerCase() + ': ' + (e.textContent || '').trim().slice(0, 80));
  }
}
return {width: root.scrollWidth, viewport: vw, wide: wide.slice(0, 5)};
'''


@pytest.fixture(scope='module')
def phone_visits(server, phone):
    """Each page's width on a 390 px phone (on first use)."""
    seen = {}

    def visit(page):
        if page not in seen:
            phone.get(f'{server.url}/{page}.html')
            _wait_for_article(phone, f'{server.url}/{page}.html')
            seen[page] = phone.execute_script(PAGE_WIDTH)
        return seen[page]
    return visit


@pytest.mark.parametrize('page', PAGES)
def test_page_loads_cleanly_and_offline(visits, page):
    found = visits(page)
    assert not found['console'], f'console errors: {found["console"]}'
    assert not found['missing'], f'files the page asked for and the book lacks: {found["missing"]}'
    assert found['favicon'] and found['favicon'].endswith('favicon.svg'), \
        f'no favicon of the book: {found["favicon"]}'
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
    assert visits('book/01_transformer')['error_demos'] >= 1


@pytest.mark.parametrize('page', PAGES)
def test_wide_content_is_reachable_at_1280px(visits, page):
    found = visits(page)
    assert found['page_overflow'] <= 0, f'the page scrolls sideways by {found["page_overflow"]} px'
    assert not found['cut_off'], f'code or equations cut off (no scrolling): {found["cut_off"][:3]}'
    for table in found['tables']:
        assert table['scrolls'] or not table['hidden'], \
            f'table {table["head"]}: columns {table["hidden"]} are cut off and cannot be scrolled to'


def _offenders(found):
    return [f'cell {o["cell"]}: {o["tag"]} {o["width"]} px in a {o["column"]} px column: '
            f'{o["text"]!r}' for o in found['output_overflow']]


@pytest.mark.parametrize('page', PAGES)
def test_no_output_is_wider_than_the_text_column_at_1280px(visits, page):
    """Printed text and tracebacks wrap, tables and figures fit: nothing hides off the edge."""
    offenders = _offenders(visits(page))
    assert not offenders, f'{len(offenders)} output block(s) wider than the column:\n' + \
        '\n'.join(offenders)


@pytest.mark.parametrize('page', PAGES)
def test_no_page_is_wider_than_a_phone(phone_visits, page):
    found = phone_visits(page)
    assert found['width'] <= found['viewport'], \
        f'{found["width"]} px wide on a {found["viewport"]} px phone, because of {found["wide"]}'


def test_summary_of_widths_is_written(visits, phone_visits):
    """Every page at both widths; the offenders go to ``_build/e2e/overflow.json``."""
    summary = {'outputs_wider_than_the_column_at_1280px': {},
               'pages_wider_than_a_390px_phone': {}}
    for page in PAGES:
        if _offenders(visits(page)):
            summary['outputs_wider_than_the_column_at_1280px'][page] = _offenders(visits(page))
        found = phone_visits(page)
        if found['width'] > found['viewport']:
            summary['pages_wider_than_a_390px_phone'][page] = found
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    (ARTEFACTS / 'overflow.json').write_text(json.dumps(summary, indent=1))
    counts = {k: sum(map(len, v.values())) if 'outputs' in k else len(v)
              for k, v in summary.items()}
    assert not any(counts.values()), f'{counts}; see {ARTEFACTS / "overflow.json"}'


@pytest.mark.parametrize('page', sorted(KEY_TABLES))
def test_key_tables_show_every_column_at_1280px(visits, page):
    tables = [t for t in visits(page)['tables'] if t['in_output'] and t['head'] == KEY_TABLES[page]]
    assert len(tables) == 1, [t['head'] for t in visits(page)['tables']]
    assert not tables[0]['hidden'], f'hidden columns at 1280 px: {tables[0]["hidden"]}'


@pytest.mark.parametrize('page, name, piece', SHOT_OUTPUTS)
def test_named_outputs_are_screenshot_whole(visits, page, name, piece):
    """Chapter 12's table, Chapter 2's sweep, Chapter 4's passage: shot, and none too wide."""
    found = visits(page)
    assert found['shots'].get(name), f'no output of {page} holds {piece!r}'
    assert (SHOTS / f'{name}.png').exists()
    assert not [o for o in found['output_overflow'] if piece in o['text']], _offenders(found)


@pytest.mark.parametrize('page', PAGES)
def test_each_player_is_labelled_and_steps(visits, page):
    found = visits(page)
    for player, (_, clicked, dragged) in zip(found['players'], found['steps']):
        assert player['note'], f'{player["id"]} has no note saying the live widget needs a kernel'
        assert player['frames'] >= 2, f'{player["id"]} has {player["frames"]} frame(s)'
        assert player['text_px'] and player['text_px'] >= MIN_PLAYER_TEXT_PX, \
            (f'{player["id"]}: its smallest text is {player["text_px"]} px at 1280 px '
             f'(shown {player["width"]} px wide)')
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
    assert {c['href'] for c in own} == {f'{colab}{page}.ipynb'}, own
    badges = [c for c in own if c['in_article']]
    assert len(badges) == 1 and badges[0]['image'].endswith('/_static/colab-badge.svg'), badges
    assert any(not c['in_article'] for c in own), 'no Colab launch button'
    for link in (c['href'] for c in found['colab'] if c['exercises']):
        assert re.fullmatch(re.escape(colab) + r'(exercises|solutions)/\w+\.ipynb', link), link
    assert url in found['github'] or url + '/' in found['github'], 'no repository button'
    for link in found['github']:
        if '/blob/' in link and re.search(r'/(book|exercises|solutions)/\w+\.ipynb$', link):
            assert link.startswith(f'{url}/blob/{branch}/'), f'{link} is not in {url}'


WITHOUT_PUZZLES = {c.stem for c in CHAPTERS if not c.has_puzzles}   # each with its reason
WITH_PUZZLES = [p for p in CHAPTER_PAGES if p.split('/')[1] not in WITHOUT_PUZZLES]


def test_every_chapter_but_the_listed_ones_has_exercises():
    stems = {p.split('/')[1] for p in CHAPTER_PAGES}
    assert {s for s in stems if not (ROOT / 'exercises' / f'{s}.ipynb').exists()} == \
        WITHOUT_PUZZLES


def test_every_exercises_notebook_is_a_page_and_no_solution_is(site):
    notebooks = sorted(f'exercises/{p.stem}' for p in (ROOT / 'exercises').glob('*.ipynb'))
    assert sorted(EXERCISE_PAGES) == notebooks, 'exercises notebooks missing from _toc.yml'
    assert all((site / f'{p}.html').exists() for p in notebooks)
    assert not (site / 'solutions').exists(), 'the solutions are pages of the HTML book'


@pytest.mark.parametrize('page', WITH_PUZZLES)
def test_chapters_link_their_exercises_in_colab(visits, page):
    links = [c['href'] for c in visits(page)['colab'] if c['exercises']]
    assert any(link.endswith(f'exercises/{page.split("/")[1]}.ipynb') for link in links), links


@pytest.mark.parametrize('page', WITH_PUZZLES)
def test_chapters_link_their_puzzle_page(visits, server, page):
    own = f'{server.url}/exercises/{page.split("/")[1]}.html'
    assert any(link.split('#')[0] == own for link in visits(page)['links']), \
        f'{page} does not link its puzzle page {own}'


def test_root_page_redirects_to_the_introduction(site):
    assert 'book/intro.html' in (site / 'index.html').read_text()
