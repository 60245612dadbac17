"""What every benchmark prints first: the command that reproduces it, the commit it ran and the load."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commit() -> str:
    """The checked-out commit, with ``+changes`` when the tree differs from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def header(argv: list[str] | None = None) -> None:
    """Print the command (this script and its arguments as given), the commit and the load average."""
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(os.path.abspath(argv[0]), ROOT)
    print(f"command: python {' '.join([script, *argv[1:]])}")
    print(f"commit: {commit()}")
    print(f"load average at start: {load_average()}", flush=True)
