"""The export companion's version, recorded in every export.json."""

__version__ = "0.1.0"
