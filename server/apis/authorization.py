"""What each served API asks of the authorizer, and Kafka's answer when it says no.

A node (broker or controller) has ``authorizer`` (server/metadata/acls.py), or None: then every request
is allowed, kraftwire's default. A request is judged where it enters the cluster, by the principal of
its connection (server/wire/security.py): a broker judges what a client sends before it forwards it,
and the controller judges what arrives on its own listener, where the brokers' principal must be
allowed CLUSTER_ACTION (it is a super user of the cluster, server/host/security_settings.py).

Two wrappers around a handler, as the API tables in ``__init__`` apply them:

* ``on_cluster(operation, handler)``: the operation on the CLUSTER resource, or the API's response
  with CLUSTER_AUTHORIZATION_FAILED (31) in its top-level ErrorCode (AlterPartitionReassignments ALTER,
  ListPartitionReassignments DESCRIBE, the broker-to-controller RPCs CLUSTER_ACTION, ...);
* ``per_resource(handler, rule)``: each named resource on its own (CreateTopics CREATE, DeleteTopics
  DELETE, CreatePartitions ALTER, DescribeConfigs DESCRIBE_CONFIGS, AlterConfigs ALTER_CONFIGS); the
  refused ones get TOPIC_AUTHORIZATION_FAILED (29) or CLUSTER_AUTHORIZATION_FAILED (31) in their own
  result, the rest are handled as if they had come alone.

Metadata (api03_metadata.py) judges each topic itself. DescribeCluster needs ALTER on the cluster on the
controller listener and nothing on a broker's, as in Kafka. No response carries authorized operations.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kraftwire import codec
from kraftwire.codec import ErrorCode
from kraftwire.codec.constants import ConfigResourceType
from kraftwire.codec.messages import (AlterConfigsResponse, AlterReplicaLogDirsResponse, CreatePartitionsResponse,
                                      CreateTopicsResponse, DeleteTopicsResponse, DescribeConfigsResponse,
                                      IncrementalAlterConfigsResponse)
from kraftwire.server.metadata.acls import CLUSTER_NAME, Operation, ResourceType
from kraftwire.codec.model import Struct
from kraftwire.server.wire.security import ANONYMOUS
from kraftwire.server.wire.transport import Encoded, RequestContext, Unanswered

from .nodes import Handler, NodeApi, NodeT, Response, session_of

NO_AUTHORIZER = "No Authorizer is configured."

_FAILED = "Authorization failed."
# Kafka's default messages of TOPIC_AUTHORIZATION_FAILED and CLUSTER_AUTHORIZATION_FAILED in per-resource results
TOPIC_FAILED, CLUSTER_FAILED = "Topic authorization failed.", "Cluster authorization failed."
GROUP_FAILED = "Group authorization failed."


def needs_permission(context: RequestContext, operation: int) -> str:
    """Kafka's message for an ACL API refused on the cluster ("Request ... needs ALTER permission."); Kafka
    prints its internal request object where kraftwire names the API and the principal."""
    return f"Request {codec.api(context.api_key)[0].__name__} from {principal_of(context)} " \
           f"needs {Operation(operation).name} permission."


def principal_of(context: RequestContext) -> str:
    session = session_of(context)
    return session.principal if session is not None else ANONYMOUS


def authorized(node: NodeApi, context: RequestContext, operation: int, resource_type: int = ResourceType.CLUSTER,
               name: str = CLUSTER_NAME) -> bool:
    authorizer = node.authorizer
    if authorizer is None:
        return True
    host = context.peer[0] if context.peer else ""
    return authorizer.authorize(node.image.acls.values(), principal_of(context), host, operation, resource_type, name)


def authorized_on_any_topic(node: NodeApi, context: RequestContext, operation: int) -> bool:
    """The operation is allowed on some topic (Kafka's authorizeByResourceType, as InitProducerId asks):
    checked on the topic names the ACL entries give (literal, prefix or ``*``), each as a topic's name."""
    if node.authorizer is None:
        return True
    names = {a.resource_name for a in node.image.acls.values() if a.resource_type == ResourceType.TOPIC}
    return any(authorized(node, context, operation, ResourceType.TOPIC, name) for name in sorted(names))


def acl_write_refusal(node: NodeApi, context: RequestContext) -> tuple[int, str] | None:
    """The error code and message when this caller may not create or delete ACLs here, else None: without
    an authorizer Kafka answers SECURITY_DISABLED; creating and deleting ACLs needs ALTER on the cluster."""
    if node.authorizer is None:
        return ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER
    if not authorized(node, context, Operation.ALTER):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, needs_permission(context, Operation.ALTER)
    return None


def cluster_refusal(api_key: int) -> Struct:
    """The API's response with CLUSTER_AUTHORIZATION_FAILED at the top level and nothing else."""
    response = codec.api(api_key)[1]()
    changes: dict[str, object] = {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
    if hasattr(response, "error_message"):
        changes["error_message"] = _FAILED
    return response.replace(**changes)


def on_cluster(operation: int, handler: Handler[NodeT]) -> Handler[NodeT]:
    def guarded(node: NodeT, context: RequestContext, request: Any) -> Response:
        if authorized(node, context, operation):
            return handler(node, context, request)
        return cluster_refusal(context.api_key)
    return guarded


@dataclass(frozen=True)
class ResourceRule:
    """How one API names its resources: the request's list (``items``), the response's (``results``),
    the check of one item, and the refused item's result entry."""
    items: str
    results: str
    allowed: Callable[[NodeApi, RequestContext, Any], bool]  # (node, context, item)
    refused: Callable[[Any], Struct]  # (item) -> result entry
    response: type[Struct]


def per_resource(handler: Handler[NodeT], rule: ResourceRule) -> Handler[NodeT]:
    def guarded(node: NodeT, context: RequestContext, request: Any) -> Response:
        if node.authorizer is None:
            return handler(node, context, request)
        return judged(node, context, request)

    async def judged(node: NodeT, context: RequestContext, request: Any) -> Struct | Encoded:
        items = getattr(request, rule.items)
        denied = [item for item in items if not rule.allowed(node, context, item)]
        if not denied:
            return await _result(handler(node, context, request))
        kept = [item for item in items if item not in denied]
        if kept:
            response = await _result(handler(node, context, request.replace(**{rule.items: kept})))
        else:
            response = rule.response()
        assert isinstance(response, Struct), "a per-resource API answers with a decoded response"
        return response.replace(**{rule.results: [*getattr(response, rule.results), *map(rule.refused, denied)]})

    return guarded


async def _result(value: Response) -> Struct | Encoded:
    answer = await value if inspect.isawaitable(value) else value
    assert not isinstance(answer, Unanswered), "a per-resource API always answers"
    return answer


# --- the rules of the per-resource APIs ---------------------------------------------------------------------------

def _topic_refused(result_cls: type[Struct], **extra: object) -> Callable[[Any], Struct]:
    """The refused topic's result, with Kafka's controller's message for CreateTopics and CreatePartitions."""
    return lambda item: result_cls(name=item.name, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                   error_message=_FAILED, **extra)


CREATE_TOPICS = ResourceRule(
    "topics", "topics",
    lambda node, context, t: (authorized(node, context, Operation.CREATE)
                              or authorized(node, context, Operation.CREATE, ResourceType.TOPIC, t.name)),
    _topic_refused(CreateTopicsResponse.CreatableTopicResult), CreateTopicsResponse)

CREATE_PARTITIONS = ResourceRule(
    "topics", "results",
    lambda node, context, t: authorized(node, context, Operation.ALTER, ResourceType.TOPIC, t.name),
    _topic_refused(CreatePartitionsResponse.CreatePartitionsTopicResult), CreatePartitionsResponse)

DELETE_TOPICS_BY_NAME = ResourceRule(  # v0-5: topic_names
    "topic_names", "responses",
    lambda node, context, name: _may_delete(node, context, name),
    lambda name: DeleteTopicsResponse.DeletableTopicResult(name=name, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                                           error_message=TOPIC_FAILED),
    DeleteTopicsResponse)


def _may_delete(node: NodeApi, context: RequestContext, name: str) -> bool:
    """DELETE on the cluster (any topic, Kafka's ControllerApis), or DELETE on an existing topic; on a name no
    topic has, DESCRIBE, so that a caller who may see the topic learns UNKNOWN_TOPIC_OR_PARTITION and one
    who may not, TOPIC_AUTHORIZATION_FAILED (Kafka's)."""
    if authorized(node, context, Operation.DELETE):
        return True
    operation = Operation.DELETE if node.image.topic(name) is not None else Operation.DESCRIBE
    return authorized(node, context, operation, ResourceType.TOPIC, name)


def _topic_name(node: NodeApi, topic: Any) -> str | None:
    if topic.name is not None:
        return topic.name
    state = node.image.topics.get(topic.topic_id)
    return state.name if state is not None else None


DELETE_TOPICS = ResourceRule(  # v6+: topics by name or id
    "topics", "responses",
    lambda node, context, t: (name := _topic_name(node, t)) is None or _may_delete(node, context, name),
    lambda t: DeleteTopicsResponse.DeletableTopicResult(name=t.name, topic_id=t.topic_id,
                                                        error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                                        error_message=TOPIC_FAILED),
    DeleteTopicsResponse)


def _config_allowed(operation: int) -> Callable[[NodeApi, RequestContext, Any], bool]:
    def allowed(node: NodeApi, context: RequestContext, resource: Any) -> bool:
        if resource.resource_type == ConfigResourceType.TOPIC:
            return authorized(node, context, operation, ResourceType.TOPIC, resource.resource_name)
        if resource.resource_type == ConfigResourceType.GROUP:
            return authorized(node, context, operation, ResourceType.GROUP, resource.resource_name)
        return authorized(node, context, operation)  # broker and broker-logger configs: the cluster
    return allowed


def _config_refused(result_cls: type[Struct], **extra: object) -> Callable[[Any], Struct]:
    def refused(resource: Any) -> Struct:
        code = {ConfigResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                ConfigResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED}.get(
                    resource.resource_type, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        message = {ErrorCode.TOPIC_AUTHORIZATION_FAILED: TOPIC_FAILED,
                   ErrorCode.GROUP_AUTHORIZATION_FAILED: GROUP_FAILED}.get(code, CLUSTER_FAILED)
        return result_cls(error_code=code, error_message=message, resource_type=resource.resource_type,
                          resource_name=resource.resource_name, **extra)
    return refused


DESCRIBE_CONFIGS = ResourceRule(
    "resources", "results", _config_allowed(Operation.DESCRIBE_CONFIGS),
    _config_refused(DescribeConfigsResponse.DescribeConfigsResult, configs=[]), DescribeConfigsResponse)
ALTER_CONFIGS = ResourceRule(
    "resources", "responses", _config_allowed(Operation.ALTER_CONFIGS),
    _config_refused(AlterConfigsResponse.AlterConfigsResourceResponse), AlterConfigsResponse)
INCREMENTAL_ALTER_CONFIGS = ResourceRule(
    "resources", "responses", _config_allowed(Operation.ALTER_CONFIGS),
    _config_refused(IncrementalAlterConfigsResponse.AlterConfigsResourceResponse), IncrementalAlterConfigsResponse)


def alter_replica_log_dirs(handler: Handler[NodeT]) -> Handler[NodeT]:
    """AlterReplicaLogDirs needs ALTER on the cluster; refused, every partition named gets
    CLUSTER_AUTHORIZATION_FAILED in its own result, as Kafka answers."""
    def guarded(node: NodeT, context: RequestContext, request: Any) -> Response:
        if authorized(node, context, Operation.ALTER):
            return handler(node, context, request)
        result, partition = (AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult,
                             AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult)
        refused = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return AlterReplicaLogDirsResponse(results=[
            result(topic_name=t.name,
                   partitions=[partition(partition_index=p, error_code=refused) for p in t.partitions])
            for d in request.dirs for t in d.topics])
    return guarded


def delete_topics(handler: Handler[NodeT]) -> Handler[NodeT]:
    """DeleteTopics names topics in ``topic_names`` up to v5 and in ``topics`` from v6."""
    by_name, by_topic = per_resource(handler, DELETE_TOPICS_BY_NAME), per_resource(handler, DELETE_TOPICS)

    def guarded(node: NodeT, context: RequestContext, request: Any) -> Response:
        return (by_topic if context.api_version >= 6 else by_name)(node, context, request)
    return guarded
