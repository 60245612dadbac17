"""The code archive a cluster audit ships to its executors (``audit.executors.code_zip``): the codec, the
audit, the schemas and ``kraftwire``'s own lazy ``__init__``, each file once and as its content (the strict
editable install lays the package out as links), nothing of the server; and an interpreter that has only
the archive for kraftwire imports the audit from it and replays a log as the installed package does."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

from kraftwire.audit import executors, local
from audit_logs import planted_log

SHIPPED = ("kraftwire/codec/", "kraftwire/audit/", "kraftwire/schemas/")


def test_the_archive_holds_codec_audit_and_schemas_once_each_as_file_contents(tmp_path):
    path = executors.code_zip(str(tmp_path))
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        names = [info.filename for info in infos]
        assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
        strays = [n for n in names if n != "kraftwire/__init__.py" and not n.startswith(SHIPPED)]
        assert not strays, strays
        assert not [n for n in names if n.startswith("kraftwire/server")]
        for module in ("codec/__init__.py", "codec/records.py", "codec/messages.py", "audit/__init__.py",
                       "audit/partition_replay.py", "audit/job.py", "schemas/__init__.py",
                       "schemas/messages/__init__.py", "schemas/records/PartitionRecord.json"):
            assert f"kraftwire/{module}" in names, module
        sources = executors.code_files()
        assert sorted(sources) == sorted(names)
        for info in infos:
            assert not stat.S_ISLNK(info.external_attr >> 16), info.filename
            with open(sources[info.filename], "rb") as f:
                assert z.read(info) == f.read(), info.filename


CHECK = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib, pkgutil
import kraftwire.audit
for module in pkgutil.iter_modules(kraftwire.audit.__path__):
    if module.name != "job":  # the driver's module: it imports pyspark, which executors do not have
        importlib.import_module("kraftwire.audit." + module.name)
from kraftwire.audit import local
result = local.run([sys.argv[2]], sys.argv[3])
ours = sorted(name for name in sys.modules if name == "kraftwire" or name.startswith("kraftwire."))
outside = [name for name in ours if not (sys.modules[name].__file__ or "").startswith(sys.argv[1])]
print(json.dumps({"modules": ours, "outside": outside, "violations": result.rows("violations")}, default=str))
"""


def test_an_interpreter_with_only_the_archive_imports_the_audit_from_it_and_replays(tmp_path):
    path = executors.code_zip(str(tmp_path))
    log = tmp_path / "log"
    planted_log(log)
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -S: no site-packages .pth files, so not the editable install; the libraries come from the parent's path
    libraries = os.pathsep.join(p for p in sys.path if "site-packages" in p and "__editable__" not in p)
    environment["PYTHONPATH"] = libraries
    done = subprocess.run([sys.executable, "-S", "-c", CHECK, path, str(log), str(tmp_path / "out")],
                          capture_output=True, text=True, env=environment, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["outside"] == []
    assert not [name for name in found["modules"] if name.startswith("kraftwire.server")]
    assert {"kraftwire.codec.records", "kraftwire.audit.partition_replay"} <= set(found["modules"])
    expected = local.run([str(log)], str(tmp_path / "installed")).rows("violations")
    assert found["violations"] == json.loads(json.dumps(expected, default=str))
    assert Path(path).stat().st_size > 0
