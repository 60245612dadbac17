#!/usr/bin/env bash
# The container side of tests/setup.sh: podman (a Docker-compatible engine that needs no daemon), its
# configuration, the base images docker/*Dockerfile start FROM, and kraftwire's images built from this
# checkout. Quick when everything is there (podman's layer cache makes an unchanged build a no-op).
#
# Base images come from a registry when one answers. When none does (this CI machine cannot pull), a
# stand-in is made from Debian's own packages with mmdebstrap (bookworm: Python 3.11, as python:3.11-slim)
# and tagged with the exact name the FROM line asks for, so the Dockerfiles need not change. The host's CA
# certificates go into the stand-in: TLS on the way to PyPI may be intercepted by a proxy the host trusts.
#
# As root it configures /etc/containers/containers.conf; as another user ~/.config/containers/containers.conf
# (rootless podman also needs newuidmap from uidmap and subordinate ids in /etc/subuid and /etc/subgid).
# KRAFTWIRE_SKIP_CONTAINERS=1 skips all of it (the container tests then skip themselves).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${KRAFTWIRE_SKIP_CONTAINERS:-}" = 1 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

# command -> Debian package (runc rather than crun: crun fails on this machine's hybrid cgroups)
needs=("podman:podman" "runc:runc" "newuidmap:uidmap" "slirp4netns:slirp4netns" "fuse-overlayfs:fuse-overlayfs"
       "mmdebstrap:mmdebstrap")
missing=()
for need in "${needs[@]}"; do
  command -v "${need%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${need%%:*}" ] || missing+=("${need#*:}")
done
if ((${#missing[@]})); then
  echo "setup: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" containernetworking-plugins catatonit >/dev/null
fi

# Default ulimits inside the VM's hard limits (podman's defaults ask for more and the container fails
# to start), runc, cgroupfs and file events: there is no systemd to ask.
conf_text='# written by kraftwire tests/container_setup.sh
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"'
if [ "$(id -u)" -eq 0 ]; then conf=/etc/containers/containers.conf
else conf="${XDG_CONFIG_HOME:-$HOME/.config}/containers/containers.conf"; fi
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$conf_text" ]; then
  echo "setup: $conf"
  mkdir -p "$(dirname "$conf")"
  printf '%s\n' "$conf_text" >"$conf"
fi

# The stand-in for python:3.11-slim: Debian bookworm's python3.11 and pip (Debian's pip trusts the system
# store, which holds the host's CAs), `python` and `pip` on PATH as in the official image, and pip allowed
# to install outside a virtualenv as it is there.
stand_in_python() {
  local tar
  tar="$(mktemp -d)/base.tar"
  echo "setup: no registry answers; making python:3.11-slim from Debian bookworm with mmdebstrap"
  mmdebstrap --variant=minbase --quiet --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include=python3.11,python3-pip,python-is-python3,ca-certificates,passwd \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook='cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/" 2>/dev/null || true' \
    --customize-hook='chroot "$1" update-ca-certificates >/dev/null 2>&1' \
    --customize-hook='rm -f "$1"/usr/lib/python3.11/EXTERNALLY-MANAGED; rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    bookworm "$tar" "deb http://deb.debian.org/debian bookworm main" \
    "deb http://deb.debian.org/debian-security bookworm-security main" >/dev/null
  podman import -q --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' --change 'LABEL org.kraftwire.stand-in=debian-bookworm-mmdebstrap' \
    "$tar" docker.io/library/python:3.11-slim >/dev/null
  rm -rf "$(dirname "$tar")"
}

have_image() { podman image exists "$1"; }
pull() { timeout 60 podman pull -q "$1" >/dev/null 2>&1; }

if ! have_image docker.io/library/python:3.11-slim; then
  pull docker.io/library/python:3.11-slim || stand_in_python
fi
if ! have_image docker.io/library/python:3.11-slim-bookworm; then
  pull docker.io/library/python:3.11-slim-bookworm \
    || podman tag docker.io/library/python:3.11-slim docker.io/library/python:3.11-slim-bookworm
fi

# kraftwire's images from this checkout (docker format: OCI images drop HEALTHCHECK), the names
# docker/compose.yaml gives them. With the layers cached an unchanged checkout builds in seconds; the
# audit image's first build downloads Java and PySpark (~5 min here), later ones redo only kraftwire's layers.
build() {  # TAG, then podman build's options
  local tag=$1 started=$SECONDS before
  shift
  before="$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)"
  podman build -q --format docker -t "$tag" "$@" . >/dev/null
  if ((SECONDS - started > 20)); then echo "setup: built $tag in $((SECONDS - started)) s"; fi
  if [ -n "$before" ] && [ "$before" != "$(podman image inspect --format '{{.Id}}' "$tag")" ]; then
    podman rmi "$before" >/dev/null 2>&1 || true  # the previous build, unless a container still uses it
  fi
}
build localhost/kraftwire:latest -f docker/Dockerfile --target kraftwire
build localhost/kraftwire-audit:latest -f docker/Dockerfile --target audit

# The Spark executor image (docker/executor.Dockerfile) takes Spark from the official Spark image; without a
# registry, from a stand-in with the audit image's Spark (tests/containers/stand-ins/spark.Dockerfile, named
# as a stand-in: its Spark version is the audit's, not the official tag's).
spark_image=docker.io/library/spark:4.0.1-scala2.13-java17-ubuntu
if ! have_image "$spark_image" && ! pull "$spark_image"; then
  spark_image=localhost/kraftwire-spark-stand-in:latest
  if ! have_image "$spark_image"; then
    podman build -q -f tests/containers/stand-ins/spark.Dockerfile -t "$spark_image" tests/containers/stand-ins >/dev/null
  fi
fi
build localhost/kraftwire-executor:latest -f docker/executor.Dockerfile --build-arg SPARK_IMAGE="$spark_image"

# The Testcontainers runners of tests/containers: Node's packages (npm), the Go modules (Go proxy, pinned by
# go.sum) and the Maven project's dependencies (Maven Central).
if [ ! -d tests/containers/node/node_modules ] \
    || [ tests/containers/node/package.json -nt tests/containers/node/node_modules/.package-lock.json ]; then
  echo "setup: npm install in tests/containers/node"
  (cd tests/containers/node && npm install --no-audit --no-fund --loglevel=error)
fi
if command -v go >/dev/null 2>&1; then
  (cd tests/containers/go && go mod download)
fi
stamp=tests/containers/java/target/.resolved
if [ ! -f "$stamp" ] || [ tests/containers/java/pom.xml -nt "$stamp" ]; then
  echo "setup: resolving tests/containers/java with Maven"
  (cd tests/containers/java && mvn -q -B test-compile) && touch "$stamp"
fi
