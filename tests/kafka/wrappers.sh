#!/usr/bin/env bash
# Writes tests/kafka/bin/kafka-*.sh: Apache Kafka's own scripts, each a wrapper that runs the tool's main
# class (as Kafka's bin/kafka-<tool>.sh does through kafka-run-class.sh) from the jars tests/setup.sh
# resolved into tests/kafka/lib. tests/setup.sh runs it; README's "The same with Apache Kafka's own tools"
# puts tests/kafka/bin on PATH.
set -euo pipefail
kafka="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -f "$kafka/lib/.resolved" ]; then
  echo "wrappers.sh: Apache Kafka's jars are not in $kafka/lib: run tests/setup.sh" >&2
  exit 1
fi
mkdir -p "$kafka/bin"
# script -> main class, as Kafka 4.3's bin/ names them
while read -r script main; do
  cat > "$kafka/bin/$script" <<EOF
#!/usr/bin/env bash
# Written by tests/kafka/wrappers.sh: Apache Kafka's bin/$script over the jars in tests/kafka/lib.
kafka="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")/.." && pwd)"
share=()  # the class archive below, where it was made: a third less start-up per tool
if [ -f "\$kafka/bin/tools.jsa" ]; then share=(-XX:SharedArchiveFile="\$kafka/bin/tools.jsa" -Xshare:auto -Xlog:disable); fi
exec java -Xmx256m -Xms32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true "\${share[@]}" \\
  -Dlog4j2.configurationFile="\$kafka/log4j2.properties" -cp "\$kafka/lib/*" $main "\$@"
EOF
  chmod +x "$kafka/bin/$script"
done <<'TOOLS'
kafka-acls.sh org.apache.kafka.tools.AclCommand
kafka-broker-api-versions.sh org.apache.kafka.tools.BrokerApiVersionsCommand
kafka-cluster.sh org.apache.kafka.tools.ClusterTool
kafka-configs.sh kafka.admin.ConfigCommand
kafka-console-consumer.sh org.apache.kafka.tools.consumer.ConsoleConsumer
kafka-console-producer.sh org.apache.kafka.tools.ConsoleProducer
kafka-consumer-groups.sh org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
kafka-delete-records.sh org.apache.kafka.tools.DeleteRecordsCommand
kafka-dump-log.sh org.apache.kafka.tools.DumpLogSegments
kafka-features.sh org.apache.kafka.tools.FeatureCommand
kafka-get-offsets.sh org.apache.kafka.tools.GetOffsetShell
kafka-leader-election.sh org.apache.kafka.tools.LeaderElectionCommand
kafka-log-dirs.sh org.apache.kafka.tools.LogDirsCommand
kafka-metadata-quorum.sh org.apache.kafka.tools.MetadataQuorumCommand
kafka-metadata-shell.sh org.apache.kafka.shell.MetadataShell
kafka-reassign-partitions.sh org.apache.kafka.tools.reassign.ReassignPartitionsCommand
kafka-storage.sh kafka.tools.StorageTool
kafka-topics.sh org.apache.kafka.tools.TopicCommand
kafka-transactions.sh org.apache.kafka.tools.TransactionsCommand
TOOLS

# A class-data-sharing archive (Java's AppCDS) of the classes a tool run loads (the Admin client, Scala,
# the command-line parsing), made once from kafka-configs against an address that does not answer; every
# wrapper maps it instead of loading those classes from the jars. Remade when the jars are resolved again.
archive="$kafka/bin/tools.jsa"
if [ ! -f "$archive" ] || [ "$kafka/lib/.resolved" -nt "$archive" ]; then
  rm -f "$archive"
  settings="$(mktemp)"
  printf 'request.timeout.ms=300\ndefault.api.timeout.ms=600\n' > "$settings"
  java -Xmx256m -Xms32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -XX:ArchiveClassesAtExit="$archive" -Xlog:disable -Dlog4j2.configurationFile="$kafka/log4j2.properties" \
    -cp "$kafka/lib/*" kafka.admin.ConfigCommand --bootstrap-server 127.0.0.1:9 --command-config "$settings" \
    --describe --entity-type brokers --entity-default >/dev/null 2>&1 || true
  rm -f "$settings"
  [ -f "$archive" ] || echo "wrappers.sh: no class archive made; the tools start without it" >&2
fi
