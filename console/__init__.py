"""stormdeck: see the reconnect storm coming, and act on it safely."""

__version__ = "0.1.0"
