"""The pytest plugin, as a user meets it: a test file of theirs run by a fresh pytest process in which
nothing but the installed ``pytest11`` entry point brings the kraftwire fixtures."""
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = '''
from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

pytestmark = pytest.mark.kraftwire(brokers=2)


@pytest.mark.kraftwire(brokers=4, log_dirs=2)
def test_sync_cluster_takes_the_marker(kraftwire_sync_cluster, kraftwire_bootstrap):
    admin = KafkaAdminClient(bootstrap_servers=kraftwire_bootstrap)
    try:
        assert sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]) == [1, 2, 3, 4]
        admin.create_topics([NewTopic("orders", 3, 2)])
    finally:
        admin.close()
    assert all(len(b.log_dirs) == 2 for b in kraftwire_sync_cluster.cluster.brokers)


def test_module_marker_applies(kraftwire_sync_cluster):
    assert len(kraftwire_sync_cluster.cluster.brokers) == 2


@pytest.mark.asyncio
@pytest.mark.kraftwire(brokers=3)
async def test_async_cluster_is_the_harness(kraftwire_cluster, kraftwire_bootstrap):
    assert kraftwire_bootstrap == kraftwire_cluster.bootstrap
    await kraftwire_cluster.stop_broker(3)
    await kraftwire_cluster.wait_until(lambda image: image.brokers[3].fenced)


SEEN = set()


@pytest.mark.parametrize("round", [1, 2])
def test_sync_session_cluster_is_shared(kraftwire_sync_session_cluster, round):
    SEEN.add(id(kraftwire_sync_session_cluster))
    assert len(SEEN) == 1 and len(kraftwire_sync_session_cluster.cluster.brokers) == 1


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("round", [1, 2])
async def test_async_session_cluster_is_shared(kraftwire_session_cluster, round):
    SEEN.add(("async", id(kraftwire_session_cluster)))
    assert len([s for s in SEEN if isinstance(s, tuple)]) == 1
'''

CONFTEST = '''
from pathlib import Path

import pytest

@pytest.fixture(scope="session")
def kraftwire_session_options():
    return {"brokers": 1, "session_timeout_ms": 1000}
'''


def test_a_users_suite_runs_through_the_plugin(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=7)


def test_the_marker_takes_keywords_only(pytester):
    pytester.makepyfile(test_user='''
from pathlib import Path

import pytest

@pytest.mark.kraftwire(4)
def test_positional(kraftwire_sync_cluster):
    pass
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*takes keywords only*"])


@pytest.mark.kraftwire(brokers=2)
def test_this_suite_gets_the_fixtures_too(kraftwire_sync_cluster, kraftwire_bootstrap):
    assert kraftwire_bootstrap.count(",") == 1 == len(kraftwire_sync_cluster.cluster.brokers) - 1


def readme_block(heading: str, language: str) -> str:
    """The first ``language`` code block of the README after ``heading``."""
    text = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = text[text.index(heading):]
    start = section.index(f"```{language}\n") + len(language) + 4
    return section[start:section.index("```", start)]


def test_the_readme_example_runs_through_the_plugin(pytester):
    pytester.makepyfile(test_readme=readme_block("### The pytest plugin", "python"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)


def test_a_suite_without_a_loop_scope_setting_is_not_warned(pytester):
    """Outside this repository (no asyncio_default_fixture_loop_scope in the suite's config) pytest-asyncio
    would warn on every run that the setting is unset; the plugin gives it pytest-asyncio's coming default."""
    pytester.makepyfile(test_readme=readme_block("### The pytest plugin", "python"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)
    assert "asyncio_default_fixture_loop_scope" not in result.stdout.str() + result.stderr.str()


def test_the_async_fixtures_without_pytest_asyncio_say_so_in_one_line(pytester, monkeypatch):
    """pytest-asyncio absent (its import fails, its plugin off): the async fixtures are still known and
    fail with a line saying what to install, not "fixture 'kraftwire_cluster' not found"."""
    blocked = pytester.mkdir("blocked")
    (blocked / "pytest_asyncio").mkdir()
    (blocked / "pytest_asyncio" / "__init__.py").write_text('raise ImportError("not installed, for this test")\n')
    monkeypatch.setenv("PYTHONPATH", f"{blocked}:{__import__('os').environ.get('PYTHONPATH', '')}")
    pytester.makepyfile(test_user='''
def test_async(kraftwire_cluster):
    pass


def test_async_session(kraftwire_session_cluster):
    pass


def test_sync(kraftwire_sync_cluster):
    assert kraftwire_sync_cluster.bootstrap
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:asyncio", "-q")
    result.assert_outcomes(passed=1, errors=2)
    output = result.stdout.str()
    assert "not found" not in output
    result.stdout.fnmatch_lines(["*kraftwire_cluster is an async fixture and needs pytest-asyncio*pip install "
                                 "pytest-asyncio*", "*kraftwire_session_cluster is an async fixture*"])
