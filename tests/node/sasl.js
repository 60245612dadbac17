// kafkajs 2.2 logs in to kraftwire with SASL and describes the cluster.
// Usage: node sasl.js <bootstrap> <mechanism: plain|scram-sha-256|scram-sha-512> <user> <password> [ca.pem]
// With ca.pem it speaks TLS (SASL_SSL). Prints one JSON line: the broker ids, or the error's name.
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [bootstrap, mechanism, username, password, ca] = process.argv.slice(2)
  const kafka = new Kafka({
    clientId: 'kraftwire-sasl-test',
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    ssl: ca ? { ca: [fs.readFileSync(ca, 'utf-8')] } : false,
    sasl: { mechanism, username, password },
    retry: { retries: 0 }
  })
  const admin = kafka.admin()
  try {
    await admin.connect()
    const cluster = await admin.describeCluster()
    console.log(JSON.stringify({ brokers: cluster.brokers.map(b => b.nodeId).sort() }))
  } catch (error) {
    console.log(JSON.stringify({ error: error.name, message: error.message }))
  } finally {
    await admin.disconnect()
  }
}

main()
