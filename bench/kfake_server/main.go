// A franz-go kfake cluster of 3 brokers on kernel-chosen ports, for bench/peers.py: it prints the
// brokers' addresses on one line once they listen, then runs until its standard input closes.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(0, 0, 0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer cluster.Close()
	fmt.Println(strings.Join(cluster.ListenAddrs(), ","))
	_, _ = io.Copy(io.Discard, os.Stdin)
}
