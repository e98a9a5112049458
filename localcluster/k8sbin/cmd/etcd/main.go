// Command etcd runs the etcd server (go.etcd.io/etcd/server/v3) for the local cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
