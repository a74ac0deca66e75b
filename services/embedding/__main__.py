"""`python -m mithril.services.embedding`: run the embedding service until SIGTERM."""

import os

import uvloop

from mithril.runtime.server import serve_until_signalled
from mithril.services.embedding.config import EmbeddingSettings
from mithril.services.embedding.server import create_server


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is ever fetched at run time
    settings = EmbeddingSettings()
    uvloop.run(serve_until_signalled("embedding", settings, lambda: create_server(settings)))


if __name__ == "__main__":
    main()
