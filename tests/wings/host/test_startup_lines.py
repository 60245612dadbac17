"""What ``kraftwire serve`` says when its data directory cannot be used, or keeps a metadata.version other
than the one asked for: one line in words, not an errno's text, and nothing said when all is as asked."""
from __future__ import annotations

import pytest

from served import Served, serve_once

FLAGS = ("--brokers", "1", "--port", "0", "--controller-port", "0")


def problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if " INFO " not in line]


@pytest.mark.parametrize("data_dir, reason", [
    ("a-file", "the data directory a-file (--data-dir): it exists and is not a directory"),
    ("a-file/d", "the data directory a-file/d (--data-dir): a part of it is not a directory"),
])
def test_an_unusable_data_directory_is_one_line_in_words(tmp_path, data_dir, reason):
    (tmp_path / "a-file").write_text("not a directory\n")
    result = serve_once(tmp_path, *FLAGS, "--data-dir", data_dir)
    assert result.returncode == 1
    [line] = problems(result.stderr)
    assert line.endswith(f"CRITICAL kraftwire: cannot start: {reason}"), line
    assert "Errno" not in result.stderr


def test_a_metadata_version_the_log_does_not_hold_is_said_in_one_line(tmp_path):
    first = Served(tmp_path, *FLAGS, "--data-dir", "d", "--metadata-version", "4.0-IV0")
    assert "not applied" not in first.stop()
    again = Served(tmp_path, *FLAGS, "--data-dir", "d", "--metadata-version", "4.3-IV0")
    logged = again.stop()
    [line] = [line for line in logged.splitlines() if "not applied" in line]
    assert " WARNING " in line and line.endswith(
        "--metadata-version 4.3-IV0 not applied: the metadata log in d holds metadata.version 4.0-IV0, written at "
        "its first start (kafka-features upgrade/downgrade changes it)"), line
    for same in (("--metadata-version", "4.0-IV0"), ()):  # the level it holds, or no flag: nothing to say
        quiet = Served(tmp_path, *FLAGS, "--data-dir", "d", *same)
        assert "not applied" not in quiet.stop()
