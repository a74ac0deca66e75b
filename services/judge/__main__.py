"""`python -m mithril.services.judge`: run the judge service until SIGTERM."""

import uvloop

from mithril.runtime.server import serve_until_signalled
from mithril.services.judge.config import JudgeSettings
from mithril.services.judge.server import create_server


def main() -> None:
    settings = JudgeSettings()
    uvloop.run(serve_until_signalled("judge", settings, lambda: create_server(settings)))


if __name__ == "__main__":
    main()
