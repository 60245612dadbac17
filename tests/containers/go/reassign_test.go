// testcontainers-go with franz-go's kadm against kraftwire's image (run by tests/containers/test_go.py):
// a throttled reassignment stands still on the virtual clock until the control plane advances it.
// KRAFTWIRE_TEST_PORT is broker 1's host port (brokers 2 and 3 take the next two). The part between
// the readme markers is README's Go snippet, word for word.
package containers

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestThrottledReassignmentOnTheVirtualClock(t *testing.T) {
	port, err := strconv.Atoi(os.Getenv("KRAFTWIRE_TEST_PORT"))
	if err != nil {
		t.Fatal("KRAFTWIRE_TEST_PORT is not set: run this from tests/containers/test_go.py")
	}
	ctx := context.Background()
	// readme: go
	brokers := []string{}
	for i := range 3 { // brokers 1-3 on port, port+1, port+2, bound 1:1 so the advertised ports reach them
		brokers = append(brokers, fmt.Sprintf("%d/tcp", port+i))
	}
	kraftwire, err := testcontainers.Run(ctx, "localhost/kraftwire:latest",
		testcontainers.WithEnv(map[string]string{"KRAFTWIRE_PORT": strconv.Itoa(port),
			"KRAFTWIRE_ADVERTISED_HOST": "localhost", "KRAFTWIRE_VIRTUAL_CLOCK": "true",
			"KRAFTWIRE_CONTROL_TOKEN": "secret"}),
		testcontainers.WithExposedPorts(append(brokers, "8080/tcp")...),
		testcontainers.WithHostConfigModifier(func(host *container.HostConfig) {
			host.PortBindings = network.PortMap{}
			for _, broker := range brokers {
				p := network.MustParsePort(broker)
				host.PortBindings[p] = []network.PortBinding{{HostPort: strconv.Itoa(int(p.Num()))}}
			}
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("kraftwire ready on")))
	defer testcontainers.CleanupContainer(t, kraftwire)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("localhost:%d", port)))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	adm := kadm.NewClient(client)

	created, err := adm.CreateTopic(ctx, 1, 2, map[string]*string{ // 100 MiB, every replica throttled
		"kraftwire.partition.size.bytes":          kadm.StringPtr("104857600"),
		"follower.replication.throttled.replicas": kadm.StringPtr("*")}, "orders")
	if err != nil || created.Err != nil {
		t.Fatal(err, created.Err)
	}
	rate := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "follower.replication.throttled.rate",
		Value: kadm.StringPtr("10485760")}} // 10 MiB/s
	if _, err := adm.AlterBrokerConfigs(ctx, rate, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	topics, err := adm.ListTopics(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	replicas := topics["orders"].Partitions[0].Replicas
	target := []int32{replicas[0]} // keep the first replica, move the second to the broker without one
	for _, b := range []int32{1, 2, 3} {
		if !slices.Contains(replicas, b) {
			target = append(target, b)
		}
	}
	var move kadm.AlterPartitionAssignmentsReq
	move.Assign("orders", 0, target)
	if _, err := adm.AlterPartitionAssignments(ctx, move); err != nil {
		t.Fatal(err)
	}
	moving, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"orders": {0: {}}})
	if err != nil || len(moving) != 1 { // the clock stands still: still moving
		t.Fatalf("listed %v, %v", moving, err)
	}

	control, err := kraftwire.PortEndpoint(ctx, "8080/tcp", "http")
	if err != nil {
		t.Fatal(err)
	}
	advance, _ := http.NewRequest("POST", control+"/api/clock/advance",
		strings.NewReader(`{"until": "reassignments-done"}`))
	advance.Header.Set("Authorization", "Bearer secret")
	answer, err := http.DefaultClient.Do(advance)
	if err != nil || answer.StatusCode != 200 {
		t.Fatal(err, answer)
	}
	answer.Body.Close()
	moving, err = adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"orders": {0: {}}})
	if err != nil || len(moving) != 0 {
		t.Fatalf("still moving after the clock advanced: %v, %v", moving, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; { // each broker learns it from the metadata log
		topics, _ = adm.ListTopics(ctx, "orders")
		got := topics["orders"].Partitions[0].Replicas
		if slices.Equal(got, target) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas %v, want %v", got, target)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// readme: end
}
