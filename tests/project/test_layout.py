"""The package layout ARCHITECTURE.md describes: which wing may import which, and one ``kraftwire``
distribution with no other top-level import name.

The import graph is read from the source with ``ast`` (no module is imported), so a rule broken by a
function-local import is caught too. The folders map onto ``kraftwire.*`` names as pyproject.toml's
package-dir says.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What each wing may import besides itself (ARCHITECTURE.md, "Wings"); the host may import anything.
ALLOWED = {
    "codec": {"schemas"},
    "audit": {"codec"},
    "server.durable": set(),
    "server.metadata": {"codec"},
    "server.raft": {"codec", "server.durable"},
    "server.storage": {"codec", "server.durable"},
    "server.wire": {"codec"},
    "server.controller": {"codec", "server.metadata", "server.wire"},
    "server.apis": {"codec", "server.metadata", "server.controller", "server.wire"},
    "server.groups": {"codec"},
    "server.broker": {"codec", "server.metadata", "server.storage", "server.durable", "server.wire", "server.groups"},
}

# The controller modules that are not decisions: the writer, the log interface it writes through, the
# listener node, and the package itself. Every other module of server/controller/ (and of any subpackage
# it grows) is a decision module: a pure function of an image and a request (ARCHITECTURE.md, "Decisions").
CONTROLLER = "kraftwire.server.controller"
NOT_DECISIONS = {CONTROLLER, f"{CONTROLLER}.active_controller", f"{CONTROLLER}.node", f"{CONTROLLER}.metadata_log"}
DECISION_MODULES_MUST_NOT_REACH = ("kraftwire.server.wire", "kraftwire.server.raft", "kraftwire.server.apis",
                                   "kraftwire.server.broker", f"{CONTROLLER}.metadata_log",
                                   f"{CONTROLLER}.active_controller")

# What a handler module may import of the wire: the types it returns or takes (transport's).
HANDLER_WIRE_NAMES = {"Encoded", "RequestContext", "Undecoded", "Unanswered"}
# Names that make a function a decision: judging a request (decide, validate_*, check_*) or building
# the records of a change (*_records). A handler calls such functions of a controller manager.
DECISION_FUNCTION = re.compile(r"^(decide(_\w+)?|validate_\w+|check_\w+|\w+_records)$")
# What only a decision needs: the result it returns and the records it writes.
DECISION_IMPORTS = {f"{CONTROLLER}.result", "kraftwire.codec.records"}

def source_modules() -> dict[str, Path]:
    """Every module of the distribution by its import name, from the folders pyproject maps."""
    package_dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    mapped = {ROOT / d for d in package_dirs.values()}
    modules = {}
    for package, directory in package_dirs.items():
        for path in (ROOT / directory).rglob("*.py"):
            if any(parent in mapped and ROOT / directory in parent.parents for parent in path.parents):
                continue  # in a folder mapped to a package of its own (server/public is ``kraftwire``)
            parts = list(path.relative_to(ROOT / directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


MODULES = source_modules()


def direct_imports(name: str, path: Path) -> set[str]:
    """The kraftwire modules ``name`` imports (anywhere in the file), with the packages they live in."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            # Importing a module runs its packages' __init__ first; not counted: the root package, which
            # loads the harness only when ``Cluster`` is first asked for (server/public/__init__.py).
            found.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return {m for m in found if m in MODULES}


GRAPH = {name: direct_imports(name, path) for name, path in MODULES.items()}


def reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for target in GRAPH[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def wing(module: str) -> str:
    parts = module.split(".")[1:]
    if parts[:1] == ["server"] and len(parts) > 1:
        return "server." + parts[1]
    return ".".join(parts[:1]) or "kraftwire"


def test_the_import_graph_covers_the_source_tree():
    assert {"kraftwire", "kraftwire.codec", "kraftwire.server.broker.node", "kraftwire.server.controller.topics",
            "kraftwire.audit"} <= set(MODULES)
    assert "kraftwire.server.public" not in MODULES
    assert "kraftwire.server.controller.configuration_control" in GRAPH[
        "kraftwire.server.apis.api44_incremental_alter_configs"]
    assert "kraftwire.server.controller.result" in GRAPH["kraftwire.server.controller.configuration_control"]


def test_each_wing_imports_only_what_it_may():
    broken = sorted((module, target) for module, targets in GRAPH.items() if wing(module) in ALLOWED
                    for target in targets
                    if wing(target) != wing(module) and wing(target) not in ALLOWED[wing(module)]
                    and target != "kraftwire.server")  # the (empty) server package itself
    assert broken == []


def test_brokers_cannot_reach_the_controller_even_indirectly():
    for module in MODULES:
        if wing(module) == "server.broker":
            reached = {m for m in reachable(module) if wing(m) in ("server.controller", "server.apis", "server.raft")}
            assert reached == set(), module


def test_codec_and_audit_stay_out_of_the_server():
    for module in MODULES:
        if wing(module) == "codec":
            assert {wing(m) for m in reachable(module)} <= {"codec", "schemas"}, module
        if wing(module) == "audit":
            assert {wing(m) for m in reachable(module)} <= {"audit", "codec", "schemas"}, module


def decision_modules() -> list[str]:
    return sorted(m for m in MODULES if (m == CONTROLLER or m.startswith(CONTROLLER + ".")) and m not in NOT_DECISIONS)


def test_decision_modules_reach_neither_the_wire_the_log_the_handlers_nor_the_brokers():
    """Every decision module, through any chain of imports."""
    modules = decision_modules()
    assert {f"{CONTROLLER}.configuration_control", f"{CONTROLLER}.cluster_control", f"{CONTROLLER}.acls",
            f"{CONTROLLER}.scram", f"{CONTROLLER}.result", f"{CONTROLLER}.partition_change"} <= set(modules)
    for module in modules:
        reached = {m for m in reachable(module) if m.startswith(DECISION_MODULES_MUST_NOT_REACH)}
        assert reached == set(), module


def handler_modules() -> list[str]:
    return sorted(m for m in MODULES if m.startswith("kraftwire.server.apis.api"))


def test_no_handler_defines_a_decision():
    """A handler module (server/apis/api*.py) decodes, authorizes, calls one manager function and returns
    its answer; the decision is the manager's. Two marks of a decision, both exact for the code as it
    is: a function (at any depth) named ``decide``, ``decide_*``, ``validate_*``, ``check_*`` or
    ``*_records``, and an import of what only a decision needs, ``ControllerResult``
    (``server.controller.result``) or the metadata records (``kraftwire.codec.records``). Handlers that
    answer a read from an image (Metadata, ListConfigResources, DescribeTopicPartitions) build their
    response themselves: that is encoding an answer, not deciding a change."""
    found = []
    for module in handler_modules():
        tree = ast.parse(MODULES[module].read_text())
        found += [(module, node.name) for node in ast.walk(tree)
                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and DECISION_FUNCTION.match(node.name)]
        found += [(module, target) for target in sorted(GRAPH[module] & DECISION_IMPORTS)]
    assert found == []


def wire_imports(module: str) -> list[str]:
    """What ``module`` imports of kraftwire.server.wire, by dotted name (``transport.Encoded``)."""
    path = MODULES[module]
    package = module.split(".")[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.startswith("kraftwire.server.wire")]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else (node.module or "")
            if base == "kraftwire.server" and any(alias.name == "wire" for alias in node.names):
                names.append("kraftwire.server.wire")
            elif base.startswith("kraftwire.server.wire"):
                names += [f"{base}.{alias.name}" for alias in node.names]
    return names


def test_handlers_import_of_the_wire_only_the_types_they_return():
    allowed = {f"kraftwire.server.wire.transport.{name}" for name in HANDLER_WIRE_NAMES}
    assert wire_imports("kraftwire.server.apis.api03_metadata") == [
        "kraftwire.server.wire.transport.Encoded", "kraftwire.server.wire.transport.RequestContext"]
    broken = [(module, name) for module in handler_modules() for name in wire_imports(module) if name not in allowed]
    assert broken == []


def protocol_members(module: str, protocol: str) -> set[str]:
    """The members a Protocol class of ``module`` names, its bases' of the same module included."""
    tree = ast.parse(MODULES[module].read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    members, todo = set(), [protocol]
    while todo:
        cls = classes[todo.pop()]
        todo += [base.id for base in cls.bases if isinstance(base, ast.Name) and base.id in classes]
        members |= {node.name for node in cls.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
        members |= {node.target.id for node in cls.body
                    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    return members


def class_members(module: str, name: str) -> set[str]:
    """What instances of a class offer: its methods and properties, and the attributes its methods set."""
    (cls,) = [node for node in ast.parse(MODULES[module].read_text()).body
              if isinstance(node, ast.ClassDef) and node.name == name]
    members = {node.name for node in cls.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign):
            targets = node.targets
        else:
            targets = [node.target] if isinstance(node, ast.AnnAssign) else []
        members |= {t.attr for t in targets
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    return members


def test_the_nodes_offer_what_the_handlers_seams_name():
    """The Protocols of server/apis/nodes.py are the handlers' whole view of a node (mypy checks the types;
    this, that neither side drifts without the other): every member they name, the node classes have."""
    nodes = "kraftwire.server.apis.nodes"
    for protocol, module, cls in (("ControllerNodeApi", "kraftwire.server.controller.node", "ControllerNode"),
                                  ("BrokerNodeApi", "kraftwire.server.broker.node", "BrokerNode")):
        wanted = protocol_members(nodes, protocol)
        assert {"image", "authorizer", "static_configs"} <= wanted
        assert wanted - class_members(module, cls) == set(), cls


def test_the_wheel_installs_only_kraftwire(tmp_path):
    """Built from a copy of the tree (the build leaves build/ and *.egg-info behind), installed without
    its dependencies into a fresh venv that imports ``kraftwire`` and nothing named server, codec or audit."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        (source / name).write_bytes((ROOT / name).read_bytes())
    for folder in ("codec", "server", "audit", "schemas"):
        subprocess.run(["cp", "-r", str(ROOT / folder), str(source / folder)], check=True)
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(dist)],
                   check=True, timeout=600)
    (wheel,) = dist.glob("kraftwire-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist()}
    assert top == {"kraftwire", wheel.name.split("-py")[0] + ".dist-info"}

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300)
    site_packages, imported = subprocess.run(
        [str(python), "-I", "-c", "import kraftwire, sysconfig; print(sysconfig.get_paths()['purelib']); "
                                  "print(kraftwire.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert Path(imported) == Path(site_packages) / "kraftwire" / "__init__.py"
    installed = {path.name.removesuffix(".py") for path in Path(site_packages).iterdir()}
    assert "kraftwire" in installed
    assert installed & {"server", "codec", "audit", "schemas"} == set()
    found = subprocess.run([str(python), "-I", "-c", "import importlib.util as u; "
                            "print([n for n in ('server', 'codec', 'audit') if u.find_spec(n)])"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    assert found == "[]"
