// kafkajs 2.2 against kraftwire: start a partition reassignment, then list it.
// Usage: node reassign.js <bootstrap host:port,...> <topic>
// The topic must exist with partition 0 on brokers [1, 2, 3]; prints one JSON line with both answers.
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [bootstrap, topic] = process.argv.slice(2)
  const kafka = new Kafka({ clientId: 'kraftwire-reassign-test', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  try {
    await admin.alterPartitionReassignments({
      topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [4, 2, 3] }] }]
    })
    const listed = await admin.listPartitionReassignments({ topics: [{ topic, partitions: [0] }] })
    let refused = null
    try {
      await admin.alterPartitionReassignments({
        topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [1, 1] }] }]
      })
    } catch (error) {
      refused = { name: error.name, types: (error.errors || [error]).map(e => e.type) }
    }
    console.log(JSON.stringify({ listed, refused }))
  } finally {
    await admin.disconnect()
  }
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
