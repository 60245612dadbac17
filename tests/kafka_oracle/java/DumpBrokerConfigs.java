import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import java.util.Map;

/** Kafka's broker config catalogue, read from the jars on the class path, one config a line, tab-separated:
 *  name, type, default as DescribeConfigs renders it (\N for none), how it may change (per-broker,
 *  cluster-wide or read-only), its validator as ConfigDef describes it ("" for none). Internal configs,
 *  which DescribeConfigs does not list, are left out. */
public class DumpBrokerConfigs {
    public static void main(String[] args) {
        Map<String, String> modes = DynamicBrokerConfig.dynamicConfigUpdateModes();
        for (ConfigDef.ConfigKey key : kafka.server.KafkaConfig.configDef().configKeys().values()) {
            if (key.internalConfig) continue;
            String shown = key.defaultValue == ConfigDef.NO_DEFAULT_VALUE || key.defaultValue == null ? "\\N"
                : ConfigDef.convertToString(key.defaultValue, key.type);
            String validator = key.validator == null ? "" : key.validator.toString().replace('\t', ' ').replace('\n', ' ');
            System.out.println(key.name + "\t" + key.type + "\t" + shown + "\t" + modes.getOrDefault(key.name, "read-only")
                + "\t" + validator);
        }
    }
}
