// franz-go's kadm, a Go admin client, against a running kraftwire cluster (KRAFTWIRE_BOOTSTRAP, set by
// tests/test_kadm.py): topics, configs, a reassignment listed while it runs and then completed, and a
// replica moved between the log directories of one broker.
package kadm_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func admin(t *testing.T) *kadm.Client {
	bootstrap := os.Getenv("KRAFTWIRE_BOOTSTRAP")
	if bootstrap == "" {
		t.Fatal("KRAFTWIRE_BOOTSTRAP is not set: run this from tests/test_kadm.py")
	}
	client, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return kadm.NewClient(client)
}

// eventually retries check until it returns nil, for at most 30 seconds: it waits for a state.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type notYet string

func (n notYet) Error() string { return string(n) }

func replicasOf(t *testing.T, adm *kadm.Client, topic string, partition int32) []int32 {
	t.Helper()
	topics, err := adm.ListTopics(context.Background(), topic)
	if err != nil || topics.Error() != nil {
		t.Fatalf("list %s: %v %v", topic, err, topics.Error())
	}
	return topics[topic].Partitions[partition].Replicas
}

func TestTopicsAndConfigs(t *testing.T) {
	adm, ctx := admin(t), context.Background()
	created, err := adm.CreateTopics(ctx, 3, 2, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, "kadm-topics")
	if err != nil || created.Error() != nil {
		t.Fatalf("create: %v %v", err, created.Error())
	}
	if c := created["kadm-topics"]; c.NumPartitions != 3 || c.ReplicationFactor != 2 || *c.Configs["retention.ms"].Value != "3600000" {
		t.Fatalf("created: %+v", c)
	}
	again, _ := adm.CreateTopics(ctx, 1, 1, nil, "kadm-topics")
	if again["kadm-topics"].Err != kerr.TopicAlreadyExists {
		t.Fatalf("second create: %v", again["kadm-topics"].Err)
	}
	topics, err := adm.ListTopics(ctx, "kadm-topics")
	if err != nil || len(topics["kadm-topics"].Partitions) != 3 {
		t.Fatalf("list: %v %+v", err, topics)
	}
	for _, p := range topics["kadm-topics"].Partitions {
		if len(p.Replicas) != 2 || p.Leader != p.Replicas[0] || len(p.ISR) != 2 {
			t.Fatalf("partition: %+v", p)
		}
	}

	altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")},
		{Op: kadm.DeleteConfig, Name: "retention.ms"},
	}, "kadm-topics")
	if err != nil || altered[0].Err != nil {
		t.Fatalf("alter topic configs: %v %+v", err, altered)
	}
	bad, _ := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("soon")}}, "kadm-topics")
	if bad[0].Err != kerr.InvalidConfig || bad[0].ErrMessage != "Invalid value soon for configuration retention.ms: Not a number of type LONG" {
		t.Fatalf("bad value: %v %q", bad[0].Err, bad[0].ErrMessage)
	}
	described, err := adm.DescribeTopicConfigs(ctx, "kadm-topics")
	if err != nil || described[0].Err != nil {
		t.Fatalf("describe topic configs: %v %+v", err, described)
	}
	values := map[string]kadm.Config{}
	for _, c := range described[0].Configs {
		values[c.Key] = c
	}
	if c := values["cleanup.policy"]; *c.Value != "compact" || c.Source.String() != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("cleanup.policy: %+v", c)
	}
	if c := values["retention.ms"]; *c.Value != "604800000" || c.Source.String() != "DEFAULT_CONFIG" {
		t.Fatalf("retention.ms: %+v", c)
	}

	brokerAltered, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "follower.replication.throttled.rate", Value: kadm.StringPtr("5000000")}}, 2)
	if err != nil || brokerAltered[0].Err != nil {
		t.Fatalf("alter broker configs: %v %+v", err, brokerAltered)
	}
	brokers, err := adm.DescribeBrokerConfigs(ctx, 2)
	if err != nil || brokers[0].Err != nil {
		t.Fatalf("describe broker configs: %v %+v", err, brokers)
	}
	found := false
	for _, c := range brokers[0].Configs {
		if c.Key == "follower.replication.throttled.rate" {
			found = *c.Value == "5000000" && c.Source.String() == "DYNAMIC_BROKER_CONFIG"
		}
	}
	if !found {
		t.Fatalf("broker 2's follower.replication.throttled.rate is not 5000000 (dynamic): %+v", brokers[0].Configs)
	}
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.rate"}}, 2); err != nil {
		t.Fatal(err)
	}

	deleted, err := adm.DeleteTopics(ctx, "kadm-topics", "kadm-no-such-topic")
	if err != nil || deleted["kadm-topics"].Err != nil || deleted["kadm-no-such-topic"].Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
}

