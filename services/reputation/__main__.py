"""`python -m mithril.services.reputation`: run the reputation service until SIGTERM."""

import uvloop

from mithril.runtime.server import serve_until_signalled
from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.server import create_server


def main() -> None:
    settings = ReputationSettings()
    uvloop.run(serve_until_signalled("reputation", settings, lambda: create_server(settings)))


if __name__ == "__main__":
    main()
