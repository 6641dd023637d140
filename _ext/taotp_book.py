"""Small fixes to the HTML book, loaded by ``_config.yml`` (``sphinx.local_extensions``).

* Each inline ``<script>`` is written once.  Sphinx 7.4 registers a script that
  an extension adds after the builder starts twice (once with the file name
  ``None``, once with ``''``), so sphinx-thebe's ``const THEBE_JS_URL`` was
  declared twice on every page (``SyntaxError`` in the console).
* The Colab badge of each notebook (``colab_links.py`` writes it with Colab's
  own badge image, which GitHub and Colab show) points at a copy that ships
  with the book, ``_vendor/colab-badge.svg``, so pages load no remote image.
"""
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


def setup(app):
    app.connect('html-page-context', unique_scripts)
    app.connect('doctree-resolved', local_colab_badge)
    return {'parallel_read_safe': True, 'parallel_write_safe': True, 'version': '1'}
