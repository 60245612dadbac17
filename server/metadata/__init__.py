"""The metadata: what the log's records mean, for whoever replays them. ``image`` (the state built by
applying records, and nothing else), ``snapshot_encoding`` (its snapshot's batches, encoded again only
where topics changed), ``record_versions`` (which version of each record is written),
``configs`` (the catalogue of topic and broker configs), ``config_values`` (parsing and rendering their
values), ``config_describe`` (DescribeConfigs' rows), ``view`` (``MetadataView``, what a broker may
know of the metadata), ``redaction`` (records as shown outside the log, secrets redacted) and ``acls``
(access control entries and the authorizer's rules, which brokers and the controller share).

Kept apart from the controller on purpose: the brokers use the same image code as the controller, as
Kafka's image/metadata module serves both its controller and its brokers, so the broker wing depends on
this wing and never on ``controller``. It imports only ``kraftwire.codec``.
"""
