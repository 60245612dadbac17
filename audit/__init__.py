"""The audit of a KRaft metadata log: a pure-Python replay (``audit.partition_replay``,
``audit.global_replay``, joined by ``audit.joins``) run in one process
(``audit.local``) or as a Spark job (``audit.job``), writing tables and a report (audit/README.md)."""
