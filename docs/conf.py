"""Sphinx configuration for the segkit documentation.

Build with ``sphinx-build -W -b html docs docs/_build/html`` from the
repository root.  Only Sphinx built-ins are used and nothing needs the
network.
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst.directives.images import Figure

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# Autodoc imports segkit from the source tree, not from an installed copy.
sys.path.insert(0, str(ROOT))

import segkit  # noqa: E402

project = "segkit"
author = "segkit developers"
copyright = "segkit developers"
release = segkit.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

root_doc = "index"
exclude_patterns = ["_build"]
templates_path: list[str] = []
html_static_path = ["_static"]
html_theme = "alabaster"
html_title = f"segkit {release}"
html_css_files = ["segkit.css"]
# The optional extras (pyarrow, dask, pyspark, ...) are not needed to build the
# documentation: autodoc sees stand-ins for them (the docs build is
# ``pip install ".[docs]" && sphinx-build ...`` in a fresh environment).
autodoc_mock_imports = ["pyarrow", "pandas", "dask", "distributed", "pyspark", "datasets", "torch", "transformers"]

# NumPy-style docstrings only.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

autodoc_member_order = "bysource"
autodoc_typehints = "signature"

# Literal text in this documentation is code, not a cross-reference.
default_role = "literal"


class OptionalFigure(Figure):
    """``.. optional-figure:: path``: a figure shown only when the image exists.

    Some images (the scaling plot) are written by a benchmark script and are
    not part of the source tree.  When the file is missing, the directive
    renders the body of its ``:missing:`` option as a paragraph instead, so
    the build never warns about a missing image.
    """

    option_spec = dict(Figure.option_spec, missing=lambda text: text or "")

    def run(self):
        env = self.state.document.settings.env
        missing = self.options.pop("missing", "")
        _rel, abspath = env.relfn2path(self.arguments[0], env.docname)
        if Path(abspath).is_file():
            return super().run()
        if not missing:
            return []
        para = nodes.paragraph()
        text_nodes, messages = self.state.inline_text(missing, self.lineno)
        para += text_nodes
        return [para, *messages]


def _always_reread(app, env, added, changed, removed):
    # Pages with an optional figure depend on a file that appears and
    # disappears outside Sphinx's knowledge: read them on every build.
    return [name for name in ("performance",) if name in env.found_docs]


def setup(app):
    app.add_directive("optional-figure", OptionalFigure)
    app.connect("env-get-outdated", _always_reread)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
