"""How the report writes numbers, p-values, percentages and lists in its tables and prose.

``fmt`` (3 significant digits), ``fmt_p`` (a table's p-value), ``p_phrase`` (a p-value in a
sentence, with the resampling floor), ``pct``, ``fmt_level``, ``fmt_ci`` and ``join`` are used by
every other module of the package; nothing here computes a statistic.
"""

import numpy as np


def fmt(x):
    """Compact number: 3 significant digits, scientific outside [1e-3, 1e5)."""
    if x is None:
        return ""
    x = float(x)
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    if float(x).is_integer() and abs(x) < 1e9:
        return str(int(x))
    if 1e3 <= abs(x) < 1e5:
        return f"{x:.0f}"
    if 1e-3 <= abs(x) < 1e3:
        return f"{x:.3g}"
    return f"{x:.3g}"


def fmt_p(p):
    """A p-value in a table cell: three decimals, or ``<0.001``."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def p_phrase(p, n_resamples=None):
    """A p-value in a sentence (``p = 0.02``, ``p < 0.001``), saying so when it is the smallest
    that ``n_resamples`` resamples can give."""
    if p < 0.001:
        text = "p < 0.001"
    else:
        text = f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"
    if n_resamples is not None and p <= 1.0 / (1 + n_resamples) + 1e-12:
        text += f", the smallest {n_resamples} resamples can give"
    return text


def pct(x):
    """A proportion as a percentage: ``95%``, ``97.5%``."""
    value = 100 * float(x)
    return f"{value:.0f}%" if abs(value - round(value)) < 0.05 else f"{value:.1f}%"


def fmt_level(confidence_level):
    """A confidence level as the report names it (``95%``)."""
    return pct(confidence_level)


def fmt_ci(value, ci):
    """``value [low, high]``."""
    return f"{fmt(value)} [{fmt(ci.low)}, {fmt(ci.high)}]"


def join(items):
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
