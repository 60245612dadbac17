// JUnit 5 with org.testcontainers and Kafka's Java Admin against kraftwire's image (run by
// tests/containers/test_java.py): a throttled reassignment stands still on the virtual clock until the
// control plane advances it. KRAFTWIRE_TEST_PORT is broker 1's host port (brokers 2 and 3 take the next
// two). The part between the readme markers is README's Java snippet, word for word.
package kraftwire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

class ReassignmentTest {
    @Test
    void aThrottledReassignmentFinishesWhenTheClockIsAdvanced() throws Exception {
        int port = Integer.parseInt(System.getenv("KRAFTWIRE_TEST_PORT"));
        // readme: java
        try (GenericContainer<?> kraftwire = new GenericContainer<>("localhost/kraftwire:latest")
                .withEnv(Map.of("KRAFTWIRE_PORT", String.valueOf(port), "KRAFTWIRE_ADVERTISED_HOST", "localhost",
                                "KRAFTWIRE_VIRTUAL_CLOCK", "true", "KRAFTWIRE_CONTROL_TOKEN", "secret"))
                .withExposedPorts(8080)
                .waitingFor(Wait.forLogMessage(".*kraftwire ready on.*", 1))) {
            // brokers 1-3 on port, port+1, port+2, bound 1:1 so the advertised ports reach them
            kraftwire.setPortBindings(List.of(port + ":" + port, (port + 1) + ":" + (port + 1), (port + 2) + ":" + (port + 2)));
            kraftwire.start();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:" + port))) {
                admin.createTopics(List.of(new NewTopic("orders", Map.of(0, List.of(1, 2))))).all().get();
                admin.incrementalAlterConfigs(Map.of( // 100 MiB a partition, copied at 10 MiB/s by broker 3
                    new ConfigResource(ConfigResource.Type.TOPIC, "orders"), List.of(
                        new AlterConfigOp(new ConfigEntry("kraftwire.partition.size.bytes", "104857600"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("follower.replication.throttled.replicas", "*"), AlterConfigOp.OpType.SET)),
                    new ConfigResource(ConfigResource.Type.BROKER, "3"), List.of(
                        new AlterConfigOp(new ConfigEntry("follower.replication.throttled.rate", "10485760"), AlterConfigOp.OpType.SET))))
                    .all().get();
                TopicPartition orders0 = new TopicPartition("orders", 0);
                admin.alterPartitionReassignments(Map.of(orders0, Optional.of(new NewPartitionReassignment(List.of(2, 3)))))
                    .all().get();
                assertEquals(Set.of(orders0), admin.listPartitionReassignments().reassignments().get().keySet()); // clock stands still

                String control = "http://" + kraftwire.getHost() + ":" + kraftwire.getMappedPort(8080);
                HttpResponse<String> advanced = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create(control + "/api/clock/advance"))
                        .header("Authorization", "Bearer secret")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"until\": \"reassignments-done\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(200, advanced.statusCode(), advanced.body());
                assertTrue(admin.listPartitionReassignments().reassignments().get().isEmpty());
            }
        }
        // readme: end
    }
}
