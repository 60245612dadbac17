"""The compiled codec functions kept on disk (codec/code_cache.py): a second process loads what the first
compiled, a damaged file is compiled again, and the codec answers the same either way."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CODE = textwrap.dedent("""
    import json
    from kraftwire.codec.messages import MetadataRequest, MetadataResponse
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t")], allow_auto_topic_creation=False)
    data = request.encode(12)
    back = MetadataRequest.decode(data, 12)
    response = MetadataResponse.decode(MetadataResponse(cluster_id="c", controller_id=1).encode(12), 12)
    print(json.dumps([data.hex(), back == request, response.cluster_id]))
""")


def run(cache: Path | str | None, **env: str) -> list:
    environment = {k: v for k, v in os.environ.items() if k != "KRAFTWIRE_CODEC_CACHE"}
    environment.update(env)
    if cache is not None:
        environment["KRAFTWIRE_CODEC_CACHE"] = str(cache)
    answer = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, env=environment)
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout)


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    first = run(tmp_path)
    files = sorted(tmp_path.glob("*.code"))
    assert len(files) == 4  # MetadataRequest v12's encoder and decoder, MetadataResponse v12's
    stamps = {f: f.stat().st_mtime_ns for f in files}
    assert run(tmp_path) == first == [first[0], True, "c"]
    assert {f: f.stat().st_mtime_ns for f in sorted(tmp_path.glob("*.code"))} == stamps  # read, not rewritten


def test_a_damaged_file_is_compiled_again(tmp_path):
    first = run(tmp_path)
    assert len(list(tmp_path.glob("*.code"))) == 4
    for f in tmp_path.glob("*.code"):
        f.write_bytes(b"not marshal data")
    assert run(tmp_path) == first
    assert all(f.read_bytes() != b"not marshal data" for f in tmp_path.glob("*.code"))


def test_the_user_cache_directory_unless_off(tmp_path):
    assert run("off", XDG_CACHE_HOME=str(tmp_path))[1:] == [True, "c"]
    assert not list(tmp_path.iterdir())
    assert run(None, XDG_CACHE_HOME=str(tmp_path))[1:] == [True, "c"]
    assert len(list((tmp_path / "kraftwire" / "codecs").glob("*.code"))) == 4
