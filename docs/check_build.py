"""Check a built skcalib documentation site: gallery figures present, nothing loaded from the network.

Usage::

    python docs/check_build.py docs/_build/html

``make docs`` runs it after Sphinx. It exits with status 1 and names every problem unless

1. **the gallery has its figures**: the example pages of the gallery (``auto_examples/*.html``
   other than its index) exist and reference PNG images (``<img src="...png">``), more than zero
   in all, and every referenced image file exists in the build;
2. **nothing is fetched from the network**: no page loads a script, a stylesheet, a font, an
   image or a frame from an absolute URL (``http://``, ``https://`` or ``//host``): ``<script
   src>``, ``<link rel="stylesheet|preload|preconnect|icon|..." href>``, ``<img src>``,
   ``<iframe src>``, ...; no stylesheet (``.css`` files and ``<style>`` blocks) imports a URL or
   uses one in ``url(...)`` (web fonts from a CDN); and every local script, stylesheet and image
   a page references exists;
3. **MathJax is served by the site**: at least one page loads MathJax, every page that loads it
   loads it from a local path (``_static/mathjax/...``), and that file exists.

Links (``<a href="https://...">``) are not loads and are allowed.

4. **nothing is cut off at the right edge** (the layout, estimated from the HTML and the site's
   stylesheets for a 1280 px wide window, the narrowest desktop layout): no line of a code block
   (``<pre>``) is longer than its block shows, unless the site's stylesheet wraps code blocks
   (``white-space: pre-wrap`` on ``pre``); and no table needs more width than the content area
   -- its minimum width being the sum over columns of the widest word that cannot be broken, with
   inline code breakable only if the stylesheet says so (``overflow-wrap: anywhere`` on code in
   tables). The content area depends on the page's sidebars (``html_sidebars`` and the theme's
   ``secondary_sidebar_items`` in ``conf.py``). The widths below were measured in headless
   Chromium with the pydata theme (``LAYOUT_PX``, ``MONO_CHAR_PX``, ...).

The headless-browser check
--------------------------

This script reads the HTML; whether the pages *look* right -- figures shown, formulas typeset
by MathJax without a network -- is checked once in a real browser by ``docs/screenshots.py``
(see ``docs/README.md``): it serves the built site on 127.0.0.1, opens the landing page, a
gallery page and a math-heavy page in headless Chromium with every non-local request blocked,
waits for MathJax, asserts that ``mjx-container`` elements were rendered and that no raw
``\\(`` or ``$$`` remains, and saves screenshots into ``docs/_screenshots/``.
"""

import argparse
import os
import re
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

__all__ = ["find_problems", "layout_problems", "table_min_width", "wraps_code_blocks",
           "breaks_code_in_tables", "main"]

#: ``<link rel=...>`` values that make the browser fetch the ``href``.
FETCHING_RELS = {
    "stylesheet", "preload", "modulepreload", "prefetch", "preconnect", "dns-prefetch", "icon",
    "shortcut", "apple-touch-icon", "manifest", "mask-icon",
}
#: Elements whose ``src`` the browser loads.
SRC_TAGS = {"script", "img", "iframe", "frame", "embed", "source", "video", "audio", "track",
            "input"}

#: Width in px of the article (content area) at a 1280 px wide window, by the sidebars shown:
#: both (the default), or at most one (the pages listed in ``html_sidebars`` with ``[]`` or
#: without an "On this page" sidebar); measured in headless Chromium, pydata theme 0.16-0.24.
LAYOUT_PX = {"both sidebars": 656, "at most one sidebar": 928}
#: A code block is this much narrower than the article (margins), and pads its text by 16 px on
#: each side; its monospace font (14 px) is 8.43 px per character.
PRE_MARGIN_PX, PRE_PADDING_PX, MONO_CHAR_PX = 34, 16, 8.43
#: Table cells: 8 px padding each side; words of text at about 9 px (bold 9.5 px) per character
#: (16 px sans-serif; an estimate of the widest common words), inline code at 8.43 px.
CELL_PADDING_PX, TEXT_CHAR_PX, BOLD_CHAR_PX = 16, 9.0, 9.5

