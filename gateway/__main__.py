"""`python -m mithril.gateway`: run the gateway until SIGTERM."""

from mithril.gateway.server import main

if __name__ == "__main__":
    main()
