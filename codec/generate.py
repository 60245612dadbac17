"""Writes the codec's generated modules from ``schemas/``, so that readers, grep and type checkers
find every class and constant by name.

    python -m kraftwire.codec.generate            # rewrite them in place (the codec's own folder)
    python -m kraftwire.codec.generate --out DIR  # write them into DIR (the freshness test compares)

The generated files are checked in; ``tests/wings/codec/test_codec_generated.py`` fails when they differ from what
this command writes.
"""
from __future__ import annotations

import argparse
import json
import textwrap
from importlib import resources
from pathlib import Path

from .schema import FieldSpec, MessageSpec, StructSpec, Versions, load_package, strip_comments

WIDTH = 110  # string literals
LINE_WIDTH = 120  # ruff's line length: fields and their comments
_TUPLE_ATTRIBUTES = frozenset(name for name in dir(tuple) if not name.startswith("_"))
PYTHON_TYPES = {"bool": "bool", "int8": "int", "int16": "int", "int32": "int", "int64": "int", "uint16": "int",
                "uint32": "int", "float64": "float", "string": "str", "bytes": "bytes", "records": "bytes",
                "uuid": "uuid.UUID"}


def _header(doc: str) -> list[str]:
    return ['"""' + doc, "", "Generated from ``schemas/`` by ``python -m kraftwire.codec.generate``; do not edit.",
            '"""']


def _string_lines(text: str, indent: str) -> list[str]:
    """A long string literal as adjacent literals, each line at most WIDTH wide."""
    chunks = textwrap.wrap(text, WIDTH - len(indent) - 3, drop_whitespace=False) or [""]
    return [indent + json.dumps(chunk, ensure_ascii=False) for chunk in chunks]


def error_codes_source() -> str:
    errors = json.loads(strip_comments(resources.files("kraftwire.schemas").joinpath("errors.json")
                                       .read_text(encoding="utf-8")))
    lines = _header("Kafka's error codes (``Errors`` in Kafka), each with Kafka's default message and whether\n"
                    "clients retry it.")
    lines += [
        "from __future__ import annotations",
        "",
        "from enum import IntEnum",
        "",
        "",
        "class ErrorCode(IntEnum):",
        '    """A Kafka error code; ``message`` is the text Kafka gives a code when a response carries no',
        '    ErrorMessage (None for NONE), ``retriable`` whether Kafka\'s clients retry the request."""',
        "",
        "    message: str | None",
        "    retriable: bool",
        "",
        "    # Called only as the members are made (a lookup, ``ErrorCode(3)``, finds the member): the defaults",
        "    # are there for type checkers, which read a lookup as a call of this.",
        "    def __new__(cls, code: int, message: str | None = None, retriable: bool = False) -> ErrorCode:",
        "        member = int.__new__(cls, code)",
        "        member._value_ = code",
        "        member.message = message",
        "        member.retriable = retriable",
        "        return member",
        "",
    ]
    for error in errors:
        message = "None" if error["message"] is None else json.dumps(error["message"], ensure_ascii=False)
        line = f"    {error['name']} = {error['code']}, {message}, {error['retriable']}"
        if len(line) <= WIDTH:
            lines.append(line)
            continue
        lines.append(f"    {error['name']} = (")
        lines.append(f"        {error['code']},")
        lines += _string_lines(error["message"], " " * 8)
        lines[-1] += ","
        lines.append(f"        {error['retriable']},")
        lines.append("    )")
    return "\n".join(lines) + "\n"


def _is_empty(versions: Versions) -> bool:
    return versions.high is not None and versions.low > versions.high


def _covers(outer: Versions, inner: Versions) -> bool:
    """Whether every version of ``inner`` is in ``outer``."""
    return outer.low <= inner.low and (outer.high is None or (inner.high is not None and inner.high <= outer.high))


def _annotation(f: FieldSpec, root: str) -> str:
    if f.struct is None:
        kind = PYTHON_TYPES[f.element_type]
    else:
        kind = root if f.struct.name == root else f"{root}.{f.struct.name}"
    if f.is_array:
        kind = f"tuple[{kind}, ...]"
    return kind if _is_empty(f.nullable) else f"{kind} | None"