#: Sphinx's own index pages (tables of links laid out by Sphinx), left out of the layout check.
_GENERATED_INDEXES = ("genindex.html", "py-modindex.html", "search.html")

_CSS_REMOTE = re.compile(
    r"""(@import\s+(?:url\(\s*)?['"]?|url\(\s*['"]?)\s*((?:https?:)?//[^'")\s]+)""",
    re.IGNORECASE)


def _is_remote(url):
    """True for an absolute URL that needs the network (``http:``, ``https:``, ``//host``)."""
    url = url.strip()
    return url.lower().startswith(("http://", "https://", "//"))


def _is_mathjax(url):
    return "mathjax" in url.lower() and url.lower().split("?")[0].endswith(".js")


class _PageParser(HTMLParser):
    """Collects what a page loads: (kind, url) pairs and the text of its ``<style>`` blocks."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.loads = []  # (tag, url)
        self.styles = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {name: (value or "") for name, value in attrs}
        if tag in SRC_TAGS and attrs.get("src"):
            self.loads.append((tag, attrs["src"]))
        if tag == "img" and attrs.get("srcset"):
            for candidate in attrs["srcset"].split(","):
                if candidate.strip():
                    self.loads.append(("img", candidate.split()[0]))
        if tag == "link" and attrs.get("href"):
            rels = set(attrs.get("rel", "").lower().split())
            if rels & FETCHING_RELS:
                self.loads.append(("link", attrs["href"]))
        if tag == "style":
            self._in_style = True

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


class _LayoutParser(HTMLParser):
    """The sidebars of a page, the lines of its code blocks and the cells of its tables."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.primary_sidebar = False
        self.secondary_sidebar = False
        self.pres = []          # list of the text of each <pre>
        self.tables = []        # list of rows; a row is a list of cells; a cell a list of tokens
        self._pre = None
        self._table_depth = 0
        self._skip = False
        self._divs = []         # per open <div>: is it the output box of a gallery example?
        self._cell = None
        self._code = 0
        self._bold = 0

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if "bd-sidebar-primary" in classes and "hide-on-wide" not in classes:
            self.primary_sidebar = True
        if "bd-sidebar-secondary" in classes:
            self.secondary_sidebar = True
        if tag == "div":
            self._divs.append("output_subarea" in classes)
        if tag == "pre":
            self._pre = []
        elif tag == "table":
            self._table_depth += 1
            if self._table_depth == 1:
                # the HTML output of an example (a DataFrame, an estimator's repr) sits in
                # sphinx-gallery's own scroll box
                self._skip = "dataframe" in classes or any(self._divs)
                if not self._skip:
                    self.tables.append([])
        elif tag == "tr" and self._table_depth == 1 and not self._skip:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self._table_depth == 1 and not self._skip \
                and self.tables and self.tables[-1]:
            self._cell = []
            self.tables[-1][-1].append(self._cell)
            if tag == "th":
                self._bold += 1
        elif tag == "code":
            self._code += 1
        elif tag in ("strong", "b"):
            self._bold += 1

    def handle_endtag(self, tag):
        if tag == "div" and self._divs:
            self._divs.pop()
        if tag == "pre" and self._pre is not None:
            self.pres.append("".join(self._pre))
            self._pre = None
        elif tag == "table":
            self._table_depth = max(0, self._table_depth - 1)
        elif tag in ("td", "th") and self._table_depth == 1:
            self._cell = None
            if tag == "th":
                self._bold = max(0, self._bold - 1)
        elif tag == "code":
            self._code = max(0, self._code - 1)
        elif tag in ("strong", "b"):
            self._bold = max(0, self._bold - 1)

    def handle_data(self, data):
        if self._pre is not None:
            self._pre.append(data)
        elif self._cell is not None:
            kind = "code" if self._code else ("bold" if self._bold else "text")
            self._cell.extend((kind, word) for word in data.split())


