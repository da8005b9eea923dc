"""The house rules of ``skcalib/``, counted: private imports across packages, long modules, long functions.

Run ``python tools/house_counts.py`` to print the three counts and what makes them up;
``tests/house/test_house_counts.py`` runs the same functions and fails when a count exceeds its
ceiling.

* A **private cross-package import** is an import, anywhere in a module (function-level imports
  count), of a private module that belongs to *another* package: ``skcalib.stats._skce``
  importing ``skcalib.metrics._kernel``. The private top-level modules (``skcalib._validation``,
  ``skcalib._pairwise``, the ``skcalib._core`` floor …) are the shared floor and do not count;
  imports within one package (``metrics._scores`` importing ``metrics._binned``) do not count.
  The few that remain are listed in :data:`ALLOWED_PRIVATE_IMPORTS` with the reason.
* A **long module** has more than :data:`MAX_MODULE_LINES` lines (every line of the file).
* A **long function** has more than :data:`MAX_FUNCTION_CODE_LINES` lines of code: the lines of
  its body that hold code, not counting blank lines, comment-only lines or its docstring.
"""

import ast
import pathlib
import sys
import tokenize

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent / "skcalib"

MAX_PRIVATE_IMPORTS = 5
MAX_MODULE_LINES = 1000
MAX_FUNCTION_CODE_LINES = 100

#: ``(importer, imported)`` pairs that may cross the seam, with the reason. Keep it short.
ALLOWED_PRIVATE_IMPORTS = {}


def module_name(path):
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules():
    """``{dotted name: path}`` of every module of the package."""
    return {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def imports_in(source, module, is_package=False, known=None):
    """``[(imported module, line)]``: the skcalib modules that ``source`` (the text of ``module``)
    imports anywhere, functions included. ``from package import name`` is the submodule
    ``package.name`` if it is one of ``known`` (default: the package's modules), else
    ``package``. ``tests/house/test_layering.py`` checks the layers with the same reader."""
    known = modules() if known is None else known
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names
                      if alias.name.split(".")[0] == "skcalib"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - (node.level - 1)])
                if node.module:
                    base = f"{base}.{node.module}"
            elif node.module and node.module.split(".")[0] == "skcalib":
                base = node.module
            else:
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.append((candidate if candidate in known else base, node.lineno))
    return found


def owner_of_private(target):
    """The package that owns the private module ``target``, or None if ``target`` is public or
    a private module of the top level (the shared floor)."""
    parts = target.split(".")
    for k in range(2, len(parts)):
        if parts[k].startswith("_"):
            return ".".join(parts[:k])
    return None


def private_cross_imports():
    """``[(importer, imported, line)]``: imports of another package's private module."""
    known = modules()
    found = []
    for module, path in known.items():
        source = path.read_text(encoding="utf-8")
        for target, line in imports_in(source, module, path.name == "__init__.py", known):
            owner = owner_of_private(target)
            if owner is None or module == owner or module.startswith(owner + "."):
                continue
            found.append((module, target, line))
    return sorted(set(found))


def long_modules():
    """``[(path, lines)]`` of the modules over :data:`MAX_MODULE_LINES` lines."""
    out = []
    for path in modules().values():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            out.append((str(path.relative_to(PACKAGE_DIR.parent)), n))
    return sorted(out, key=lambda item: -item[1])


def _comment_or_blank_lines(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    skip = {i + 1 for i, text in enumerate(lines) if not text.strip()}
    with open(path, "rb") as handle:
        code_rows = set()
        comment_rows = set()
        for tok in tokenize.tokenize(handle.readline):
            if tok.type == tokenize.COMMENT:
                comment_rows.add(tok.start[0])
            elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                  tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
                code_rows.update(range(tok.start[0], tok.end[0] + 1))
    return skip | (comment_rows - code_rows)


def function_code_lines(path):
    """``[(qualified name, first line, code lines)]`` for every function of the file at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    not_code = _comment_or_blank_lines(path)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = child.body
                rows = set(range(child.lineno, child.end_lineno + 1)) - not_code
                if (body and isinstance(body[0], ast.Expr)
                        and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
                    rows -= set(range(body[0].lineno, body[0].end_lineno + 1))
                # decorators are not part of the body
                rows = {r for r in rows if r >= child.lineno}
                out.append((prefix + child.name, child.lineno, len(rows)))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def long_functions():
    """``[(path:line, name, code lines)]`` of the functions over the ceiling."""
    out = []
    for path in modules().values():
        rel = path.relative_to(PACKAGE_DIR.parent)
        for name, line, n in function_code_lines(path):
            if n > MAX_FUNCTION_CODE_LINES:
                out.append((f"{rel}:{line}", name, n))
    return sorted(out, key=lambda item: -item[2])


def main():
    imports = private_cross_imports()
    unlisted = [i for i in imports if (i[0], i[1]) not in ALLOWED_PRIVATE_IMPORTS]
    big = long_modules()
    longf = long_functions()
    print(f"private cross-package imports: {len(imports)} (ceiling {MAX_PRIVATE_IMPORTS}; "
          f"{len(unlisted)} not on the allow-list)")
    for importer, target, line in imports:
        reason = ALLOWED_PRIVATE_IMPORTS.get((importer, target))
        note = f"  -- allowed: {reason}" if reason else ""
        print(f"    {importer}:{line} imports {target}{note}")
    print(f"modules over {MAX_MODULE_LINES} lines: {len(big)}")
    for path, n in big:
        print(f"    {path}: {n} lines")
    print(f"functions over {MAX_FUNCTION_CODE_LINES} code lines: {len(longf)}")
    for where, name, n in longf:
        print(f"    {where} {name}: {n} code lines")
    ok = len(imports) <= MAX_PRIVATE_IMPORTS and not unlisted and not big and not longf
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
