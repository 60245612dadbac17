// kafkajs 2.2 as a producer and an admin on kraftwire's data plane: node produce.js BOOTSTRAP TOPIC COUNT
// sends COUNT records (acks -1, gzip, keys, headers, timestamps) to partition 0 in batches, then reads the
// partition's offsets back with the admin (earliest/latest, and by timestamp), and prints one JSON line.
const { Kafka, CompressionTypes, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic, countText] = process.argv.slice(2);
  const count = Number(countText);
  const kafka = new Kafka({ clientId: "kraftwire-produce", brokers: bootstrap.split(","), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const sent = [];
  for (let start = 0; start < count; start += 50) {
    const messages = [];
    for (let i = start; i < Math.min(count, start + 50); i++) {
      messages.push({ partition: 0, key: `key-${i}`, value: `value-${i}`, timestamp: String(1700000000000 + i),
                      headers: { h: String(i) } });
    }
    const answers = await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages });
    sent.push(...answers.map((a) => ({ partition: a.partition, baseOffset: a.baseOffset, errorCode: a.errorCode })));
  }
  await producer.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, 1700000000000 + 120);
  await admin.disconnect();
  console.log(JSON.stringify({ sent, offsets, byTime }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
