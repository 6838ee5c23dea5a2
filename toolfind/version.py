"""toolfind's version, read by the packaging (hatch), the caches' keys and every front end."""

__version__ = "0.1.0"
