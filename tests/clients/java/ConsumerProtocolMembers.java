// Two members of one consumer group with group.protocol=consumer (KIP-848), run by
// tests/clients/test_consumer_protocol_clients.py over Kafka's own client jars (tests/kafka/lib):
// both members share the topic's partitions and read every record, committing as they go; then the
// program prints DESCRIBE and waits for a line on stdin (the test describes the group meanwhile); the
// second member leaves and the first is handed every partition; it commits and closes.
// Arguments: bootstrap servers, topic, group id, the number of records the topic holds.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ConsumerProtocolMembers {
    static KafkaConsumer<String, String> member(String bootstrap, String group, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", "consumer");
        p.put("client.id", clientId);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    static void read(KafkaConsumer<String, String> consumer, Set<String> seen) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
        for (ConsumerRecord<String, String> r : records) {
            seen.add(r.value());
        }
        if (!records.isEmpty()) {
            consumer.commitSync();
        }
    }

    static void check(long deadline, String what) {
        if (System.currentTimeMillis() > deadline) {
            throw new IllegalStateException("timed out waiting for " + what);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int records = Integer.parseInt(args[3]);
        KafkaConsumer<String, String> first = member(bootstrap, group, "first");
        KafkaConsumer<String, String> second = member(bootstrap, group, "second");
        first.subscribe(List.of(topic));
        second.subscribe(List.of(topic));
        Set<String> seen = new HashSet<>();
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            read(first, seen);
            read(second, seen);
            Set<TopicPartition> a = first.assignment(), b = second.assignment();
            Set<TopicPartition> both = new HashSet<>(a);
            both.addAll(b);
            if (!a.isEmpty() && !b.isEmpty() && both.size() == a.size() + b.size() && both.size() == 4
                    && seen.size() >= records) {
                System.out.println("SHARED " + a.size() + " " + b.size() + " " + seen.size());
                break;
            }
            check(deadline, "both members assigned and every record read");
        }
        System.out.println("DESCRIBE");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        second.close();
        deadline = System.currentTimeMillis() + 60_000;
        while (first.assignment().size() != 4) {
            read(first, seen);
            check(deadline, "the remaining member to be handed every partition");
        }
        System.out.println("ALONE " + first.assignment().size());
        first.commitSync();
        first.close();
        System.out.println("DONE " + seen.size());
        System.out.flush();
    }
}
