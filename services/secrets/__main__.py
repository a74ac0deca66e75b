"""`python -m mithril.services.secrets`: run the secrets service until SIGTERM."""

import uvloop

from mithril.runtime.server import serve_until_signalled
from mithril.services.secrets.config import SecretsSettings
from mithril.services.secrets.server import create_server


def main() -> None:
    settings = SecretsSettings()
    uvloop.run(serve_until_signalled("secrets", settings, lambda: create_server(settings)))


if __name__ == "__main__":
    main()
