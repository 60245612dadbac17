// kafkajs 2.2 against kraftwire while the active controller is killed: admin writes in rounds, with
// kafkajs's own retries (its defaults, as against Kafka).
// Usage: node failover.js <bootstrap host:port,...> <rounds>
// Round i creates topic js-<i> (partition 0 on brokers 1, 2, 3), sets its retention.ms to 60000 + i and
// moves partition 0 to brokers 4, 2, 3. Prints one JSON line per acknowledged operation, as it is
// acknowledged, and exits non-zero on the first operation kafkajs gives up on.
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [bootstrap, rounds] = process.argv.slice(2)
  const kafka = new Kafka({ clientId: 'kraftwire-failover-test', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  try {
    for (let i = 0; i < Number(rounds); i++) {
      const topic = `js-${i}`
      const created = await admin.createTopics({
        topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [1, 2, 3] }] }]
      })
      console.log(JSON.stringify({ op: 'create', topic, created }))
      await admin.alterConfigs({
        resources: [{ type: 2, name: topic, configEntries: [{ name: 'retention.ms', value: String(60000 + i) }] }]
      })
      console.log(JSON.stringify({ op: 'config', topic, value: String(60000 + i) }))
      await admin.alterPartitionReassignments({
        topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [4, 2, 3] }] }]
      })
      console.log(JSON.stringify({ op: 'reassign', topic, replicas: [4, 2, 3] }))
    }
  } finally {
    await admin.disconnect()
  }
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
