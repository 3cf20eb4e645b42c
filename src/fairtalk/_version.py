"""fairtalk's version, declared once: the package's ``__version__`` and pyproject.toml's (``dynamic``) read it."""

__version__ = "0.1.0"
