"""DescribeConfigs (32): the configs of topics and brokers, from the committed image.

Who: any client, on a broker listener or the controller listener (which answers for its own node id
as the broker). Resources are answered in request order, each on its own:
* TOPIC (2): every topic config with its value, source and (``IncludeSynonyms``, v1+) the cluster
  default it falls back to. An illegal name gets INVALID_TOPIC_EXCEPTION (17) with Kafka's
  ``Topic.validate`` text; a topic that does not exist UNKNOWN_TOPIC_OR_PARTITION (3) with an empty
  message, as Kafka sends it.
* BROKER (4) "<id>": that broker's configs, answered only by that broker, as in Kafka. Another
  broker's id gets INVALID_REQUEST (42) "Unexpected broker id, expected {self} or empty string, but
  received {name}"; a name that is not an integer "Broker id must be an integer, but it is: {name}".
  The replication throttle rates are always listed, set or not (kafka-python's alter_configs refuses
  keys the server does not list).
  The broker's startup configs (node.id, process.roles, listeners and advertised.listeners with its
  real address, listener.security.protocol.map, inter.broker.listener.name, controller.listener.names,
  controller.quorum.bootstrap.servers, log.dirs, and the cluster's auto.create.topics.enable,
  num.partitions and default.replication.factor) show with source STATIC_BROKER_CONFIG (4), as a KRaft
  broker's server.properties would give them; the controller listener reports its own.
* BROKER "": the cluster-wide defaults, only those that are set, from any broker.
* BROKER_LOGGER (8) "<id>": this node's loggers and their levels (``broker_loggers``: root and
  kraftwire's own Python loggers, levels in log4j's names, source DYNAMIC_BROKER_LOGGER_CONFIG), answered
  only by that node; an empty name gets INVALID_REQUEST "Broker id must not be empty", another node's id
  "Unexpected broker id, expected {self} but received {name}".
* GROUP (32) "<group>": Kafka 4.3.1's group configs (server/metadata/group_configs.py), for any group
  name whether the group exists or not: the group's own value (source GROUP_CONFIG, 8) over its broker
  synonym's (``group.consumer.session.timeout.ms`` ...: a static broker config, else Kafka's default).
  The empty name is INVALID_REQUEST "Group name must not be empty". Authorized by DESCRIBE_CONFIGS on
  the GROUP (GROUP_AUTHORIZATION_FAILED).
* CLIENT_METRICS (16): INVALID_REQUEST "Unsupported resource type: ..."
  (kraftwire keeps no configs for them; Kafka does). A resource type Kafka does not know fails the
  whole request: every resource gets INVALID_REQUEST with Kafka's stock message, as Kafka answers.

``ConfigurationKeys`` null or empty means every key; unknown keys are left out. ``IncludeDocumentation``
(v3+) adds each key's doc. ``ConfigType`` and ``Documentation`` exist from v3, ``ConfigSource`` and
``Synonyms`` from v1. v0 has ``IsDefault`` instead of a source: kraftwire sets it when the value is
Kafka's default, where Kafka 3.x servers left it false for every key (4.0 dropped v0).
"""
from __future__ import annotations

from kraftwire.codec.messages import DescribeConfigsRequest, DescribeConfigsResponse
from kraftwire.server.controller import broker_loggers, configuration_control
from kraftwire.server.wire.transport import RequestContext

from .nodes import BrokerNodeApi, ControllerNodeApi

API_KEY = 32


def on_broker(broker: BrokerNodeApi, context: RequestContext,
              request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    return configuration_control.describe_configs(broker.image, request, context.api_version, broker.broker_id,
                                                  broker.static_configs(), broker_loggers.loggers())


def on_controller(node: ControllerNodeApi, context: RequestContext,
                  request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    return configuration_control.describe_configs(node.image, request, context.api_version, node.node_id,
                                                  node.static_configs(), broker_loggers.loggers())
