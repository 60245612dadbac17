"""CRC-32C (Castagnoli), the checksum of Kafka's v2 record batches, from the crc32c package's C extension.

The package's ``__init__`` looks its own version up with ``importlib.metadata`` (~25 ms of imports and
a scan of the installed distributions, at every process start); the extension module it wraps is
loaded here on its own. Should the package's layout ever differ, the package is imported as usual.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _load() -> Callable[..., int]:
    try:
        package = importlib.util.find_spec("crc32c")  # found, not imported
        if package is not None and package.submodule_search_locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                for location in package.submodule_search_locations:
                    path = Path(location) / f"_crc32c{suffix}"
                    if path.is_file():
                        spec = importlib.util.spec_from_file_location("crc32c._crc32c", path)
                        assert spec is not None and spec.loader is not None
                        module: Any = importlib.util.module_from_spec(spec)
                        spec.loader.exec_module(module)
                        function: Callable[..., int] = module.crc32c
                        return function
    except (ImportError, OSError, AttributeError):
        pass
    import crc32c as package_module

    fallback: Callable[..., int] = package_module.crc32c
    return fallback


crc32c = _load()
"""``crc32c(data, value=0)``: the CRC-32C of ``data`` (bytes-like), continuing from ``value``."""
