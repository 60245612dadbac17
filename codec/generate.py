"""Writes the codec's generated modules from ``schemas/``, so that readers, grep and type checkers
find every class and constant by name.

    python -m kraftwire.codec.generate            # rewrite them in place (the codec's own folder)
    python -m kraftwire.codec.generate --out DIR  # write them into DIR (the freshness test compares)

The generated files are checked in; ``tests/test_codec_generated.py`` fails when they differ from what
this command writes.
"""
from __future__ import annotations

import argparse
import json
import textwrap
from importlib import resources
from pathlib import Path

from .schema import strip_comments

WIDTH = 110


def _header(doc: str) -> list[str]:
    return ['"""' + doc, "", 'Generated from ``schemas/`` by ``python -m kraftwire.codec.generate``; do not edit.', '"""']


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
        "    def __new__(cls, code: int, message: str | None, retriable: bool):",
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


GENERATED = {
    "error_codes.py": error_codes_source,
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
