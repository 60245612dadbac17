"""pytest fixtures for an embedded kraftwire cluster, loaded by pytest through the ``pytest11`` entry point
``kraftwire`` (installing kraftwire is enough; ``-p no:kraftwire`` turns it off).

Each fixture yields the harness handle itself, so a test drives the cluster with the same methods as
any other code (``stop_broker``, ``set_bandwidth``, ``wait_for_reassignments``, ...):

* ``kraftwire_cluster``: a ``Cluster`` on the test's event loop, for async tests (pytest-asyncio);
* ``kraftwire_sync_cluster``: a ``BackgroundCluster`` (its own loop in a thread), for plain tests and
  synchronous clients;
* ``kraftwire_bootstrap``: ``host:port,...`` of the test's cluster (the async one when the test uses
  it, the sync one otherwise);
* ``kraftwire_session_cluster`` and ``kraftwire_sync_session_cluster``: one cluster shared by the whole
  run; async tests that use the former run on the session's loop
  (``@pytest.mark.asyncio(loop_scope="session")``);
* ``kraftwire_clean_cluster``: the sync session cluster, reset before the test (``Cluster.reset``: no
  topics, configs, ACLs or users but start-up's, same ids and ports), so every test starts on a fresh
  cluster for the milliseconds of a reset instead of a start; ``kraftwire_clean_session_cluster`` is
  the same over the async session cluster (session loop).

``@pytest.mark.kraftwire(brokers=4, log_dirs=2, speed=10, seed=7, ...)`` on a test, class or module
passes its keywords to ``Cluster`` for the function-scoped fixtures (the closest marker wins per
keyword). The session-scoped ones take theirs from the ``kraftwire_session_options`` fixture, which a
suite overrides in its conftest.py.

The cluster modules are imported on first use, so the plugin costs nothing in runs that do not use it.
"""
from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kraftwire.server.host.cluster import BackgroundCluster, Cluster

MARKER = "kraftwire"

try:
    import pytest_asyncio
    ASYNC_FIXTURES = True
except ImportError:  # the async fixtures need pytest-asyncio; the sync ones do not
    ASYNC_FIXTURES = False


# pytest-asyncio's own default when a suite sets none (it warns, on every run, that the default will
# become "function"); kraftwire's fixtures name their loop scopes themselves.
DEFAULT_FIXTURE_LOOP_SCOPE = "function"
_LOOP_SCOPE_INI = "asyncio_default_fixture_loop_scope"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if ASYNC_FIXTURES:
        _default_loop_scope(config)
    config.addinivalue_line(
        "markers", f"{MARKER}(**options): keywords for kraftwire.Cluster (brokers=4, log_dirs=2, speed=10, "
                   "seed=7, ...) used by this test's kraftwire_cluster / kraftwire_sync_cluster")


def _default_loop_scope(config: pytest.Config) -> None:
    """A suite that does not set ``asyncio_default_fixture_loop_scope`` gets "function", the value
    pytest-asyncio's warning says it will default to, before pytest-asyncio reads it (this hook runs
    first), so a suite using kraftwire's fixtures is not warned about a setting it never chose. The value
    is put in pytest's ini cache (``getini`` reads it first; there is no public setter)."""
    try:
        unset = not config.getini(_LOOP_SCOPE_INI)
    except ValueError:  # the asyncio plugin is off (-p no:asyncio): its option is not registered
        return
    if unset:
        config._inicache[_LOOP_SCOPE_INI] = DEFAULT_FIXTURE_LOOP_SCOPE


def marker_options(node: pytest.Item) -> dict[str, Any]:
    """The ``kraftwire`` marker keywords that apply to ``node``: module, then class, then function,
    each overriding the one before."""
    options: dict[str, Any] = {}
    for marker in reversed(list(node.iter_markers(MARKER))):
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keywords only (brokers=4, ...), "
                                    f"not {marker.args!r}")
        options.update(marker.kwargs)
    return options


