"""Command-line options of the audit, shared by ``kraftwire audit`` and ``spark-submit audit/job.py``.

Only argparse here: ``kraftwire`` builds its parser from this without importing Spark or pyarrow."""
from __future__ import annotations

import argparse
from datetime import datetime, UTC
from importlib.util import find_spec

INSTALL_EXTRA = "pip install 'kraftwire[audit]'"

DEFAULT_SPLIT_MIB = 16


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dirs", nargs="+", metavar="LOG_DIR",
                   help="a __cluster_metadata-0 directory (or a data directory holding one), as a path or URI "
                        "(file://, hdfs://, s3a://, gs://); several directories are read as one log, e.g. an "
                        "archive of retired segments and the live directory")
    p.add_argument("--out", required=True, help="where the tables go (path or URI); earlier tables there are replaced")
    p.add_argument("--master", default=None,
                   help="Spark master (default: the one spark-submit was given, else local[*]); with a cluster "
                        "master LOG_DIR and --out must be storage every node shares (hdfs://, s3a://, file:// "
                        "on a shared mount)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", type=_setting,
                   help="extra Spark setting, e.g. spark.driver.memory=4g (repeatable)")
    p.add_argument("--executor-env", metavar="ARCHIVE",
                   help="a `kraftwire audit pack-env` archive (path or URI) that cluster executors unpack and "
                        "import pyarrow and crc32c from; without it they must have them installed")
    p.add_argument("--local", action="store_true",
                   help="replay in this one process without Spark (same tables)")
    p.add_argument("--from", dest="start", default=(None, None), metavar="OFFSET|TIME", type=parse_bound,
                   help="report from this offset, or time (ISO 8601, UTC unless it says otherwise)")
    p.add_argument("--to", dest="end", default=(None, None), metavar="OFFSET|TIME", type=parse_bound,
                   help="report up to this offset or time, inclusive (the replay still starts at the beginning)")
    p.add_argument("--html", action="store_true", help="also write OUT/report.html with plots")
    p.add_argument("--split-mib", type=float, default=DEFAULT_SPLIT_MIB,
                   help="cut segments into splits of about this many MiB at .index positions "
                        f"(default {DEFAULT_SPLIT_MIB})")
    p.add_argument("--partitions", type=int, default=None,
                   help="Spark partitions for the per-partition replay (default: max(splits, 4 x cores), "
                        "rounded up to a multiple of the cores)")


def _setting(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def parse_bound(text: str) -> tuple[int, bool]:
    """(value, is a time) for a --from/--to value: an integer is an offset, anything else an ISO time
    converted to epoch milliseconds."""
    if text.lstrip("-").isdigit():
        return int(text), False
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither an offset nor an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000), True


def window_bounds(args: argparse.Namespace) -> tuple[int | None, int | None, bool]:
    """(lo, hi, by time) from --from/--to; ValueError unless both are offsets or both times."""
    (lo, lo_time), (hi, hi_time) = args.start, args.end
    kinds = {k for k in (lo_time, hi_time) if k is not None}
    if len(kinds) > 1:
        raise ValueError("--from and --to must both be offsets or both be times")
    return lo, hi, bool(kinds and kinds.pop())


def missing_libraries(args: argparse.Namespace) -> list[str]:
    """The audit extra's libraries these options need that are not installed."""
    needed = ["pyarrow"] + ([] if args.local else ["pyspark"]) + (["matplotlib"] if args.html else [])
    return [name for name in needed if find_spec(name) is None]


def add_pack_env_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive", nargs="?", default="kraftwire_env.tar.gz",
                   help="the tar.gz to write (default kraftwire_env.tar.gz)")
    p.add_argument("--python-version", metavar="X.Y",
                   help="the executors' Python, when it differs from this one: pip fetches wheels built for it")
    p.add_argument("--platform", metavar="TAG",
                   help="the executors' platform tag, e.g. manylinux_2_28_x86_64 or manylinux_2_28_aarch64")
