"""The control plane over HTTP (``--control-port``) and the live view in the browser.

The operations are the ``Cluster`` methods of the same names (``stop_broker``, ``fence_broker``,
``inject_error``, ...); this module maps them to JSON endpoints, all answering JSON:

    GET  /api/state                          everything the live view shows
    GET  /api/brokers                        every broker: running, fenced, directories
    GET  /api/brokers/{id}
    POST /api/brokers/{id}/stop              as if the process died (fenced after the session timeout)
    POST /api/brokers/{id}/start             registers again with a new incarnation
    POST /api/brokers/{id}/fence             the broker asks to be fenced (WantFence) until unfenced
    POST /api/brokers/{id}/unfence
    PUT  /api/brokers/{id}/bandwidth         {"bytes_per_second": 1048576, or null for the default}
    PUT  /api/brokers/{id}/log-dirs/{dir}/capacity  {"bytes": 500000000000}: its simulated capacity (a full
                                             one goes offline; raise it, then restore the directory)
    PUT  /api/topics/{topic}/ingress         {"bytes_per_second": 1048576 (each partition's produce rate, null: 0),
                                             "partitions": {"0": 2097152}} (per-partition overrides)
    POST /api/brokers/{id}/replication/pause   no bytes move to or from its replicas (leading, following,
                                               or moving between its log directories) until resumed
    POST /api/brokers/{id}/replication/resume  they go on from where they stood
    POST /api/brokers/{id}/log-dirs/{dir}/fail     a log directory (its index from 0, or its id) fails:
                                                   leadership and ISR move off its replicas
    POST /api/brokers/{id}/log-dirs/{dir}/restore  it works again; the broker re-registers with it
    GET  /api/errors                         injected errors still armed
    POST /api/errors                         {"api_key": 19 or "CreateTopics", "error_code": 41,
                                              "count": 1, "topic": null, "partition": null}
    DELETE /api/errors                       disarm them all
    POST /api/reassignments/wait             {"timeout": 30}: returns once no partition is reassigning
    PUT  /api/speed                          {"speed": 50}: simulated replication runs that many times
                                             faster than real time from now on (progress goes on, no jump)
    POST /api/clock/advance                  {"seconds": 5}: with a virtual clock (``--virtual-clock``), move
                                             simulated time on and answer once the cluster is at rest;
                                             {"until": "reassignments-done"} moves it until none is left
    GET  /api/controllers                    every controller: running, paused, Raft role, epoch, leader,
                                             offsets, and which one is active
    POST /api/controllers/{id}/stop          a graceful shutdown (an active controller resigns first)
    POST /api/controllers/{id}/kill          as kill -9: what it had not fsync'd is lost
    POST /api/controllers/{id}/start         starts a stopped controller again from its data directory
    POST /api/controllers/{id}/pause         freezes it (as SIGSTOP) until resumed
    POST /api/controllers/{id}/resume
    POST /api/controllers/add                starts a new controller (the next id) that follows the log as an
                                             observer until made a voter
    POST /api/controllers/{id}/vote          AddRaftVoter: a caught-up observer becomes a voter (KIP-853)
    POST /api/controllers/{id}/remove        RemoveRaftVoter, then stops it; a refused change is HTTP 400
                                             with Kafka's error name
    POST /api/controllers/resign             {"timeout": 10}: the active controller hands over (EndQuorumEpoch);
                                             answers {"resigned", "active"} once a controller is active in
                                             a later epoch (the resigned one may win it, as in Kafka)
    POST /api/links/cut                      {"a": 3000, "b": 3001}: every message between the two nodes
                                             (controllers or brokers) is lost until healed
    POST /api/links/heal                     {"a": 3000, "b": 3001}
    POST /api/reset                          {"timeout": 10}: back to the freshly started state (no topics,
                                             configs, ACLs or users but start-up's; same ids and ports),
                                             answered with what went (``Cluster.reset``)

Every call but GET needs ``Authorization: Bearer <token>`` (the cluster's ``control_token``), and
Host and Origin must name the bound address (server/host/http_guard.py): 401 and 403 otherwise.
Bad requests get a 4xx and ``{"error": "..."}``: an unknown broker 404, a body that is not JSON or a
bad value 400, an unknown endpoint 404, a wrong method 405; a wait that times out 504.

``GET /`` is the read-only live view: brokers, directories, reassignments, throttles, topics and the
latest metadata records, rendered on the server. A few lines of JavaScript re-fetch the same rendering
(``GET /view``) every half second and swap it in, so there is one renderer and no build step;
``/api/state`` carries the same facts as JSON for programs.
"""
from __future__ import annotations

