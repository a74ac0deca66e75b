"""The dashboard's static assets (HTML, vanilla JS, CSS), shipped in the package.

Nothing is fetched from a CDN: the page works offline. Assets are read once and cached.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib import resources

_PACKAGE = "mithril.gateway.dashboard"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\.(?:js|css|svg)$")
"""Names the static route serves; HTML pages are served only through their routes."""

CONTENT_TYPES = {
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "svg": "image/svg+xml",
    "html": "text/html; charset=utf-8",
}


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


@functools.cache
def _read(name: str) -> Asset | None:
    path = resources.files(_PACKAGE).joinpath("static", name)
    if not path.is_file():
        return None
    body = path.read_bytes()
    kind = name.rsplit(".", 1)[-1]
    return Asset(body, CONTENT_TYPES[kind], '"' + hashlib.sha256(body).hexdigest()[:16] + '"')


def static_asset(name: str) -> Asset | None:
    """A JS, CSS or SVG file under static/, or None (unknown names, any path tricks)."""
    return _read(name) if _NAME.fullmatch(name) else None


def page(name: str) -> str:
    """One of the HTML pages ("index", "login")."""
    asset = _read(f"{name}.html")
    if asset is None:
        raise LookupError(f"dashboard page {name!r} is missing from the package")
    return asset.body.decode("utf-8")
