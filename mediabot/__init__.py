"""mediabot: manage a household media server by text message."""

__version__ = "0.1.0"