import html
import inspect
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from kraftwire import codec
from kraftwire.codec import ErrorCode, KafkaError
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.message import Message
from kraftwire.server.broker.metadata_follower import MetadataReplica
from kraftwire.server.broker.node import BrokerNode
from kraftwire.server.metadata import configs
from kraftwire.server.metadata.image import MetadataImage, PartitionState
from kraftwire.server.metadata.redaction import redact_fields
from .http_guard import RequestGuard
from .httpd import Handler as HttpHandler
from .httpd import HttpError, HttpServer, Request, Response
from .metrics import api_name, under_replicated_partition

if TYPE_CHECKING:
    from .cluster import Cluster

RECENT_RECORDS = 40
REFRESH_MS = 500
DEFAULT_WAIT_SECONDS = 30.0
DEFAULT_RESET_SECONDS = 10.0
THROTTLE_CONFIGS = (configs.LEADER_THROTTLED_RATE, configs.FOLLOWER_THROTTLED_RATE,
                    configs.LEADER_THROTTLED_REPLICAS, configs.FOLLOWER_THROTTLED_REPLICAS,
                    configs.REPLICATION_BANDWIDTH)
_RESOURCE_NAMES: dict[int, str] = {ConfigResourceType.TOPIC: "topic", ConfigResourceType.BROKER: "broker"}


class RecentRecords:
    """The last committed metadata records, newest first, for the live view."""

    def __init__(self, metadata: MetadataReplica, keep: int = RECENT_RECORDS):
        """``metadata``: the cluster's MetadataView, which hands each committed record on once."""
        self._records: deque[tuple[int, float, Message]] = deque(maxlen=keep)
        metadata.subscribe(self._on_commit)

    def _on_commit(self, committed: Iterable[tuple[int, Message]]) -> None:
        now = time.time()
        self._records.extend((offset, now, record) for offset, record in committed)

    def to_list(self) -> list[dict[str, Any]]:
        """Each record as the control plane shows it: secrets redacted (``metadata.redaction``)."""
        return [{"offset": offset, "time": at, "type": type(record).__name__,
                 "fields": redact_fields(record, record.to_dict())}
                for offset, at, record in reversed(self._records)]


# --- state ----------------------------------------------------------------------------------------------


def describe_broker(cluster: Cluster, node: BrokerNode) -> dict[str, Any]:
    registration = cluster.controller.committed.brokers.get(node.broker_id)
    return {
        "id": node.broker_id, "host": node.host, "port": node.port, "rack": node.rack,
        "running": node.running, "registered": registration is not None,
        "fenced": registration is None or registration.fenced,
        "in_controlled_shutdown": registration is not None and registration.in_controlled_shutdown,
        "want_fence": node.want_fence, "epoch": registration.epoch if registration else None,
        "replication_paused": cluster.network.is_paused(node.broker_id),
        "directories": [{"id": str(d.directory_id), "path": d.path,
                         "online": registration is not None and registration.has_online_dir(d.directory_id)}
                        for d in node.log_manager.directories],
    }


def _throttles(image: MetadataImage) -> list[dict[str, Any]]:
    return [{"resource": _RESOURCE_NAMES.get(kind, str(kind)), "name": name or "(cluster default)",
             "config": key, "value": value}
            for (kind, name), values in sorted(image.configs.items())
            for key, value in sorted(values.items()) if key in THROTTLE_CONFIGS]


def _reassignments(cluster: Cluster) -> list[dict]:
    """Ongoing reassignments with their data movement; ``seconds_left`` is wall-clock time until the
    slowest copy is done at the current rates and simulation speed (None while a copy stands still);
    ``never`` says why a move never completes (a copy whose rate is not above its partition's ingress)."""
    image = cluster.controller.committed
    speed = cluster.network.speed
    listed = []
    for (topic, partition), progress in sorted(cluster.reassignment_progress().items()):
        simulated = progress["seconds_left"]
        listed.append({"topic": topic, "partition": partition,
                       "replicas": list(_partition(image, topic, partition).replicas), **progress,
                       "seconds_left": None if simulated is None else simulated / speed})
    return listed