def _site_css(build_dir):
    """The text of the site's own stylesheet (``_static/skcalib.css``), or ''."""
    path = os.path.join(build_dir, "_static", "skcalib.css")
    if not os.path.isfile(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)


def _css_rules(css):
    """``(selector, body)`` pairs of a stylesheet (outside @media blocks is enough here)."""
    return [(m.group(1).strip(), m.group(2)) for m in re.finditer(r"([^{}]+)\{([^{}]*)\}", css)]


def wraps_code_blocks(css):
    """True if the stylesheet wraps the lines of code blocks (``pre``) instead of cutting them."""
    return any(re.search(r"(^|[\s,>])pre\b", sel) and re.search(r"white-space\s*:\s*pre-wrap", body)
               for sel, body in _css_rules(css))


def breaks_code_in_tables(css):
    """True if the stylesheet lets inline code in table cells break anywhere."""
    return any("table" in sel and "code" in sel
               and re.search(r"overflow-wrap\s*:\s*anywhere", body)
               for sel, body in _css_rules(css))


def _content_px(layout):
    return LAYOUT_PX["both sidebars" if layout.primary_sidebar and layout.secondary_sidebar
                     else "at most one sidebar"]


def table_min_width(table, *, code_breaks):
    """Estimated minimum width in px of a parsed table: per column the widest unbreakable word
    plus the cells' padding, summed over the columns."""
    widths = {}
    for row in table:
        for j, cell in enumerate(row):
            widest = 0.0
            for kind, word in cell:
                if kind == "code":
                    w = (1 if code_breaks else len(word)) * MONO_CHAR_PX
                else:
                    w = len(word) * (BOLD_CHAR_PX if kind == "bold" else TEXT_CHAR_PX)
                widest = max(widest, w)
            widths[j] = max(widths.get(j, 0.0), widest + CELL_PADDING_PX)
    return sum(widths.values())


def layout_problems(rel_page, html, *, wrap_pre, code_breaks):
    """Code lines and tables of one page that would be cut off at a 1280 px wide window."""
    layout = _LayoutParser()
    layout.feed(html)
    content = _content_px(layout)
    problems = []
    shown = int((content - PRE_MARGIN_PX - 2 * PRE_PADDING_PX) // MONO_CHAR_PX)
    if not wrap_pre:
        cut = [max(len(line) for line in text.split("\n")) for text in layout.pres
               if text and max(len(line) for line in text.split("\n")) > shown]
        if cut:
            problems.append(f"{rel_page}: {len(cut)} of {len(layout.pres)} code blocks have lines "
                            f"longer than the {shown} characters their block shows at 1280 px "
                            f"(longest: {max(cut)}); they are cut off at the right edge (wrap "
                            "code blocks in docs/_static/skcalib.css, or give the page the "
                            "whole width in conf.py).")
    for k, table in enumerate(layout.tables, start=1):
        need = table_min_width(table, code_breaks=code_breaks)
        if need > content:
            head = " ".join(word for _, word in (table[0][0] if table and table[0] else []))
            problems.append(f"{rel_page}: table {k} ({head[:30]!r}) needs about {need:.0f} px, "
                            f"more than the {content} px of the content area at 1280 px: its "
                            "last columns hide behind a scroll bar (let code in cells break, or "
                            "give the page the whole width in conf.py).")
    return problems


def _local_target(build_dir, page, url):
    """File a page-relative URL points to, or None for data:/javascript:/anchors."""
    parts = urlsplit(url)
    if parts.scheme or not parts.path:
        return None
    path = unquote(parts.path)
    if path.startswith("/"):
        return os.path.normpath(os.path.join(build_dir, path.lstrip("/")))
    return os.path.normpath(os.path.join(os.path.dirname(page), path))


def _html_pages(build_dir):
    for root, dirs, files in os.walk(build_dir):
        rel = os.path.relpath(root, build_dir)
        if rel.split(os.sep)[0] in ("_static", "_sources", "_images", "_downloads"):
            dirs[:] = []
            continue
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".html"):
                yield os.path.join(root, name)


