// franz-go's kgo, a Go producer and consumer, against a running kraftwire cluster (KRAFTWIRE_BOOTSTRAP and
// KRAFTWIRE_TOPIC, set by tests/clients/test_consume_clients.py): an idempotent producer writes records with
// keys and headers (zstd batches), a consumer assigned the partition from its start reads them all back.
package kgo_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const count = 500

func TestProduceThenConsumeAssigned(t *testing.T) {
	bootstrap, topic := os.Getenv("KRAFTWIRE_BOOTSTRAP"), os.Getenv("KRAFTWIRE_TOPIC")
	if bootstrap == "" || topic == "" {
		t.Fatal("KRAFTWIRE_BOOTSTRAP and KRAFTWIRE_TOPIC are not set: run this from tests/clients/test_consume_clients.py")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	producer, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	records := make([]*kgo.Record, count)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Partition: 0, Key: []byte(fmt.Sprintf("k%d", i)),
			Value: []byte(fmt.Sprintf("v%d", i)), Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}}}
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	seen := 0
	for seen < count {
		fetches := consumer.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			t.Fatalf("fetch errors: %v", errs)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			want := fmt.Sprintf("%d k%d v%d i=%d", seen, seen, seen, seen)
			got := fmt.Sprintf("%d %s %s %s=%s", r.Offset, r.Key, r.Value, r.Headers[0].Key, r.Headers[0].Value)
			if got != want {
				t.Fatalf("record %d: got %q, want %q", seen, got, want)
			}
			seen++
		})
	}
}
