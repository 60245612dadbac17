"""``kraftwire serve`` as a child process for tests, on free ports."""
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from kraftwire.server.host import config_file

REPO = Path(__file__).resolve().parent.parent


def free_ports(count: int) -> int:
    """A base port with ``count`` consecutive free ports after it (brokers take port + i - 1)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        sockets = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no run of free ports")


class Served:
    """``kraftwire serve`` as a child process, until it printed that it is ready."""

    def __init__(self, cwd: Path, *args: str, env: dict | None = None):
        environment = {k: v for k, v in os.environ.items() if not k.startswith(config_file.ENV_PREFIX)}
        environment.update(env or {})
        environment["PYTHONPATH"] = str(REPO)
        self.process = subprocess.Popen([sys.executable, "-m", "kraftwire", "serve", *args], cwd=cwd,
                                        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            line = self.process.stdout.readline() if ready else ""
            if line.startswith("kraftwire ready on "):
                self.bootstrap = line.split()[-1]
                return
            if not line or time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"serve did not start: {self.process.stderr.read()}")

    def stop(self) -> str:
        """Stop it as Docker would (SIGTERM); returns what it logged."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, err
        return err
