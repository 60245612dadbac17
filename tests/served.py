"""``kraftwire serve`` as a child process for tests, on free ports."""
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from kraftwire.server.host import config_file

REPO = Path(__file__).resolve().parent.parent


def free_ports(count: int) -> int:
    """A base port with ``count`` consecutive free ports after it (brokers take port + i - 1), only for the
    tests that check port numbers; every other test asks for port 0. Bases are drawn below the kernel's
    ephemeral range, where no outgoing connection takes a port, so a loaded machine does not crowd it."""
    low = _ephemeral_low()
    rng = random.Random()
    for _ in range(500):
        base = rng.randrange(1024, low - count)
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
    raise RuntimeError(f"no run of {count} free ports below {low}")


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


class Served:
    """``kraftwire serve`` as a child process, until it printed that it is ready. Its log (stderr) is read
    all along, so a chatty server never blocks on a full pipe."""

    def __init__(self, cwd: Path, *args: str, env: dict | None = None, timeout: float = 60):
        environment = {k: v for k, v in os.environ.items() if not k.startswith(config_file.ENV_PREFIX)}
        environment.update(env or {})
        environment["PYTHONPATH"] = str(REPO)
        self.process = subprocess.Popen([sys.executable, "-m", "kraftwire", "serve", *args], cwd=cwd,
                                        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._log: list[str] = []
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        for line in self._stdout_lines(deadline):
            if line.startswith("kraftwire ready on "):
                self.bootstrap = line.split()[-1]
                return
        self.process.kill()
        self.process.wait(30)
        self._reader.join(30)
        raise AssertionError(f"serve did not start: {self.logged()}")

    def _stdout_lines(self, deadline: float):
        """Lines of stdout until EOF or the deadline, read from the descriptor itself: a buffered
        readline could take two lines in at once and leave ``select`` waiting for the second."""
        fd, pending = self.process.stdout.fileno(), b""
        while True:
            while b"\n" not in pending:
                ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
                chunk = os.read(fd, 4096) if ready else b""
                if not chunk:
                    return
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            yield line.decode()

    def _read_log(self) -> None:
        with self.process.stderr:
            for line in self.process.stderr:
                self._log.append(line)

    def logged(self) -> str:
        """What it has logged so far."""
        return "".join(self._log)

    def wait_logged(self, text: str, timeout: float = 60) -> str:
        """Wait until a line containing ``text`` is logged; returns that line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self._log):
                if text in line:
                    return line
            time.sleep(0.05)
        raise AssertionError(f"{text!r} was not logged: {self.logged()}")

    def wait(self, timeout: float = 60) -> int:
        """Wait for the process to end by itself; returns its exit status."""
        code = self.process.wait(timeout)
        self._reader.join(30)
        return code

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs; the page cache keeps what was written."""
        self.process.kill()
        self.wait()

    def stop(self) -> str:
        """Stop it as Docker would (SIGTERM); returns what it logged."""
        self.process.send_signal(signal.SIGTERM)
        code = self.wait(60)
        assert code == 0, self.logged()
        return self.logged()


def serve_once(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``kraftwire serve`` expected to stop by itself (a refused start): its exit status and output."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(config_file.ENV_PREFIX)}
    environment["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "kraftwire", "serve", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=timeout)


def create_topics(bootstrap: str, names: list[str]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(name, 1, 1) for name in names])
    finally:
        admin.close()


def listed_topics(bootstrap: str) -> set[str]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        return set(admin.list_topics())
    finally:
        admin.close()