def _css_files(build_dir):
    for root, dirs, files in os.walk(build_dir):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".css"):
                yield os.path.join(root, name)


def find_problems(build_dir, *, gallery_dir="auto_examples"):
    """Problems of a built HTML site, as readable sentences (empty if it passes).

    Parameters
    ----------
    build_dir : str
        The HTML output folder of Sphinx (``docs/_build/html``).
    gallery_dir : str, default="auto_examples"
        The gallery's folder inside ``build_dir``.

    Returns
    -------
    list of str
        One sentence per problem, naming the page and the offending URL or file.
    """
    build_dir = os.path.abspath(build_dir)
    if not os.path.isdir(build_dir):
        return [f"{build_dir} is not a folder: build the documentation first (make docs)."]
    problems = []
    pages = list(_html_pages(build_dir))
    if not pages:
        return [f"{build_dir} contains no HTML page."]

    gallery_root = os.path.join(build_dir, gallery_dir)
    gallery_pages = [p for p in pages if os.path.dirname(p) == gallery_root
                     and os.path.basename(p) not in ("index.html", "sg_execution_times.html")]
    mathjax_pages = 0
    gallery_images = 0
    css = _site_css(build_dir)
    wrap_pre, code_breaks = wraps_code_blocks(css), breaks_code_in_tables(css)
    for page in pages:
        rel_page = os.path.relpath(page, build_dir)
        with open(page, encoding="utf-8", errors="replace") as f:
            html = f.read()
        parser = _PageParser()
        parser.feed(html)
        if os.path.basename(page) not in _GENERATED_INDEXES:
            problems.extend(layout_problems(rel_page, html, wrap_pre=wrap_pre,
                                            code_breaks=code_breaks))
        for tag, url in parser.loads:
            if _is_remote(url):
                problems.append(f"{rel_page}: <{tag}> loads {url} from the network.")
                continue
            if _is_mathjax(url):
                mathjax_pages += 1
            target = _local_target(build_dir, page, url)
            if target is None:
                continue
            if not os.path.isfile(target):
                problems.append(f"{rel_page}: <{tag}> references {url}, which is not in the "
                                "build.")
            elif page in gallery_pages and tag == "img" and target.lower().endswith(".png"):
                gallery_images += 1
        for style in parser.styles:
            for match in _CSS_REMOTE.finditer(style):
                problems.append(f"{rel_page}: a <style> block loads {match.group(2)} from the "
                                "network.")
    for css in _css_files(build_dir):
        with open(css, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in _CSS_REMOTE.finditer(text):
            problems.append(f"{os.path.relpath(css, build_dir)}: loads {match.group(2)} from the "
                            "network (a web font or stylesheet from a CDN).")

    if not gallery_pages:
        problems.append(f"no gallery example page in {gallery_dir}/: sphinx-gallery did not run "
                        "(or the examples were not found).")
    elif gallery_images == 0:
        problems.append(f"the {len(gallery_pages)} gallery example pages reference no PNG image: "
                        "the examples ran without producing figures (plot_gallery=0? "
                        "matplotlib missing?).")
    if mathjax_pages == 0:
        problems.append("no page loads MathJax from the site (_static/mathjax/...): formulas "
                        "would show as raw LaTeX.")
    return problems


def main(argv=None):
    """Command-line entry: print the problems and return the exit status (0 if none)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", help="the Sphinx HTML output folder, e.g. docs/_build/html")
    parser.add_argument("--gallery-dir", default="auto_examples",
                        help="the gallery's folder inside BUILD_DIR (default: auto_examples)")
    args = parser.parse_args(argv)
    problems = find_problems(args.build_dir, gallery_dir=args.gallery_dir)
    if problems:
        print(f"check_build: {len(problems)} problem(s) in {args.build_dir}:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"check_build: {args.build_dir} is fine: gallery figures present, MathJax served "
          "locally, nothing loaded from the network, no code line or table cut off.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
