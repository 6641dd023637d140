"""Small fixes to the HTML book, loaded by ``_config.yml`` (``sphinx.local_extensions``).

* Each inline ``<script>`` is written once.  Sphinx 7.4 registers a script that
  an extension adds after the builder starts twice (once with the file name
  ``None``, once with ``''``), so sphinx-thebe's ``const THEBE_JS_URL`` was
  declared twice on every page (``SyntaxError`` in the console).
* The Colab badge of each notebook (``colab_links.py`` writes it with Colab's
  own badge image, which GitHub and Colab show) points at a copy that ships
  with the book, ``_vendor/colab-badge.svg``, so pages load no remote image.
* A link to an exercises or solutions notebook on GitHub is followed by
  "(open in Colab)", the same notebook ready to run; a link to a notebook that
  is a page of the book (the exercises are) leads to that page instead of GitHub.
"""
import re

from sphinx.util.osutil import relative_uri

COLAB_BADGE = 'https://colab.research.google.com/assets/colab-badge.svg'
LOCAL_BADGE = '_static/colab-badge.svg'


def _key(script):
    filename = getattr(script, 'filename', script)
    attributes = getattr(script, 'attributes', {})
    return (filename or '', tuple(sorted(attributes.items())))


def unique_scripts(app, pagename, templatename, context, doctree):
    scripts, seen = [], set()
    for script in context.get('script_files', []):
        key = _key(script)
        if key not in seen:
            seen.add(key)
            scripts.append(script)
    context['script_files'] = scripts


def local_colab_badge(app, doctree, docname):
    from docutils import nodes
    if app.builder.format != 'html':
        return
    target = relative_uri(app.builder.get_target_uri(docname), LOCAL_BADGE)
    for image in doctree.findall(nodes.image):
        if image.get('uri') == COLAB_BADGE:
            image['uri'] = target
            image['candidates'] = {'*': target}


GITHUB_NOTEBOOK = re.compile(r'^https://github\.com/([\w.-]+/[\w.-]+)/blob/([\w.-]+)/'
                             r'((?:exercises|solutions)/[\w.-]+\.ipynb)$')


def colab_next_to_exercises(app, doctree, docname):
    from docutils import nodes
    for ref in list(doctree.findall(nodes.reference)):
        match = GITHUB_NOTEBOOK.match(ref.get('refuri', ''))
        if not match or 'taotp-colab-link' in ref.get('classes', []):
            continue
        page = match.group(3)[:-len('.ipynb')]
        if app.builder.format == 'html' and page in app.env.all_docs:
            ref['refuri'] = app.builder.get_relative_uri(docname, page)
            ref['internal'] = True
            ref['classes'] = [c for c in ref.get('classes', []) if c != 'external'] + ['internal']
        siblings = ref.parent.children
        following = siblings[siblings.index(ref) + 1:siblings.index(ref) + 3]
        if any('colab.research.google.com' in n.get('refuri', '') for n in following
               if isinstance(n, nodes.reference)):
            continue                                  # the text links Colab itself
        colab = 'https://colab.research.google.com/github/{}/blob/{}/{}'.format(*match.groups())
        link = nodes.reference('', 'open in Colab', refuri=colab, internal=False,
                               classes=['taotp-colab-link'])
        ref.parent.insert(siblings.index(ref) + 1,
                          [nodes.Text(' ('), link, nodes.Text(')')])


def setup(app):
    app.connect('html-page-context', unique_scripts)
    app.connect('doctree-resolved', local_colab_badge)
    app.connect('doctree-resolved', colab_next_to_exercises)
    return {'parallel_read_safe': True, 'parallel_write_safe': True, 'version': '1'}
