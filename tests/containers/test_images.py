"""The images tests/container_setup.sh builds: the server image runs as a non-root user with the same
command line as kraftwire outside a container, and the executor image has what Spark executors import."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

SERVER, EXECUTOR = "localhost/kraftwire:latest", "localhost/kraftwire-executor:latest"


def podman_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", "run", "--rm", *args], capture_output=True, text=True, timeout=300)


def test_the_server_image_runs_as_its_own_non_root_user(engine):
    done = podman_run("--entrypoint", "id", SERVER)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("uid=10001(kraftwire) "), done.stdout


def test_the_server_image_has_the_command_line_of_kraftwire_outside(engine):
    """``kraftwire serve --help`` in the image and here print the same, but for the image's own settings."""
    beside = Path(sys.executable).parent / "kraftwire"  # this interpreter's install, else the one on PATH
    kraftwire = str(beside) if beside.exists() else shutil.which("kraftwire")
    assert kraftwire, "kraftwire is not installed: bash tests/setup.sh installs it"
    outside_env = {k: v for k, v in os.environ.items() if not k.startswith("KRAFTWIRE_")}
    for args in (["--help"], ["serve", "--help"], ["healthcheck", "--help"]):
        inside = podman_run("-e", "COLUMNS=120", SERVER, *args)
        outside = subprocess.run([kraftwire, *args], capture_output=True, text=True, timeout=120,
                                 env=dict(outside_env, COLUMNS="120"))
        assert inside.returncode == outside.returncode == 0, inside.stderr + outside.stderr
        assert inside.stdout == outside.stdout, args


def test_the_executor_image_has_python_3_11_spark_and_the_executors_libraries(engine):
    done = podman_run("--entrypoint", "python3.11", EXECUTOR, "-c",
                      "import os, pyarrow, crc32c, construct; print(os.environ['SPARK_HOME'], os.getuid())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["/opt/spark", "185"]
    listed = podman_run("--entrypoint", "ls", EXECUTOR, "/opt/spark/bin", "/opt/spark/jars")
    assert "spark-submit" in listed.stdout.split() and ".jar" in listed.stdout, listed.stdout + listed.stderr