func TestReassignment(t *testing.T) {
	adm, ctx := admin(t), context.Background()
	// Every replica of the topic is throttled to one byte a second until the reassignment has been listed.
	created, err := adm.CreateTopics(ctx, 1, 2, map[string]*string{
		"leader.replication.throttled.replicas":   kadm.StringPtr("*"),
		"follower.replication.throttled.replicas": kadm.StringPtr("*"),
		"kraftwire.partition.size.bytes":          kadm.StringPtr("10485760"),
	}, "kadm-moves")
	if err != nil || created.Error() != nil {
		t.Fatalf("create: %v %v", err, created.Error())
	}
	rates := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: kadm.StringPtr("1")},
		{Op: kadm.SetConfig, Name: "follower.replication.throttled.rate", Value: kadm.StringPtr("1")},
	}
	if altered, err := adm.AlterBrokerConfigs(ctx, rates, 1, 2, 3); err != nil || len(altered) != 3 {
		t.Fatalf("throttle: %v %+v", err, altered)
	} else {
		for _, a := range altered {
			if a.Err != nil {
				t.Fatalf("throttle broker %s: %v", a.Name, a.Err)
			}
		}
	}
	before := replicasOf(t, adm, "kadm-moves", 0)
	var target []int32
	for _, b := range []int32{1, 2, 3} {
		if !slices.Contains(before, b) {
			target = append(target, b)
		}
	}
	target = append(target, before[0])

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("kadm-moves", 0, target)
	req.Assign("kadm-no-such-topic", 0, []int32{1})
	answered, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if e := answered["kadm-moves"][0].Err; e != nil {
		t.Fatalf("reassign: %v", e)
	}
	if r := answered["kadm-no-such-topic"][0]; r.Err != kerr.UnknownTopicOrPartition || r.ErrMessage != "Unable to find a topic named kadm-no-such-topic." {
		t.Fatalf("reassign of an unknown topic: %+v", r)
	}
	moving := kadm.TopicsSet{"kadm-moves": {0: {}}}
	listed, err := adm.ListPartitionReassignments(ctx, moving)
	if err != nil {
		t.Fatal(err)
	}
	r := listed["kadm-moves"][0]
	want := append(slices.Clone(target), before[1])
	if !slices.Equal(r.Replicas, want) || !slices.Equal(r.AddingReplicas, target[:1]) || !slices.Equal(r.RemovingReplicas, before[1:]) {
		t.Fatalf("listed: %+v, want replicas %v", r, want)
	}

	unthrottle := []kadm.AlterConfig{
		{Op: kadm.DeleteConfig, Name: "leader.replication.throttled.rate"},
		{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.rate"},
	}
	if _, err := adm.AlterBrokerConfigs(ctx, unthrottle, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reassignment done", func() error {
		listed, err := adm.ListPartitionReassignments(ctx, moving)
		if err != nil {
			return err
		}
		if len(listed["kadm-moves"]) != 0 {
			return notYet("still reassigning")
		}
		return nil
	})
	// kgo may answer Metadata from its own recent copy for a few seconds: wait for the new replicas.
	eventually(t, "replicas after the move", func() error {
		if got := replicasOf(t, adm, "kadm-moves", 0); !slices.Equal(got, target) {
			return notYet(fmt.Sprintf("replicas %v, want %v", got, target))
		}
		return nil
	})
}

func TestLogDirMove(t *testing.T) {
	adm, ctx := admin(t), context.Background()
	if created, err := adm.CreateTopics(ctx, 1, 3, nil, "kadm-dirs"); err != nil || created.Error() != nil {
		t.Fatalf("create: %v %v", err, created.Error())
	}
	topic := kadm.TopicsSet{"kadm-dirs": {0: {}}}
	all, err := adm.DescribeAllLogDirs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("brokers described: %d", len(all))
	}
	// A broker creates its replica once it has seen the new partition: wait for it on broker 1.
	var dirs kadm.DescribedLogDirs
	var from kadm.DescribedLogDirPartition
	eventually(t, "kadm-dirs-0 on broker 1", func() error {
		var err error
		if dirs, err = adm.DescribeBrokerLogDirs(ctx, 1, topic); err != nil {
			return err
		}
		var ok bool
		if from, ok = dirs.LookupPartition("kadm-dirs", 0); !ok || from.IsFuture {
			return notYet(fmt.Sprintf("not there yet: %+v", dirs))
		}
		return nil
	})
	if !dirs.Ok() || len(dirs) != 2 {
		t.Fatalf("broker 1's directories: %+v", dirs)
	}
	var to string
	for d := range dirs {
		if d != from.Dir {
			to = d
		}
	}
	var move kadm.AlterReplicaLogDirsReq
	move.Add(to, topic)
	moved, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, move)
	if err != nil {
		t.Fatal(err)
	}
	moved.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		if r.Err != nil || r.Dir != to {
			t.Fatalf("move: %+v", r)
		}
	})
	eventually(t, "replica in its new directory", func() error {
		dirs, err := adm.DescribeBrokerLogDirs(ctx, 1, topic)
		if err != nil {
			return err
		}
		p, ok := dirs.LookupPartition("kadm-dirs", 0)
		if !ok || p.Dir != to || p.IsFuture {
			return notYet("not moved yet")
		}
		if _, stillThere := dirs.Lookup(from.Dir, "kadm-dirs", 0); stillThere {
			return notYet("still in the old directory")
		}
		return nil
	})
}
