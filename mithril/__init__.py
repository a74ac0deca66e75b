"""Mithril: a self-hosted AI firewall."""

__version__ = "0.1.0"