def _partition(image: MetadataImage, topic: str, partition: int) -> PartitionState:
    """A partition the image holds (one ``reassignment_progress`` read from it)."""
    state = image.topic(topic)
    if state is None:
        raise KeyError(f"no topic {topic}")
    return state.partitions[partition]


def _clock(cluster: Cluster) -> dict:
    """The simulated clock: virtual (moved by the test) or following the wall clock, and its reading."""
    return {"virtual": cluster.network.virtual_clock, "seconds": cluster.network.now()}


def cluster_state(cluster: Cluster) -> dict:
    image = cluster.controller.committed
    topics = []
    for topic in sorted(image.topics.values(), key=lambda t: t.name):
        partitions = [{"partition": index, "leader": state.leader, "leader_epoch": state.leader_epoch,
                       "replicas": list(state.replicas), "isr": list(state.isr),
                       "adding": list(state.adding), "removing": list(state.removing),
                       "directories": [str(d) for d in state.directories],
                       "under_replicated": under_replicated_partition(state)}
                      for index, state in sorted(topic.partitions.items())]
        topics.append({"name": topic.name, "id": str(topic.topic_id), "partitions": partitions})
    return {
        "cluster_id": cluster.controller.cluster_id,
        "controller": {"id": cluster.controller.node_id, "host": cluster.controller_node.host,
                       "port": cluster.controller_node.port},
        "controllers": cluster.list_controllers(),
        "metadata": {"image_offset": image.offset, "end_offset": cluster.log.end_offset,
                     "high_watermark": cluster.log.high_watermark},
        "brokers": cluster.list_brokers(),
        "topics": topics,
        "speed": cluster.network.speed,
        "clock": _clock(cluster),
        "seed": cluster.seed,
        "reassignments": _reassignments(cluster),
        "catching_up": [c for c in cluster.network.progress() if c["bytes_left"] > 0],
        "throughput": cluster.network.throughput(),
        "throttles": _throttles(image),
        "injected_errors": [rule.to_dict() for rule in cluster.faults.armed],
        "recent_records": cluster.recent_records.to_list(),
    }


# --- HTTP endpoints -------------------------------------------------------------------------------------


