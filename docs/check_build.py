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

__all__ = ["find_problems", "main"]

#: ``<link rel=...>`` values that make the browser fetch the ``href``.
FETCHING_RELS = {
    "stylesheet", "preload", "modulepreload", "prefetch", "preconnect", "dns-prefetch", "icon",
    "shortcut", "apple-touch-icon", "manifest", "mask-icon",
}
#: Elements whose ``src`` the browser loads.
SRC_TAGS = {"script", "img", "iframe", "frame", "embed", "source", "video", "audio", "track",
            "input"}

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
    for page in pages:
        rel_page = os.path.relpath(page, build_dir)
        with open(page, encoding="utf-8", errors="replace") as f:
            parser = _PageParser()
            parser.feed(f.read())
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
          "locally, nothing loaded from the network.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
