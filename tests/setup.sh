#!/usr/bin/env bash
# Installs what the test suite needs, then exits; quick when everything is already there.
# Debian packages (apt-get, as root or through sudo), kraftwire itself with its test extra (pip, editable),
# the Node clients' packages (npm), Apache Kafka's jars (Maven, tests/kafka) and franz-go (Go, tests/kadm).
set -euo pipefail
cd "$(dirname "$0")/.."

# command the tests run -> Debian package that provides it
apt_needs=(
  "kcat:kcat"
  "prometheus:prometheus"
  "chromium:chromium"
  "curl:curl"
  "node:nodejs"
  "npm:npm"
)

missing=()
for need in "${apt_needs[@]}"; do
  command -v "${need%%:*}" >/dev/null 2>&1 || missing+=("${need#*:}")
done
if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Reinstall only when kraftwire is not installed from this checkout, a requirement is unmet or an entry
# point is missing.
# (-I keeps the checkout off sys.path, so a kraftwire.egg-info left in it is not taken for the install.)
if ! python -I - <<'PY'
import json, pathlib, sys, tomllib
from importlib import metadata
try:
    from packaging.requirements import Requirement
except ImportError:
    sys.exit(1)

root = pathlib.Path.cwd().resolve()
try:
    url = json.loads(metadata.distribution("kraftwire").read_text("direct_url.json") or "{}").get("url", "")
except metadata.PackageNotFoundError:
    sys.exit(1)
if url != root.as_uri():
    sys.exit(1)
project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
installed = {(e.group, e.name, e.value) for e in metadata.distribution("kraftwire").entry_points}
declared = {(group, name, value) for group, entries in project.get("entry-points", {}).items()
            for name, value in entries.items()}
if not declared <= installed:  # e.g. the pytest plugin's entry point, added after the last install
    sys.exit(1)
# The strict editable install links each file of the checkout into build/__editable__.*/kraftwire (so that
# mypy, pyright and editors resolve kraftwire.* to the checkout's files); a file added since needs a new link.
trees = list(root.glob("build/__editable__.kraftwire-*/kraftwire"))
if len(trees) != 1:
    sys.exit(1)
if any(link.is_symlink() and not link.exists() for link in trees[0].rglob("*")):
    sys.exit(1)  # a file removed from the checkout
for package, folder in tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].items():
    linked = trees[0].joinpath(*package.split(".")[1:])
    for path in (root / folder).rglob("*"):
        relative = path.relative_to(root / folder)
        if path.suffix in (".py", ".json", ".typed") and not (linked / relative).exists() \
                and not any(part in ("public", "__pycache__") for part in relative.parts[:-1]):
            sys.exit(1)
for line in project["dependencies"] + project["optional-dependencies"]["test"]:
    requirement = Requirement(line)
    try:
        if not requirement.specifier.contains(metadata.version(requirement.name), prereleases=True):
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
PY
then
  echo "setup: pip install -e '.[test]' (strict editable mode: a tree of links that static tools follow)"
  rm -rf build/__editable__.kraftwire-*
  python -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --config-settings editable_mode=strict -e '.[test]'
fi

# Bytecode for the install's tree of links (build/, outside the checkout's folders): the test suite runs
# with PYTHONDONTWRITEBYTECODE, so without it every `kraftwire serve` a test starts compiled ~0.2 s of
# source first. A .pyc older than its source is ignored and the source compiled as before.
env -u PYTHONDONTWRITEBYTECODE python -m compileall -q build/__editable__.kraftwire-*/kraftwire >/dev/null || true

if [ -f tests/node/package.json ]; then
  if [ ! -d tests/node/node_modules ] || [ tests/node/package.json -nt tests/node/node_modules/.package-lock.json ]; then
    echo "setup: npm install in tests/node"
    (cd tests/node && npm install --no-audit --no-fund --loglevel=error)
  fi
fi

# Apache Kafka (broker, tools, Java Admin) from Maven Central into tests/kafka/lib, pinned by
# tests/kafka/pom.xml; offline from the local Maven cache when it is already there.
if [ -f tests/kafka/pom.xml ]; then
  stamp=tests/kafka/lib/.resolved
  if [ ! -f "$stamp" ] || [ tests/kafka/pom.xml -nt "$stamp" ]; then
    echo "setup: resolving Apache Kafka with Maven into tests/kafka/lib"
    rm -rf tests/kafka/lib
    (cd tests/kafka && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package; }) && touch "$stamp"
  fi
  # Kafka's bin/kafka-*.sh over those jars, in tests/kafka/bin (README: "The same with Apache Kafka's own tools")
  bash tests/kafka/wrappers.sh
fi
# Kafka 3.7's broker into tests/kafka37/lib (tests/kafka37/pom.xml): the production-level twin test records
# a real 3.7 metadata log with it.
if [ -f tests/kafka37/pom.xml ]; then
  stamp=tests/kafka37/lib/.resolved
  if [ ! -f "$stamp" ] || [ tests/kafka37/pom.xml -nt "$stamp" ]; then
    echo "setup: resolving Apache Kafka 3.7 with Maven into tests/kafka37/lib"
    rm -rf tests/kafka37/lib
    (cd tests/kafka37 && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package; }) && touch "$stamp"
  fi
fi

# franz-go for tests/kadm (Go module proxy); go.sum pins every module.
# The test binaries are built here (into Go's build cache) so that the suite's `go test` only links them.
if command -v go >/dev/null 2>&1; then
  for module in tests/kadm tests/kgo; do
    if [ -f "$module/go.mod" ]; then
      (cd "$module" && GOFLAGS=-mod=readonly go mod download && GOFLAGS=-mod=readonly go test -count=1 -run '^$' ./... >/dev/null)
    fi
  done
fi

# podman, its configuration, the base images and kraftwire's images (tests/containers); see that script.
bash tests/container_setup.sh
