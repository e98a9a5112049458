// Command kubectl is the upstream kubectl (k8s.io/kubectl v0.37.2).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins
)

func main() {
	// Verbosity must be known before command construction, as upstream does.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck // best effort, as upstream
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
