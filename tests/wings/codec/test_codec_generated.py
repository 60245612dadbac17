"""The codec's generated modules (error codes, message and record classes) are checked in so that
readers, grep and type checkers find every class by name; they must be exactly what the generator
writes from ``schemas/`` today."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from importlib import resources
from pathlib import Path

from kraftwire import codec
from kraftwire.codec import ErrorCode, messages, records
from kraftwire.codec.generate import GENERATED
from kraftwire.codec.schema import strip_comments

CODEC_DIR = Path(codec.__file__).parent


def test_checked_in_modules_are_what_the_generator_writes(tmp_path):
    done = subprocess.run([sys.executable, "-m", "kraftwire.codec.generate", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(GENERATED)
    stale = [name for name in GENERATED
             if (tmp_path / name).read_text(encoding="utf-8") != (CODEC_DIR / name).read_text(encoding="utf-8")]
    assert not stale, f"regenerate with: python -m kraftwire.codec.generate (stale: {', '.join(stale)})"


def test_every_schema_class_is_declared_by_name_in_its_module():
    for file_name, classes in (("messages.py", messages.ALL), ("record_types.py", records.ALL)):
        source = (CODEC_DIR / file_name).read_text(encoding="utf-8")
        for name, cls in classes.items():
            assert f"\nclass {name}(Message):" in source
            for nested in cls._classes:
                if nested != name:
                    assert f"\n    class {nested}(Struct):" in source
                    assert getattr(cls, nested).__qualname__ == f"{name}.{nested}"


def test_every_generated_field_carries_its_schema_about_text():
    """Each field's annotation, in the class of its struct, comes with the schema's ``about`` text: after it
    on the same line, or wrapped on the comment lines right above it; no line is over 120 columns."""
    for file_name, classes in (("messages.py", messages.ALL), ("record_types.py", records.ALL)):
        lines = (CODEC_DIR / file_name).read_text(encoding="utf-8").splitlines()
        assert max(map(len, lines)) <= 120
        for cls in classes.values():
            root = lines.index(f"class {cls.__name__}(Message):")
            for struct_name, struct_spec in cls.SPEC.structs.items():
                start = (root if struct_spec is cls.SPEC.root
                         else lines.index(f"    class {struct_name}(Struct):", root))
                for f in struct_spec.fields:
                    assert f.about, (cls.__name__, f.name)
                    at = next(i for i in range(start, len(lines))
                              if lines[i].lstrip().startswith(f"{f.attr}: "))
                    trailing = lines[at].partition("  # ")[2]
                    above = []
                    for line in reversed(lines[start:at]):
                        if not line.lstrip().startswith("# "):
                            break
                        above.insert(0, line.lstrip()[2:])
                    assert f.about in (trailing, trailing.partition("; ")[2], " ".join(above)), (
                        cls.__name__, struct_name, f.name)


def test_error_codes_are_kafkas_list():
    rows = json.loads(strip_comments(resources.files("kraftwire.schemas").joinpath("errors.json").read_text("utf-8")))
    assert [(row["code"], row["name"]) for row in rows] == [(int(code), code.name) for code in ErrorCode]
    assert ErrorCode(-1) is ErrorCode.UNKNOWN_SERVER_ERROR and ErrorCode.NONE.message is None
    assert ErrorCode.STALE_BROKER_EPOCH == 77 and ErrorCode.UNSUPPORTED_ENDPOINT_TYPE == 115
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER.retriable and not ErrorCode.INVALID_REPLICATION_FACTOR.retriable


def test_fixed_offset_finds_a_top_level_field_after_fixed_width_ones_only():
    """What a relay reads a response's error code with, checked against real encodings."""
    m = messages
    for cls, version in ((m.AlterPartitionReassignmentsResponse, 0), (m.AlterPartitionReassignmentsResponse, 1),
                         (m.ListPartitionReassignmentsResponse, 0), (m.DescribeQuorumResponse, 2)):
        body = cls(error_code=41, error_message="not the controller").encode(version)
        assert struct.unpack_from(">h", body, cls.fixed_offset("error_code", version))[0] == 41
    # after AllowReplicationFactorChange
    assert m.AlterPartitionReassignmentsResponse.fixed_offset("error_code", 1) == 5
    assert m.MetadataResponse.fixed_offset("error_code", 13) is None  # arrays come before it
