"""Look at the built documentation in a real headless browser, offline, and take screenshots.

Run once after ``make docs`` (see ``docs/README.md``)::

    python3 -m venv /tmp/pw && /tmp/pw/bin/pip install playwright
    apt-get install chromium-headless-shell        # or: /tmp/pw/bin/playwright install chromium
    /tmp/pw/bin/python docs/screenshots.py docs/_build/html --out docs/_screenshots

It serves ``BUILD_DIR`` on ``127.0.0.1`` (a random free port), opens the pages below in headless
Chromium with **every request to another host aborted** (so the site must work offline), and for
each page

* waits until MathJax has typeset the page (``MathJax.startup.promise``) and checks that it
  rendered ``mjx-container`` elements and that no raw ``\\(``, ``\\[`` or ``$$`` remains in the
  visible text;
* checks that every image loaded (``naturalWidth > 0``), and on the gallery page that there is at
  least one figure;
* saves a screenshot (the viewport, scrolled to the first figure or display formula) to
  ``OUT/<name>.png``.

It exits with status 1 and names the problem if any check fails or a page tried to reach the
network. Needs only the ``playwright`` Python package (not installed into the project's venv)
and a Chromium: ``--chromium PATH``, else ``chromium-headless-shell`` or ``chromium`` from the
PATH, else Playwright's own download.
"""

import argparse
import functools
import http.server
import os
import shutil
import sys
import threading

#: (screenshot name, page, CSS selector scrolled into view before the screenshot, needs math)
PAGES = [
    ("landing", "index.html", None, False),
    ("gallery", "auto_examples/plot_classifier_calibration.html", "img.sphx-glr-single-img",
     False),
    ("math", "notions.html", "div.math", True),
]

MATHJAX_READY = """async () => {
    if (!window.MathJax) { return {loaded: false}; }
    if (MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
    const text = document.querySelector('article') ? document.querySelector('article').innerText
                                                   : document.body.innerText;
    return {loaded: true,
            containers: document.querySelectorAll('mjx-container').length,
            raw: ['\\\\(', '\\\\[', '$$'].filter(s => text.includes(s))};
}"""

IMAGES = """() => Array.from(document.images).map(
    img => ({src: img.getAttribute('src'), ok: img.complete && img.naturalWidth > 0}))"""


def _serve(build_dir):
    handler = functools.partial(_QuietHandler, directory=build_dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def _chromium(path):
    if path:
        return path
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None  # Playwright's own browser


def check(build_dir, out_dir, *, chromium=None, width=1280, height=860, also=(),
          full_page=False):
    """Open the pages, check them and save the screenshots.

    Parameters
    ----------
    build_dir : str
        The built HTML site.
    out_dir : str
        Folder of the screenshots (created).
    chromium : str, default=None
        Path of a Chromium executable.
    width, height : int
        Viewport size in CSS pixels.
    also : sequence of str, default=()
        Further pages (paths inside ``build_dir``) to check and screenshot, as
        ``OUT/<path with / replaced by _>.png``.
    full_page : bool, default=False
        Screenshot whole pages instead of the viewport.

    Returns
    -------
    list of str
        The problems found (empty if none).
    """
    from playwright.sync_api import sync_playwright

    os.makedirs(out_dir, exist_ok=True)
    server = _serve(os.path.abspath(build_dir))
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems, blocked = [], []

    def route(request_route):
        url = request_route.request.url
        if url.startswith(base) or url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort()

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=_chromium(chromium))
            page = browser.new_page(viewport={"width": width, "height": height})
            page.route("**/*", route)
            extra = [(p.replace("/", "_").removesuffix(".html"), p, None, False) for p in also]
            for name, path, selector, needs_math in PAGES + extra:
                page.goto(base + path, wait_until="networkidle")
                math = page.evaluate(MATHJAX_READY)
                if needs_math:
                    if not math["loaded"]:
                        problems.append(f"{path}: MathJax did not load.")
                    elif math["containers"] == 0:
                        problems.append(f"{path}: MathJax rendered no formula (no "
                                        "mjx-container).")
                if math.get("raw"):
                    problems.append(f"{path}: raw LaTeX delimiters left in the text: "
                                    f"{math['raw']}.")
                images = page.evaluate(IMAGES)
                broken = [img["src"] for img in images if not img["ok"]]
                if broken:
                    problems.append(f"{path}: images not shown: {broken}.")
                if selector:
                    element = page.query_selector(selector)
                    if element is None:
                        problems.append(f"{path}: nothing matches {selector!r}.")
                    else:
                        element.scroll_into_view_if_needed()
                        page.evaluate("window.scrollBy(0, -120)")
                target = os.path.join(out_dir, f"{name}.png")
                page.screenshot(path=target, full_page=full_page)
                print(f"{path}: {math.get('containers', 0)} formulas rendered, "
                      f"{len(images)} images ({len(broken)} broken) -> {target} "
                      f"({os.path.getsize(target) // 1024} KB)")
            browser.close()
    finally:
        server.shutdown()
    for url in sorted(set(blocked)):
        problems.append(f"a page tried to reach the network: {url}")
    return problems


def main(argv=None):
    """Command-line entry; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", nargs="?", default="docs/_build/html")
    parser.add_argument("--out", default="docs/_screenshots", help="screenshot folder")
    parser.add_argument("--chromium", default=None, help="path of a Chromium executable")
    parser.add_argument("--also", nargs="*", default=(), metavar="PAGE",
                        help="further pages to check and screenshot, e.g. scorers.html")
    parser.add_argument("--full-page", action="store_true",
                        help="screenshot whole pages instead of the viewport")
    args = parser.parse_args(argv)
    problems = check(args.build_dir, args.out, chromium=args.chromium, also=args.also,
                     full_page=args.full_page)
    for problem in problems:
        print(f"screenshots: {problem}", file=sys.stderr)
    if not problems:
        print("screenshots: every page rendered offline, formulas typeset, images shown.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
