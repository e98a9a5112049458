// Command kube-scheduler runs the upstream Kubernetes scheduler (k8s.io/kubernetes v1.37.2).
package main

import (
	"os"
	_ "time/tzdata" // time zone data, as upstream's main embeds it

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
