"""Where ``kraftwire serve`` takes its settings from, and how it logs.

Every option of a subcommand can be given three ways; later ones win:

1. a TOML file: ``--config PATH``, else ``$KRAFTWIRE_CONFIG``, else ``./kraftwire.toml`` when it exists.
   Keys are the option names without the leading dashes (``data-dir = "/data"``; ``data_dir`` works too);
   an unknown key or a value of the wrong type is an error, not ignored;
2. environment variables ``KRAFTWIRE_<OPTION>`` (``KRAFTWIRE_DATA_DIR=/data``, ``KRAFTWIRE_BROKERS=5``);
3. command-line flags.

It works from the subcommand's argparse definition (each option's ``dest``, ``type`` and ``choices``),
so an option added to the parser is at once settable from the file and the environment, and is
listed in ``--help`` (``describe_sources``).

``--log-format json`` writes one JSON object per log line (time, level, logger, message, and the
exception's traceback when there is one), for log shippers. A warning or error repeated in a loop is
logged once per 10 s with the count held back (``RepeatLimiter``).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import textwrap
import time
import tomllib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path

ENV_PREFIX = "KRAFTWIRE_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"
DEFAULT_CONFIG_FILE = "kraftwire.toml"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_NOT_SETTINGS = {"help", "config"}


def _settings(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """dest -> action of every option that can come from the file or the environment."""
    return {a.dest: a for a in parser._actions if a.option_strings and a.dest not in _NOT_SETTINGS}


def env_name(dest: str) -> str:
    return ENV_PREFIX + dest.upper()


def _is_flag(action: argparse.Action) -> bool:
    return isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse.BooleanOptionalAction))


def _convert(action: argparse.Action, value: object, where: str) -> object:
    """A file or environment value as the flag would have parsed it; ValueError with ``where`` if bad."""
    if _is_flag(action):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError(f"{where}: expected true or false, got {value!r}")
    if isinstance(value, (dict, list)) or (isinstance(value, bool) and action.type is not None):
        raise ValueError(f"{where}: expected a single value, got {value!r}")
    kind = action.type or str
    if not callable(kind):  # (argparse.FileType is callable too)
        raise TypeError(f"{where}: option type {kind!r} is not a converter")
    if kind is str and not isinstance(value, str):
        raise ValueError(f"{where}: expected a string, got {value!r}")
    try:
        converted = value if kind is str else kind(str(value))
    except (TypeError, ValueError):
        raise ValueError(f"{where}: invalid {getattr(kind, '__name__', 'value')} {value!r}") from None
    if action.choices is not None and converted not in action.choices:
        raise ValueError(f"{where}: {converted!r} is not one of {', '.join(map(str, action.choices))}")
    return converted


def _config_path(argv: list[str], environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    """(the file to read, whether it was asked for explicitly)."""
    finder = argparse.ArgumentParser(add_help=False)
    finder.add_argument("--config")
    given = finder.parse_known_args(argv)[0].config or environ.get(CONFIG_ENV)
    if given:
        return Path(given), True
    default = Path(DEFAULT_CONFIG_FILE)
    return (default, False) if default.is_file() else (None, False)


def _from_file(path: Path, settings: dict[str, argparse.Action], ignore_unknown: bool) -> dict[str, object]:
    try:
        table = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read the config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from None
    values = {}
    for key, value in table.items():
        dest = key.replace("-", "_")
        action = settings.get(dest)
        if action is None:
            if ignore_unknown:
                continue
            known = ", ".join(sorted(d.replace("_", "-") for d in settings))
            raise ValueError(f"{path}: unknown setting {key!r} (known: {known})")
        values[dest] = _convert(action, value, f"{path}: {key}")
    return values


def _from_environment(environ: Mapping[str, str], settings: dict[str, argparse.Action]) -> dict[str, object]:
    return {dest: _convert(action, environ[env_name(dest)], env_name(dest))
            for dest, action in settings.items() if env_name(dest) in environ}


def apply_layers(parser: argparse.ArgumentParser, argv: list[str], environ: Mapping[str, str] = os.environ,
                 ignore_unknown: bool = False) -> None:
    """Make the config file's and the environment's values the parser's defaults, so that flags
    still override them. A bad setting ends the program with one line naming it and exit status 2,
    without the usage: that lists flags, not where the bad value came from (a container's log says why).
    ``ignore_unknown``: skip file keys this parser does not have (a file shared by subcommands)."""
    settings = _settings(parser)
    path, explicit = _config_path(argv, environ)
    try:
        values = {}
        if path is not None and (explicit or path.exists()):
            values.update(_from_file(path, settings, ignore_unknown))
        values.update(_from_environment(environ, settings))
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    parser.set_defaults(**values)


def describe_sources(parser: argparse.ArgumentParser) -> str:
    """The ``--help`` epilog: where settings come from, and every option's file key and variable."""
    lines = textwrap.wrap(f"Settings come from, in increasing precedence: the TOML file (--config PATH, "
                          f"${CONFIG_ENV}, or ./{DEFAULT_CONFIG_FILE} when present), environment variables, then "
                          f"flags. Every option can be set in each:", 79)
    lines += ["", f"  {'file key':<26} environment variable"]
    for dest in _settings(parser):
        lines.append(f"  {dest.replace('_', '-'):<26} {env_name(dest)}")
    return "\n".join(lines)


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH",
                        help=f"TOML file of settings (default: ${CONFIG_ENV}, else ./{DEFAULT_CONFIG_FILE} if present)")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


# --- logging --------------------------------------------------------------------------------------------

LOG_FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
                 "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


class RepeatLimiter(logging.Filter):
    """Lets one warning or error of a kind through per ``interval`` seconds: a refusal retried in a loop
    (a fetch refused every 50 ms) logs once, then once an interval with how many were held back, instead of
    a line per attempt. A kind is the logger, level and the message's text; CRITICAL and lower levels pass
    untouched. Remembers at most ``kinds`` kinds (the oldest forgotten first)."""

    def __init__(self, interval: float = 10.0, kinds: int = 1024, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.interval, self.kinds, self.clock = interval, kinds, clock
        self._last: OrderedDict[tuple[str, int, str], list] = OrderedDict()  # kind -> [time let through, held]

    def filter(self, record: logging.LogRecord) -> bool:
        if not logging.WARNING <= record.levelno < logging.CRITICAL:
            return True
        kind = (record.name, record.levelno, record.getMessage())
        now, seen = self.clock(), self._last.get(kind)
        if seen is not None and now - seen[0] < self.interval:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.msg, record.args = f"{record.getMessage()} (and {seen[1]} more times in {now - seen[0]:.0f} s)", None
        self._last[kind] = [now, 0]
        self._last.move_to_end(kind)
        while len(self._last) > self.kinds:
            self._last.popitem(last=False)
        return True


def configure_logging(level: str, log_format: str = "text") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json"
                         else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RepeatLimiter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