class ControlPlane:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def http_server(self, host: str, port: int, token: str) -> HttpServer:
        return HttpServer("control", host, port, guard=RequestGuard(host, port, token), routes={
            ("GET", "/"): self.page,
            ("GET", "/view"): self.view,
            ("GET", "/api/state"): self.state,
            ("GET", "/api/brokers"): self.brokers,
            ("GET", "/api/brokers/{broker_id}"): self.one_broker,
            ("POST", "/api/brokers/{broker_id}/stop"): self._broker_action(self.cluster.stop_broker),
            ("POST", "/api/brokers/{broker_id}/start"): self._broker_action(self.cluster.start_broker),
            ("POST", "/api/brokers/{broker_id}/fence"): self._broker_action(self.cluster.fence_broker),
            ("POST", "/api/brokers/{broker_id}/unfence"): self._broker_action(self.cluster.unfence_broker),
            ("PUT", "/api/brokers/{broker_id}/bandwidth"): self.set_bandwidth,
            ("PUT", "/api/topics/{topic}/ingress"): self.set_ingress,
            ("PUT", "/api/brokers/{broker_id}/log-dirs/{directory}/capacity"): self.set_log_dir_capacity,
            ("POST", "/api/brokers/{broker_id}/replication/pause"):
                self._broker_action(self.cluster.pause_replication),
            ("POST", "/api/brokers/{broker_id}/replication/resume"):
                self._broker_action(self.cluster.resume_replication),
            ("POST", "/api/brokers/{broker_id}/log-dirs/{directory}/fail"):
                self._log_dir_action(self.cluster.fail_log_dir),
            ("POST", "/api/brokers/{broker_id}/log-dirs/{directory}/restore"):
                self._log_dir_action(self.cluster.restore_log_dir),
            ("GET", "/api/errors"): self.injected_errors,
            ("POST", "/api/errors"): self.inject_error,
            ("DELETE", "/api/errors"): self.clear_errors,
            ("POST", "/api/reassignments/wait"): self.wait_for_reassignments,
            ("PUT", "/api/speed"): self.set_speed,
            ("POST", "/api/clock/advance"): self.advance_clock,
            ("GET", "/api/controllers"): self.controllers,
            ("POST", "/api/controllers/resign"): self.resign_controller,
            ("POST", "/api/controllers/add"): self.add_controller,
            **{("POST", f"/api/controllers/{{controller_id}}/{name}"): self._controller_action(action)
               for name, action in (("stop", self.cluster.stop_controller), ("kill", self.cluster.kill_controller),
                                    ("start", self.cluster.start_controller),
                                    ("pause", self.cluster.pause_controller),
                                    ("resume", self.cluster.resume_controller),
                                    ("vote", self.cluster.add_voter), ("remove", self.cluster.remove_controller))},
            ("POST", "/api/links/cut"): self._link_action(self.cluster.cut_link),
            ("POST", "/api/links/heal"): self._link_action(self.cluster.heal_link),
            ("POST", "/api/reset"): self.reset,
        })

    def _broker_id(self, text: str) -> int:
        try:
            broker_id = int(text)
            self.cluster.broker(broker_id)
        except (ValueError, KeyError):
            raise HttpError(404, f"no broker {text}") from None
        return broker_id

    def _broker_answer(self, broker_id: int) -> Response:
        return Response.json(describe_broker(self.cluster, self.cluster.broker(broker_id)))

    def page(self, request: Request) -> Response:
        return Response.html(render_page(cluster_state(self.cluster)))

    def view(self, request: Request) -> Response:
        return Response.html(render_view(cluster_state(self.cluster)))

    def state(self, request: Request) -> Response:
        return Response.json(cluster_state(self.cluster))

    def brokers(self, request: Request) -> Response:
        return Response.json(self.cluster.list_brokers())

    def one_broker(self, request: Request, broker_id: str) -> Response:
        return self._broker_answer(self._broker_id(broker_id))

    def _broker_action(self, action: Callable[[int], Awaitable[object]]) -> HttpHandler:
        """An endpoint running ``action(broker id)`` and answering with the broker as it is then."""
        async def handle(request: Request, broker_id: str) -> Response:
            broker = self._broker_id(broker_id)
            await action(broker)
            return self._broker_answer(broker)
        return handle

    def controllers(self, request: Request) -> Response:
        return Response.json(self.cluster.list_controllers())

    def _controller_action(self, action: Callable[[int], object]) -> HttpHandler:
        """An endpoint running ``action(controller id)`` and answering with every controller as they are then."""
        async def handle(request: Request, controller_id: str) -> Response:
            node_id = int(controller_id) if controller_id.isdigit() else None
            if node_id is None or node_id not in self.cluster.controller_ids:
                raise HttpError(404, f"no controller {controller_id}")
            try:
                answer = action(node_id)
                if inspect.isawaitable(answer):
                    await answer
            except KafkaError as exc:  # a voter change refused: Kafka's code and message
                raise HttpError(400, f"{exc.code.name}: {exc.message or exc.code.message}") from None
            return Response.json(self.cluster.list_controllers())
        return handle

    async def add_controller(self, request: Request) -> Response:
        node_id = await self.cluster.add_controller()
        return Response.json({"added": node_id, "controllers": self.cluster.list_controllers()})

    async def resign_controller(self, request: Request) -> Response:
        timeout = request.json().get("timeout", DEFAULT_WAIT_SECONDS)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise HttpError(400, "timeout must be a positive number of seconds")
        try:
            resigned, active = await self.cluster.resign_controller(timeout)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        except TimeoutError as exc:
            raise HttpError(504, str(exc)) from None
        return Response.json({"resigned": resigned, "active": active})

    def _link_action(self, action: Callable[[int, int], None]) -> HttpHandler:
        def handle(request: Request) -> Response:
            body = request.json()
            a, b = body.get("a"), body.get("b")
            if not (isinstance(a, int) and isinstance(b, int)) or isinstance(a, bool) or isinstance(b, bool):
                raise HttpError(400, "a and b must be node ids")
            try:
                action(a, b)
            except KeyError as exc:
                raise HttpError(404, exc.args[0]) from None
            except ValueError as exc:
                raise HttpError(400, str(exc)) from None
            return Response.json({"cut": sorted(sorted(link) for link in self.cluster.links.cut)})
        return handle

    def _log_dir_action(self, action: Callable[[int, int | str], Awaitable[None]]) -> HttpHandler:
        """An endpoint running ``action(broker id, directory)`` and answering with the broker as it is then."""
        async def handle(request: Request, broker_id: str, directory: str) -> Response:
            broker = self._broker_id(broker_id)
            try:
                await action(broker, int(directory) if directory.isdigit() else directory)
            except (KeyError, IndexError):
                raise HttpError(404, f"broker {broker} has no log directory {directory}") from None
            except TimeoutError:
                raise HttpError(504, f"the controller has not seen log directory {directory} change yet") from None
            return self._broker_answer(broker)
        return handle

    async def set_bandwidth(self, request: Request, broker_id: str) -> Response:
        broker = self._broker_id(broker_id)
        try:
            await self.cluster.set_bandwidth(broker, request.json().get("bytes_per_second"))
        except KafkaError as exc:
            raise HttpError(400, exc.message or exc.code.message or exc.code.name) from None
        return self._broker_answer(broker)

    async def set_log_dir_capacity(self, request: Request, broker_id: str, directory: str) -> Response:
        broker = self._broker_id(broker_id)
        capacity: Any = request.json().get("bytes")  # any JSON value: set_capacity refuses all but bytes
        try:
            await self.cluster.set_log_dir_capacity(broker, int(directory) if directory.isdigit() else directory,
                                                    capacity)
        except (KeyError, IndexError):
            raise HttpError(404, f"broker {broker} has no log directory {directory}") from None
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        return self._broker_answer(broker)

    async def set_ingress(self, request: Request, topic: str) -> Response:
        body = request.json()
        try:
            listed = {int(p): r for p, r in (body.get("partitions") or {}).items()}
        except ValueError:
            raise HttpError(400, "partitions are named by their index") from None
        try:
            await self.cluster.set_ingress(topic, body.get("bytes_per_second"), listed)
        except KafkaError as exc:
            raise HttpError(404 if exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else 400,
                            exc.message or exc.code.message or exc.code.name) from None
        return Response.json({"topic": topic, "bytes_per_second": body.get("bytes_per_second"),
                              "partitions": {str(p): r for p, r in listed.items()}})

    async def set_speed(self, request: Request) -> Response:
        try:
            speed: Any = request.json().get("speed")  # any JSON value: set_speed refuses all but a positive number
            await self.cluster.set_speed(speed)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        return Response.json({"speed": self.cluster.network.speed})

    async def advance_clock(self, request: Request) -> Response:
        body = request.json()
        if not self.cluster.network.virtual_clock:
            raise HttpError(409, "this cluster's clock is not virtual (kraftwire serve --virtual-clock)")
        try:
            if body.get("until") == "reassignments-done":
                await self.cluster.run_until_reassignments_done()
            elif "until" in body:
                raise HttpError(400, 'until must be "reassignments-done"')
            else:
                seconds: Any = body.get("seconds")  # any JSON value: advance refuses all but a number of at least 0
                await self.cluster.advance(seconds)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        except RuntimeError as exc:  # a reassignment that cannot finish
            raise HttpError(409, str(exc)) from None
        except TimeoutError as exc:
            raise HttpError(504, str(exc)) from None
        return Response.json({"clock": _clock(self.cluster)})

    def injected_errors(self, request: Request) -> Response:
        return Response.json([rule.to_dict() for rule in self.cluster.faults.armed])

    def inject_error(self, request: Request) -> Response:
        body = request.json()
        api_key = body.get("api_key")
        if isinstance(api_key, str):
            api_key = _API_KEYS_BY_NAME.get(api_key, api_key)
        topic = body.get("topic")
        fields = {"api_key": api_key, "error_code": body.get("error_code"), "count": body.get("count", 1),
                  "partition": body.get("partition")}
        for name, value in fields.items():
            if (value is not None or name != "partition") and (not isinstance(value, int) or isinstance(value, bool)):
                raise HttpError(400, f"{name} must be an integer" + (" or an API name" if name == "api_key" else ""))
        if topic is not None and not isinstance(topic, str):
            raise HttpError(400, "topic must be a string")
        try:
            rule = self.cluster.inject_error(fields["api_key"], fields["error_code"], fields["count"],
                                             topic=topic, partition=fields["partition"])
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        return Response.json(rule.to_dict(), 201)

    def clear_errors(self, request: Request) -> Response:
        self.cluster.faults.clear()
        return Response.json([])

    async def wait_for_reassignments(self, request: Request) -> Response:
        timeout = request.json().get("timeout", DEFAULT_WAIT_SECONDS)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < 0:
            raise HttpError(400, "timeout must be a non-negative number of seconds")
        try:
            await self.cluster.wait_for_reassignments(timeout)
        except TimeoutError:
            raise HttpError(504, f"reassignments still ongoing after {timeout} s") from None
        return Response.json({"ongoing": 0})


    async def reset(self, request: Request) -> Response:
        timeout = request.json().get("timeout", DEFAULT_RESET_SECONDS)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise HttpError(400, "timeout must be a positive number of seconds")
        try:
            removed = await self.cluster.reset(timeout)
        except TimeoutError:
            raise HttpError(504, f"the cluster was not reset within {timeout} s") from None
        return Response.json({"reset": removed})


