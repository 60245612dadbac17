// Node's testcontainers with kafkajs against kraftwire's image (run by tests/containers/test_node.py with
// node --test): a throttled reassignment stands still on the virtual clock until the control plane
// advances it. KRAFTWIRE_TEST_PORT is broker 1's host port (brokers 2 and 3 take the next two). The part
// between the readme markers is README's Node snippet, word for word.
const { test } = require('node:test')
const assert = require('node:assert')

test('a throttled reassignment finishes when the clock is advanced', async () => {
  const port = Number(process.env.KRAFTWIRE_TEST_PORT)
  assert.ok(port, 'KRAFTWIRE_TEST_PORT is not set: run this from tests/containers/test_node.py')
  // readme: node
  const { GenericContainer, Wait } = require('testcontainers')
  const { Kafka, ConfigResourceTypes, logLevel } = require('kafkajs')

  const brokers = [0, 1, 2].map(i => ({ container: port + i, host: port + i })) // 1:1: advertised ports reach
  const kraftwire = await new GenericContainer('localhost/kraftwire:latest')
    .withEnvironment({ KRAFTWIRE_PORT: String(port), KRAFTWIRE_ADVERTISED_HOST: 'localhost',
                       KRAFTWIRE_VIRTUAL_CLOCK: 'true', KRAFTWIRE_CONTROL_TOKEN: 'secret' })
    .withExposedPorts(...brokers, 8080)
    .withWaitStrategy(Wait.forLogMessage('kraftwire ready on'))
    .start()
  const admin = new Kafka({ brokers: [`localhost:${port}`], logLevel: logLevel.NOTHING }).admin()
  try {
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: 'orders', replicaAssignment: [{ partition: 0, replicas: [1, 2] }] }] })
    await admin.alterConfigs({ resources: [ // 100 MiB a partition, copied at 10 MiB/s by broker 3
      { type: ConfigResourceTypes.TOPIC, name: 'orders', configEntries: [
        { name: 'kraftwire.partition.size.bytes', value: '104857600' },
        { name: 'follower.replication.throttled.replicas', value: '*' }] },
      { type: ConfigResourceTypes.BROKER, name: '3', configEntries: [
        { name: 'follower.replication.throttled.rate', value: '10485760' }] }] })
    await admin.alterPartitionReassignments({ topics: [{ topic: 'orders', partitionAssignment: [{ partition: 0, replicas: [2, 3] }] }] })
    const moving = await admin.listPartitionReassignments({ topics: [{ topic: 'orders', partitions: [0] }] })
    assert.strictEqual(moving.topics.length, 1) // the clock stands still: still moving

    const control = `http://${kraftwire.getHost()}:${kraftwire.getMappedPort(8080)}`
    const advanced = await fetch(`${control}/api/clock/advance`, {
      method: 'POST', headers: { Authorization: 'Bearer secret' }, body: JSON.stringify({ until: 'reassignments-done' })
    })
    assert.ok((await advanced.json()).clock.seconds >= 10) // simulated: 100 MiB at 10 MiB/s
    const done = await admin.listPartitionReassignments({ topics: [{ topic: 'orders', partitions: [0] }] })
    assert.deepStrictEqual(done.topics, [])
  } finally {
    await admin.disconnect()
    await kraftwire.stop()
  }
  // readme: end
})
