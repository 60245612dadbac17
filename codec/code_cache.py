"""Compiled codec functions kept on disk, so that a new process loads them instead of compiling them.

A message version's decoder or encoder is Python source emitted from its schema (``codec.structs``);
compiling that source was most of a cluster's start-up CPU (about 40 functions, 55 ms of ~120). The
code object of each source is kept as a ``marshal`` file named by the hash of the source itself and
of the interpreter's magic number, so a hit is the very code that compiling this source would give: a
changed schema or generator emits other source, hence another name. The source is still emitted (that
also rebuilds the constants it names); only ``compile`` is skipped.

The files live in ``$KRAFTWIRE_CODEC_CACHE`` or else ``$XDG_CACHE_HOME/kraftwire/codecs`` (by default
``~/.cache/kraftwire/codecs``); ``KRAFTWIRE_CODEC_CACHE=off`` turns the cache off. A file that cannot
be read, written or unmarshalled is compiled as if absent: the cache can only save time.
"""
from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
from pathlib import Path
from types import CodeType

_MAGIC = importlib.util.MAGIC_NUMBER
_directory: Path | None = None  # None: off (once looked up)
_looked_up = False


def cache_directory() -> Path | None:
    """Where the compiled functions are kept (None when the cache is off)."""
    global _directory, _looked_up
    if not _looked_up:
        _looked_up = True
        chosen = os.environ.get("KRAFTWIRE_CODEC_CACHE")
        if chosen == "off":
            _directory = None
        elif chosen:
            _directory = Path(chosen)
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            _directory = Path(base) / "kraftwire" / "codecs"
    return _directory


def compiled(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, from the cache when an earlier process compiled it."""
    directory = cache_directory()
    if directory is None:
        return compile(source, filename, "exec")
    digest = hashlib.sha256(_MAGIC + filename.encode() + b"\0" + source.encode()).hexdigest()
    path = directory / f"{digest[:40]}.code"
    try:
        code = marshal.loads(path.read_bytes())
        if isinstance(code, CodeType):
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(marshal.dumps(code))
        os.replace(partial, path)  # whole or absent: a reader never sees half a file
    except OSError:
        pass
    return code