@pytest.fixture
def kraftwire_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The Cluster keywords for this test's function-scoped cluster (from its markers)."""
    return marker_options(request.node)


@pytest.fixture(scope="session")
def kraftwire_session_options() -> dict[str, Any]:
    """The Cluster keywords of the session-scoped clusters; override it in conftest.py."""
    return {}


def _background_cluster(options: dict[str, Any]) -> BackgroundCluster:
    from kraftwire import BackgroundCluster

    return BackgroundCluster(**options)


@pytest.fixture
def kraftwire_sync_cluster(kraftwire_options: dict[str, Any]) -> Iterator[BackgroundCluster]:
    """A ``BackgroundCluster`` for this test, started before it and stopped after it."""
    with _background_cluster(kraftwire_options) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def kraftwire_sync_session_cluster(kraftwire_session_options: dict[str, Any]) -> Iterator[BackgroundCluster]:
    """One ``BackgroundCluster`` for the whole run."""
    with _background_cluster(kraftwire_session_options) as cluster:
        yield cluster


@pytest.fixture
def kraftwire_clean_cluster(kraftwire_sync_session_cluster: BackgroundCluster) -> BackgroundCluster:
    """The session's ``BackgroundCluster``, reset to its freshly started state before this test."""
    kraftwire_sync_session_cluster.reset()
    return kraftwire_sync_session_cluster


@pytest.fixture
def kraftwire_bootstrap(request: pytest.FixtureRequest) -> str:
    """The bootstrap servers of this test's cluster: ``kraftwire_cluster`` if the test uses it, else
    ``kraftwire_sync_cluster``."""
    name = next((n for n in ("kraftwire_cluster", "kraftwire_clean_cluster")
                 if n in request.fixturenames), "kraftwire_sync_cluster")
    bootstrap: str = request.getfixturevalue(name).bootstrap
    return bootstrap


if ASYNC_FIXTURES:
    async def _running_cluster(options: dict[str, Any]) -> AsyncIterator[Cluster]:
        from kraftwire import Cluster

        async with Cluster(**options) as cluster:
            yield cluster

    @pytest_asyncio.fixture
    async def kraftwire_cluster(kraftwire_options: dict[str, Any]) -> AsyncIterator[Cluster]:
        """A ``Cluster`` on the test's event loop, started before it and stopped after it."""
        async for cluster in _running_cluster(kraftwire_options):
            yield cluster

    @pytest_asyncio.fixture(scope="session", loop_scope="session")
    async def kraftwire_session_cluster(kraftwire_session_options: dict[str, Any]) -> AsyncIterator[Cluster]:
        """One ``Cluster`` for the whole run, on the session's event loop."""
        async for cluster in _running_cluster(kraftwire_session_options):
            yield cluster

    @pytest_asyncio.fixture(loop_scope="session")
    async def kraftwire_clean_session_cluster(kraftwire_session_cluster: Cluster) -> Cluster:
        """The session's ``Cluster``, reset to its freshly started state before this test (the test runs
        on the session's loop: ``@pytest.mark.asyncio(loop_scope="session")``)."""
        await kraftwire_session_cluster.reset()
        return kraftwire_session_cluster
else:
    NEEDS_PYTEST_ASYNCIO = ("{name} is an async fixture and needs pytest-asyncio, which is not installed: pip "
                            "install pytest-asyncio, or use kraftwire_sync_cluster / kraftwire_sync_session_cluster")

    @pytest.fixture
    def kraftwire_cluster() -> None:
        """Stands in for the async fixture without pytest-asyncio, to say so in one line."""
        pytest.fail(NEEDS_PYTEST_ASYNCIO.format(name="kraftwire_cluster"), pytrace=False)

    @pytest.fixture(scope="session")
    def kraftwire_session_cluster() -> None:
        """Stands in for the async session fixture without pytest-asyncio, to say so in one line."""
        pytest.fail(NEEDS_PYTEST_ASYNCIO.format(name="kraftwire_session_cluster"), pytrace=False)
