"""The README's walkthrough, run as written against ``kraftwire serve`` started with the README's own
flags: its install line brings what the walkthrough uses, every command of its shell block succeeds and
prints what its ``# → ...`` line says, and so does its Python block; then, on the same server, the
Kafka-tools block with Kafka's own scripts (tests/setup.sh's wrappers). Only the addresses change (the
``B=... C=...`` lines and the Python block's bootstrap), to ports the kernel gave, and the Kafka block's
``$PWD`` (the checkout) is spelled out, since it runs in a scratch directory. The "Deterministic runs"
snippet runs as written."""
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from served import Served, free_ports

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
SECTION = README[README.index("## A reassignment in two minutes"):]
EXPECTED = "# → "


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", SECTION, re.S | re.M)


def contains(actual, stated) -> bool:
    """``stated`` is ``actual`` or a part of it: dicts by the keys stated, lists by their first items."""
    if isinstance(stated, dict):
        return isinstance(actual, dict) and all(k in actual and contains(actual[k], v) for k, v in stated.items())
    if isinstance(stated, list):
        return (isinstance(actual, list) and len(stated) <= len(actual)
                and all(contains(a, s) for a, s in zip(actual, stated)))
    return actual == stated


def steps(block: str) -> list[tuple[str, str | None]]:
    """(command, the output its ``# →`` line states or None) for every command line of a block."""
    lines = block.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() and not line.startswith("#"):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            found.append((line, following[len(EXPECTED):] if following.startswith(EXPECTED) else None))
    return found


def test_the_install_line_brings_what_the_walkthrough_uses():
    [install] = blocks("")[:1]
    assert install.startswith("pip install '.[clients]' && kraftwire serve ")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(requirement.startswith("kafka-python") for requirement in extras["clients"])
    used = {command.split()[0] for command, _ in steps(blocks("bash")[0])[1:]}
    assert used <= {"kafka-python", "curl", "for"}, used


@pytest.fixture
def served(tmp_path):
    """``kraftwire serve`` with the README's flags, then the test's ports (later flags win)."""
    [install] = blocks("")[:1]
    flags = shlex.split(install.split("kraftwire serve", 1)[1])
    base = free_ports(6)
    server = Served(tmp_path, *flags, "--controller-port", str(base), "--port", str(base + 1),
                    "--control-port", str(base + 5), "--data-dir", "state")
    server.control = f"http://127.0.0.1:{base + 5}"
    yield server
    server.stop()


def test_the_walkthrough_runs_word_for_word(served, tmp_path):
    shell, python = blocks("bash")[0], blocks("python")[0]
    addresses, *commands = steps(shell)
    assert addresses == ("B=127.0.0.1:9092 C=http://127.0.0.1:8080", None)
    assign = f"B={served.bootstrap.split(',')[0]} C={served.control}"
    # the interpreter's own scripts first: where pip put the extra's ``kafka-python`` command
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    checked = 0
    for command, stated in commands:
        done = subprocess.run(["bash", "-c", f"{assign}; {command}"], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL, env=env)
        assert done.returncode == 0, (command, done.stderr)
        if command.startswith("curl"):  # the control plane's answers end their line
            assert done.stdout.endswith("\n"), (command, done.stdout)
        if stated is not None:
            assert contains(json.loads(done.stdout), json.loads(stated)), (command, done.stdout)
            checked += 1
    assert checked == 5

    script = python.replace('"127.0.0.1:9092"', json.dumps(served.bootstrap))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [line[len(EXPECTED):] for line in python.splitlines()
                                        if line.startswith(EXPECTED)]
    run_kafka_tools_block(served, tmp_path, env)


def shell_commands(block: str) -> list[str]:
    """The block's commands as a shell reads them: a line ending in ``\\`` joined to the next, a here-document
    kept with its command; comment lines dropped."""
    commands, lines = [], iter(block.splitlines())
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        command = line
        while command.endswith("\\"):
            command = command[:-1] + next(lines).strip()
        heredoc = re.search(r"<<'(\w+)'", command)
        if heredoc:
            body = []
            for body_line in lines:
                body.append(body_line)
                if body_line == heredoc.group(1):
                    break
            command = "\n".join([command, *body])
        commands.append(command)
    return commands


def run_kafka_tools_block(served, cwd: Path, env: dict) -> None:
    """The Kafka-tools block after the first, each command in order, as one reader would type them."""
    tools = REPO / "tests" / "kafka" / "bin"
    if not (tools / "kafka-topics.sh").exists():
        pytest.fail(f"no Kafka scripts in {tools}: run bash tests/setup.sh (it writes them)")
    path_line, address_line, *commands = shell_commands(blocks("bash")[1])
    assert (path_line, address_line) == ('export PATH="$PWD/tests/kafka/bin:$PATH"', "B=127.0.0.1:9092")
    prefix = f'{path_line.replace("$PWD", str(REPO))}; B={served.bootstrap.split(",")[0]}'
    outputs = []
    for command in commands:
        done = subprocess.run(["bash", "-o", "pipefail", "-c", f"{prefix}; {command}"], capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        outputs.append((command, done.stdout))

    def output_of(fragment: str) -> str:
        return next(output for command, output in outputs if fragment in command)
    assert output_of("kafka-topics.sh").strip() == "Created topic shipments."
    assert "Successfully started partition reassignments for shipments-0,shipments-1" in output_of("--execute")
    assert "shipments-0: replicas: 3,4,1,2. adding: 3,4. removing: 1,2." in output_of("--list")
    described = output_of("kafka-configs.sh")
    assert "Dynamic configs for broker 1 are:" in described and "throttled" not in described, described
    assert '"partition":"shipments-0"' in output_of("kafka-log-dirs.sh").replace(" ", "")
    assert "LeaderId:" in output_of("kafka-metadata-quorum.sh")


def test_the_deterministic_runs_snippet_runs_as_written():
    section = README[README.index("### Deterministic runs"):]
    snippet = re.search(r"^```python\n(.*?)^```", section, re.S | re.M).group(1)
    done = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [line.strip()[len(EXPECTED):] for line in snippet.splitlines()
                                        if line.strip().startswith(EXPECTED)]
