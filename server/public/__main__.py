"""``python -m kraftwire``: the ``kraftwire`` command."""
from kraftwire.server.host.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