_API_KEYS_BY_NAME = {api_name(key): key for key in codec.api_keys()}


# --- the live view --------------------------------------------------------------------------------------

_STYLE = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.4em; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; border-bottom: 1px solid #ddd; text-align: left; }
.fenced, .offline, .paused { color: #b00; } .ok { color: #070; } .muted { color: #777; }
code { font-size: 12px; }
figure.chart { display: inline-block; margin: 0 12px 6px 0; } figcaption, .axis { font-size: 12px; color: #555; }
.axis { display: flex; justify-content: space-between; width: 260px; } table + table { margin-top: 1em; }
"""

_SCRIPT = f"""
setInterval(async () => {{
  try {{
    const answer = await fetch('/view', {{cache: 'no-store'}});
    if (answer.ok) document.getElementById('view').innerHTML = await answer.text();
  }} catch (e) {{ /* the cluster may be restarting: try again next time */ }}
}}, {REFRESH_MS});
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _ids(values: Iterable[object]) -> str:
    return ",".join(str(v) for v in values) or "-"


def _table(headers: list[str], rows: list[str], table_id: str) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    return f'<table id="{table_id}"><tr>{head}</tr>{"".join(rows)}</table>'


def _broker_rows(brokers: list[dict]) -> list[str]:
    rows = []
    for b in brokers:
        status = ("stopped" if not b["running"] else "fenced" if b["fenced"] else "unfenced")
        status_class = "ok" if status == "unfenced" else "fenced"
        dirs = "<br>".join(f'<code class="{"ok" if d["online"] else "offline"}">{_e(d["id"])}'
                           f'{"" if d["online"] else " (offline)"}</code> <span class="muted">{_e(d["path"])}</span>'
                           for d in b["directories"])
        replication = '<td class="paused">paused</td>' if b["replication_paused"] else '<td class="ok">on</td>'
        rows.append(f'<tr data-broker="{b["id"]}"><td>{b["id"]}</td><td>{_e(b["host"])}:{b["port"]}</td>'
                    f'<td>{_e(b["rack"] or "-")}</td><td class="{status_class}">{status}</td>{replication}'
                    f'<td>{_e(b["epoch"] if b["epoch"] is not None else "-")}</td><td>{dirs}</td></tr>')
    return rows


def render_view(state: dict[str, Any]) -> str:
    """The live view's content (everything but the page's shell)."""
    parts = [f'<p>cluster <code>{_e(state["cluster_id"])}</code>, controller {state["controller"]["id"]} at '
             f'{_e(state["controller"]["host"])}:{state["controller"]["port"]}; metadata offset '
             f'{state["metadata"]["image_offset"]} (high watermark {state["metadata"]["high_watermark"]})</p>',
             "<h2>Brokers</h2>",
             _table(["id", "address", "rack", "state", "replication", "epoch", "directories"],
                    _broker_rows(state["brokers"]), "brokers")]

    parts.append("<h2>Replication throughput</h2>")
    parts.append(_throughput_charts(state["throughput"], [b["id"] for b in state["brokers"]]))
    parts += _reassignments_section(state)
    parts += _throttles_section(state["throttles"])
    parts += _topics_section(state["topics"])
    parts += _injected_errors_section(state["injected_errors"])

    parts.append("<h2>Recent metadata records</h2>")
    parts.append(_table(["offset", "time", "record", "fields"], [
        f'<tr><td>{r["offset"]}</td><td>{time.strftime("%H:%M:%S", time.localtime(r["time"]))}</td>'
        f'<td>{_e(r["type"])}</td><td><code>{_e(_brief(r["fields"]))}</code></td></tr>'
        for r in state["recent_records"]], "records"))
    return "\n".join(parts)


def _reassignments_section(state: dict[str, Any]) -> list[str]:
    """The reassignments in progress, and the followers catching up outside any."""
    clock = "virtual clock" if state["clock"]["virtual"] else f'simulation speed x{state["speed"]:g}'
    parts = [f'<h2>Reassignments</h2><p class="muted">{clock}</p>']
    if state["reassignments"]:
        parts.append(_table(["topic", "partition", "replicas", "adding", "removing", "progress", "moved", "left",
                             "rate", "time left", "copies"], [_reassignment_row(r) for r in state["reassignments"]],
                            "reassignments"))
    else:
        parts.append('<p class="muted" id="reassignments">none in progress</p>')

    reassigning = {(r["topic"], r["partition"], b) for r in state["reassignments"] for b in r["adding"]}
    catching_up = [c for c in state["catching_up"] if (c["topic"], c["partition"], c["follower"]) not in reassigning]
    if catching_up:  # followers copying what a bigger partition size added on their leader
        parts.append("<h2>Followers catching up</h2>")
        parts.append(_table(["topic", "partition", "copy", "moved", "left", "rate"], [
            f'<tr data-catch-up="{_e(c["topic"])}-{c["partition"]}-{c["follower"]}"><td>{_e(c["topic"])}</td>'
            f'<td>{c["partition"]}</td><td>{c["leader"]}&rarr;{c["follower"]}</td><td>{_bytes(c["bytes_moved"])}</td>'
            f'<td>{_bytes(c["bytes_left"])}</td><td>{_bytes(c["rate"])}/s</td></tr>' for c in catching_up],
            "catching-up"))
    return parts


def _throttles_section(throttles: list[dict[str, Any]]) -> list[str]:
    parts = ["<h2>Throttles</h2>"]
    if throttles:
        parts.append(_table(["resource", "name", "config", "value"], [
            f'<tr><td>{_e(t["resource"])}</td><td>{_e(t["name"])}</td><td>{_e(t["config"])}</td>'
            f'<td>{_e(t["value"])}</td></tr>' for t in throttles], "throttles"))
    else:
        parts.append('<p class="muted" id="throttles">none</p>')
    return parts


def _topics_section(topics: list[dict[str, Any]]) -> list[str]:
    """The topic list with its under-replicated count, then every partition."""
    under = sum(p["under_replicated"] for t in topics for p in t["partitions"])
    parts = [f'<h2>Topics</h2><p class="muted" id="under-replicated">{under} under-replicated '
             f'(a leader, and an ISR smaller than the replicas minus those being added: Kafka\'s rule)</p>']
    if topics:
        parts.append(_table(["topic", "partitions", "under-replicated", "reassigning"], [
            f'<tr data-topic="{_e(t["name"])}"><td><a href="#{_anchor(t["name"])}">{_e(t["name"])}</a></td>'
            f'<td>{len(t["partitions"])}</td><td>{sum(p["under_replicated"] for p in t["partitions"])}</td>'
            f'<td>{sum(bool(p["adding"] or p["removing"]) for p in t["partitions"])}</td></tr>'
            for t in topics], "topic-list"))
    rows = [_partition_row(t["name"], p, first=i == 0) for t in topics for i, p in enumerate(t["partitions"])]
    parts.append(_table(["topic", "partition", "leader", "replicas", "isr", ""], rows, "topics") if rows
                 else '<p class="muted" id="topics">no topics</p>')
    return parts


def _injected_errors_section(injected: list[dict[str, Any]]) -> list[str]:
    if not injected:
        return []
    return ["<h2>Injected errors</h2>", _table(["api", "error code", "remaining", "topic", "partition"], [
        f'<tr><td>{_e(api_name(r["api_key"]))}</td><td>{r["error_code"]}</td><td>{r["remaining"]}</td>'
        f'<td>{_e(r["topic"] or "-")}</td><td>{_e(r["partition"] if r["partition"] is not None else "-")}</td>'
        f'</tr>' for r in injected], "injected-errors")]


def _anchor(topic: str) -> str:
    """The id of a topic's first partition row, the target of its link (topic names are [a-zA-Z0-9._-])."""
    return "partitions-" + topic


def _partition_row(topic: str, p: dict, first: bool) -> str:
    anchor = f' id="{_e(_anchor(topic))}"' if first else ""
    leader = p["leader"] if p["leader"] >= 0 else "<span class=offline>none</span>"
    under = "<span class=fenced>under-replicated</span>" if p["under_replicated"] else ""
    return (f'<tr data-partition="{_e(topic)}-{p["partition"]}"{anchor}><td>{_e(topic)}</td><td>{p["partition"]}</td>'
            f'<td>{leader}</td><td>{_ids(p["replicas"])}</td><td>{_ids(p["isr"])}</td><td>{under}</td></tr>')


CHART_WIDTH, CHART_HEIGHT = 260, 70
CHART_MIN_SPAN_S = 30.0


def _throughput_charts(throughput: dict, broker_ids: list[int]) -> str:
    """One small SVG per broker: bytes/s received (blue) and sent (orange) since replication first moved
    (at least the last 30 and at most the kept 300 simulated seconds), as steps (rates only change at
    events), on one scale for every broker."""
    now, changes = throughput["now"], throughput["changes"]
    first_move = next((at for at, rates in changes if rates), now)
    window = min(max(now - first_move, CHART_MIN_SPAN_S), throughput["window_seconds"])  # what has happened
    start = now - window
    peak = max([max(r) for _, rates in changes for r in rates.values()] + [1.0])
    charts = []
    for broker_id in broker_ids:
        lines = []
        for side, colour in ((0, "#1f6fb4"), (1, "#e07b16")):
            points = []
            for i, (at, rates) in enumerate(changes):
                until = changes[i + 1][0] if i + 1 < len(changes) else now
                if until < start:
                    continue
                rate = rates.get(broker_id, (0.0, 0.0))[side]
                y = CHART_HEIGHT - rate / peak * (CHART_HEIGHT - 4)
                for moment in (max(at, start), until):
                    points.append(f"{(moment - start) / window * CHART_WIDTH:.1f},{y:.1f}")
            if points:
                lines.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                             f'points="{" ".join(points)}"/>')
        latest = changes[-1][1] if changes else {}
        received, sent = latest.get(broker_id, (0.0, 0.0))
        charts.append(
            f'<figure class="chart" data-throughput="{broker_id}"><figcaption>broker {broker_id}: in '
            f'{_bytes(received)}/s, out {_bytes(sent)}/s</figcaption>'
            f'<svg width="{CHART_WIDTH}" height="{CHART_HEIGHT}" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}">'
            f'<rect width="100%" height="100%" fill="#f6f6f6"/>{"".join(lines)}</svg>'
            f'<div class="axis"><span>-{window:.0f} s</span><span>now</span></div></figure>')
    return (f'<div id="throughput">{"".join(charts)}</div><p class="muted">simulated time; one scale, peak '
            f'{_bytes(peak)}/s; <span style="color:#1f6fb4">received</span>, '
            f'<span style="color:#e07b16">sent</span></p>')


def _bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return ""


def _reassignment_row(r: dict) -> str:
    total = r["bytes_moved"] + r["bytes_left"]
    done = r["bytes_moved"] / total if total else 1.0
    eta = f'never ({_e(r["never"])})' if r.get("never") else "-" if r["seconds_left"] is None \
        else f'{r["seconds_left"]:.1f} s'
    return (f'<tr data-reassignment="{_e(r["topic"])}-{r["partition"]}"><td>{_e(r["topic"])}</td>'
            f'<td>{r["partition"]}</td><td>{_ids(r["replicas"])}</td><td>{_ids(r["adding"])}</td>'
            f'<td>{_ids(r["removing"])}</td>'
            f'<td><progress max="{total}" value="{r["bytes_moved"]}">{done:.0%}</progress> {done:.0%}</td>'
            f'<td>{_bytes(r["bytes_moved"])}</td><td>{_bytes(r["bytes_left"])}</td>'
            f'<td>{_bytes(r["rate"])}/s</td><td>{eta}</td><td>{_copies(r["copies"])}</td></tr>')


def _copies(copies: list[dict]) -> str:
    """Each new replica's copy: the broker it goes to, how much of it is done, its rate."""
    cells = []
    for c in copies:
        total = c["bytes_moved"] + c["bytes_left"]
        cells.append(f'{c["leader"]}&rarr;{c["follower"]} {c["bytes_moved"] / total if total else 1.0:.0%} '
                     f'at {_bytes(c["rate"])}/s')
    return "<br>".join(cells) or "-"


def _brief(fields: dict, limit: int = 160) -> str:
    text = ", ".join(f"{k}={v}" for k, v in fields.items() if k != "unknown_tagged_fields" and v not in ((), [], None))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def render_page(state: dict) -> str:
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>kraftwire {_e(state["cluster_id"])}</title>'
            f"<style>{_STYLE}</style></head><body><h1>kraftwire</h1>"
            f'<div id="view">{render_view(state)}</div><script>{_SCRIPT}</script></body></html>')
