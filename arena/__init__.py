"""Arena: the organiser's command line and tournament layer."""

__version__ = "0.1.0"