def _field_lines(f: FieldSpec, struct: StructSpec, root: str, indent: str) -> list[str]:
    """A field's annotation with its versions, nullability and tag, and the schema's ``about`` text: after
    the annotation when the line stays within LINE_WIDTH, else as comment lines above it."""
    facts = []
    if not _covers(f.versions, struct.versions):
        facts.append(f"versions {f.versions}")
    if not _is_empty(f.nullable) and not _covers(f.nullable, f.versions):
        facts.append(f"nullable {f.nullable}")
    if not _is_empty(f.tagged):
        facts.append(f"tag {f.tag}")
    line = f"{indent}{f.attr}: {_annotation(f, root)}"
    comment = "; ".join(part for part in (", ".join(facts), f.about) if part)
    if f.attr in _TUPLE_ATTRIBUTES:
        # a field named like a method of tuple (``count``, ``index``), which every instance is underneath
        line += "  # type: ignore[assignment]"
        facts.insert(0, f"hides tuple.{f.attr}")
    elif comment and len(f"{line}  # {comment}") <= LINE_WIDTH:
        return [f"{line}  # {comment}"]
    above = [f"{indent}# {text}" for text in textwrap.wrap(f.about, LINE_WIDTH - len(indent) - 2)]
    return above + [line + (f"  # {', '.join(facts)}" if facts else "")]


def _root_doc(spec: MessageSpec) -> str:
    if spec.type in ("request", "response"):
        what = f"the {spec.type} of API key {spec.api_key}"
    elif spec.type == "metadata":
        what = f"metadata record type {spec.api_key}"
    elif spec.control_record_type is not None:
        what = f"control record type {spec.control_record_type}"
    else:
        what = f"a {spec.type} schema"
    flexible = "" if _is_empty(spec.flexible) else f", flexible {spec.flexible}"
    return f"{spec.name}: {what}; versions {spec.valid}{flexible}."


def _class_lines(name: str, base: str, doc: str, struct: StructSpec, root: str, indent: str) -> list[str]:
    lines = [f"{indent}class {name}({base}):", f'{indent}    """{doc}"""', "", f"{indent}    __slots__ = ()"]
    for f in struct.fields:
        lines += _field_lines(f, struct, root, indent + "    ")
    return lines


def classes_source(package: str, doc: str) -> str:
    """A module declaring one class per schema of ``package``, with its nested structs inside it."""
    specs = load_package(package)
    lines = _header(doc)
    lines += ["from __future__ import annotations", ""]
    if any(PYTHON_TYPES.get(f.element_type) == "uuid.UUID"
           for spec in specs.values() for struct in spec.structs.values() for f in struct.fields):
        lines += ["import uuid", ""]
    lines += ["from .message import Message, bind_message_classes",
              "from .model import Struct",
              "from .schema import load_package"]
    for spec in specs.values():
        lines += ["", ""]
        lines += _class_lines(spec.name, "Message", _root_doc(spec), spec.root, spec.name, "")
        for name, struct in spec.structs.items():
            if struct is not spec.root:
                lines.append("")
                lines += _class_lines(name, "Struct", f"{spec.name}.{name}: versions {struct.versions}.", struct,
                                      spec.name, "    ")
    lines += ["", "", f"ALL = bind_message_classes(globals(), load_package({package!r}))", "__all__ = ["]
    lines += [f'    "{name}",' for name in sorted(specs)]
    lines.append("]")
    return "\n".join(lines) + "\n"


def messages_source() -> str:
    return classes_source("kraftwire.schemas.messages", (
        "Every request, response and header schema in ``schemas/messages`` as a message class.\n\n"
        "``codec.messages.MetadataRequest`` and so on; see ``codec.message.Message`` for the methods. Each\n"
        "class lists its fields (across all versions) with their Python types; nested structs are classes\n"
        "inside it. The fields' accessors, defaults and codecs come from the schema at import."))


def record_types_source() -> str:
    return classes_source("kraftwire.schemas.records", (
        "Every metadata and control record schema in ``schemas/records`` as a message class.\n\n"
        "Use them as ``codec.records.TopicRecord`` and so on (``codec.records`` adds their framing and\n"
        "batches). Each class lists its fields (across all versions) with their Python types."))


GENERATED = {
    "error_codes.py": error_codes_source,
    "messages.py": messages_source,
    "record_types.py": record_types_source,
}


def write_all(out: Path) -> list[Path]:
    """Write every generated module into ``out``; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, source in GENERATED.items():
        path = out / name
        path.write_text(source(), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kraftwire.codec.generate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent,
                        help="the folder to write into (default: the codec package itself)")
    args = parser.parse_args(argv)
    for path in write_all(args.out):
        print(path)


if __name__ == "__main__":
    main()
