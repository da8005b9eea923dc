"""Optional dependencies, imported when first needed, with an error that says how to install them."""


def pyplot():
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised without matplotlib only
        raise ImportError(
            "plotting needs matplotlib: pip install 'skcalib[plot]' (or matplotlib)."
        ) from exc
    return plt
