package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/plan"
	"github.com/haproxy-haptic/haptic/internal/validate"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

type planFlags struct {
	files, toFiles  []string
	from, to        string
	fromDir, toDir  string
	fromAgent       string
	credentialsFile string
	version         string
	versionSet      bool // --haproxy-version was given
	schemaDir       string
	output          string
}

func newPlanCommand(stdout, stderr io.Writer) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan (-f FILE --from TEST | --from-dir DIR | --from-agent URL) (--to TEST | --to-dir DIR)",
		Short: "Show how a change would reach HAProxy: runtime operations or a reload, and why",
		Long: `Prints the plan that would bring HAProxy from a running state to a desired one:
the runtime operations, or the reload and the reasons for it (section and
directive), and the files it writes.

The running state is one of:
  --from TEST         a validation test's fixtures rendered with the config in -f
                      (no --from/--from-dir/--from-agent: the config with no objects)
  --from-dir DIR      a bundle written by 'haptic render -o DIR'
  --from-agent URL    what a running haptic-agent runs (GET URL/v1/config, with the
                      agent's credentials: --credentials-file FILE holding
                      'username:password', else HAPTIC_AGENT_USERNAME and
                      HAPTIC_AGENT_PASSWORD); the plan then uses the runtime API of
                      the agent's HAProxy version unless --haproxy-version is given
The desired state is one of:
  --to TEST           a validation test's fixtures rendered with -f, or with the
                      config in --to-file (e.g. an edited template library, so a
                      template author can see whether a change is structural)
  --to-dir DIR        a bundle written by 'haptic render -o DIR'
Give at most one of each. Bundle directories are read with the dataplane paths of
the config in -f when given, else the default ones (/etc/haproxy/...).

The agent's answer holds certificate private keys: plan prints operations,
reasons and file names only, never file contents (certificate operations show
the certificate's path, not its PEM).

Exit codes: 0 the change is reload-free, 1 it needs a reload, 2 usage or config error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.versionSet = cmd.Flags().Changed("haproxy-version")
			return runPlan(cmd.Context(), f, stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "HAProxyTemplateConfig YAML (repeatable; merged in order)")
	fl.StringArrayVar(&f.toFiles, "to-file", nil, "config for the second state (repeatable; default: the same as -f)")
	fl.StringVar(&f.from, "from", "", "validation test whose fixtures are the running state (default: no objects)")
	fl.StringVar(&f.to, "to", "", "validation test whose fixtures are the desired state (default: no objects)")
	fl.StringVar(&f.fromDir, "from-dir", "", "directory written by 'haptic render -o DIR' holding the running state")
	fl.StringVar(&f.toDir, "to-dir", "", "directory written by 'haptic render -o DIR' holding the desired state")
	fl.StringVar(&f.fromAgent, "from-agent", "", "base URL of a haptic-agent whose running file set is the running state (e.g. http://10.244.0.5:5555)")
	fl.StringVar(&f.credentialsFile, "credentials-file", "", "file holding the agent's 'username:password' for --from-agent (else HAPTIC_AGENT_USERNAME / HAPTIC_AGENT_PASSWORD)")
	fl.StringVar(&f.version, "haproxy-version", "2.6.12", "HAProxy version whose runtime API the plan may use (default with --from-agent: the agent's)")
	fl.StringVar(&f.schemaDir, "schema-dir", schemaDirDefault(), "extra OpenAPI v3 schemas or CRDs for typed access ($HAPTIC_SCHEMA_DIR)")
	fl.StringVarP(&f.output, "output", "o", "summary", "output format: summary or json")
	return cmd
}

// check rejects flag combinations that do not name one running and one desired state.
func (f planFlags) check() error {
	count := func(vals ...string) int {
		n := 0
		for _, v := range vals {
			if v != "" {
				n++
			}
		}
		return n
	}
	switch {
	case f.output != "summary" && f.output != "json":
		return fmt.Errorf("-o %q: want summary or json", f.output)
	case count(f.from, f.fromDir, f.fromAgent) > 1:
		return errors.New("--from, --from-dir and --from-agent each name the running state: give one")
	case count(f.to, f.toDir) > 1:
		return errors.New("--to and --to-dir each name the desired state: give one")
	case f.credentialsFile != "" && f.fromAgent == "":
		return errors.New("--credentials-file is for --from-agent")
	case len(f.toFiles) > 0 && f.toDir != "":
		return errors.New("--to-file renders --to; --to-dir reads a rendered bundle")
	case f.fromDir == "" && f.fromAgent == "" && len(f.files) == 0:
		return errors.New("the running state: give --from TEST with -f FILE, --from-dir DIR or --from-agent URL")
	case f.toDir == "" && len(f.files) == 0 && len(f.toFiles) == 0:
		return errors.New("the desired state: give --to TEST with -f FILE (or --to-file FILE), or --to-dir DIR")
	}
	return nil
}

func runPlan(ctx context.Context, f planFlags, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.check(); err != nil {
		return usageError(err)
	}
	version := f.version
	if f.versionSet || f.fromAgent == "" {
		if _, err := plan.CapabilitiesFor(version); err != nil {
			return usageError(err)
		}
	}

	// The configs render test states (p the running one, tp the desired one) and
	// say where bundle dirs keep files.
	var p, tp *pipeline.Pipeline
	var err error
	if len(f.files) > 0 {
		if p, err = loadPipeline(f.files, pipeline.Options{SchemaDir: f.schemaDir}); err != nil {
			return err
		}
	}
	tp = p
	if len(f.toFiles) > 0 {
		if tp, err = loadPipeline(f.toFiles, pipeline.Options{SchemaDir: f.schemaDir}); err != nil {
			return err
		}
	}
	layout := haproxycheck.DefaultLayout
	if p != nil {
		layout = p.Layout
	} else if tp != nil {
		layout = tp.Layout
	}

	var running *bundle.Bundle
	switch {
	case f.fromAgent != "":
		var agentVersion string
		running, agentVersion, err = fetchAgentConfig(ctx, f.fromAgent, f.credentialsFile)
		if err != nil {
			return err
		}
		if !f.versionSet {
			version = agentVersion
		}
	case f.fromDir != "":
		if running, err = readBundleDir(f.fromDir, layout); err != nil {
			return usageError(err)
		}
	default:
		if running, err = renderState(ctx, p, f.from); err != nil {
			return err
		}
	}

	var desired *bundle.Bundle
	switch {
	case f.toDir != "":
		if desired, err = readBundleDir(f.toDir, layout); err != nil {
			return usageError(err)
		}
	default:
		if desired, err = renderState(ctx, tp, f.to); err != nil {
			return err
		}
	}

	caps, err := plan.CapabilitiesFor(version)
	if err != nil {
		return fmt.Errorf("agent %s: HAProxy version: %w", f.fromAgent, err)
	}
	res := plan.Plan(plan.Running{Bundle: running}, desired, caps)
	if f.output == "json" {
		data, err := json.MarshalIndent(planJSON(res, caps), "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(data))
	} else {
		writePlan(stdout, res, caps)
	}
	if res.Reload {
		return &exitError{code: exitTestsFailed, err: fmt.Errorf("the change needs a reload"), reported: true}
	}
	return nil
}

// fetchAgentConfig reads the file set a haptic-agent runs and its HAProxy version.
func fetchAgentConfig(ctx context.Context, base, credFile string) (*bundle.Bundle, string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, "", usageError(fmt.Errorf("--from-agent %q: want the agent's base URL, e.g. http://10.244.0.5:5555 (credentials go in --credentials-file)", base))
	}
	user, pass, err := agentapi.Credentials(credFile, os.Getenv)
	if err != nil {
		return nil, "", usageError(err)
	}
	c := &agentapi.Client{BaseURL: strings.TrimRight(base, "/"), Username: user, Password: pass}
	b, version, err := c.Config(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("agent %s: %w", base, err)
	}
	return b, version, nil
}

// renderState renders a validation test's fixtures (or no objects) with a config.
func renderState(ctx context.Context, p *pipeline.Pipeline, test string) (*bundle.Bundle, error) {
	tests := p.Config.Spec.ValidationTests
	t, ok := tests[test]
	if test != "" && !ok {
		return nil, usageError(fmt.Errorf("no validation test named %q", test))
	}
	if global, ok := tests[validate.GlobalTest]; ok {
		t = validate.MergeGlobal(global, t)
	}
	fx, err := p.Fixtures(test, t)
	if err != nil {
		return nil, usageError(err)
	}
	res, err := p.Render(ctx, fx)
	if err != nil {
		return nil, usageError(fmt.Errorf("render %q: %w", test, err))
	}
	return res.Bundle, nil
}

// planOutput is -o json: the plan without file contents.
type planOutput struct {
	HAProxyVersion string            `json:"haproxyVersion"`
	Reload         bool              `json:"reload"`
	Reasons        []plan.Reason     `json:"reasons,omitempty"`
	Ops            []json.RawMessage `json:"ops,omitempty"`
	// Files are the files the plan writes, by name and content hash.
	Files []fileRef `json:"files,omitempty"`
	// Aliases: new backends that run as spare backends until the next reload.
	Aliases map[string]string `json:"aliases,omitempty"`
}

type fileRef struct {
	Kind bundle.Kind `json:"kind"`
	Name string      `json:"name"`
	Hash string      `json:"hash"`
}

func planJSON(res plan.Result, caps plan.Capabilities) planOutput {
	out := planOutput{HAProxyVersion: caps.Version, Reload: res.Reload, Reasons: res.Reasons}
	for _, op := range res.Ops {
		out.Ops = append(out.Ops, redactedOp(op))
	}
	for _, f := range res.Files {
		out.Files = append(out.Files, fileRef{Kind: f.Kind, Name: f.Name, Hash: f.Hash})
	}
	if res.Running != nil && len(res.Running.Aliases) > 0 {
		out.Aliases = res.Running.Aliases
	}
	return out
}

// redactedOp is an operation's JSON with secret content replaced by its size:
// string fields holding a PEM block (certificates and their keys) or named "pem".
func redactedOp(op runtime.Op) json.RawMessage {
	data, err := json.Marshal(op)
	if err != nil {
		return json.RawMessage(fmt.Sprintf(`{"op":%q,"error":"not shown"}`, opKind(op)))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return json.RawMessage(fmt.Sprintf(`{"op":%q,"error":"not shown"}`, opKind(op)))
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		raw := fields[k]
		var s string
		if json.Unmarshal(raw, &s) != nil {
			if strings.Contains(string(raw), "-----BEGIN") { // a secret inside a nested value
				data = bytes.Replace(data, raw, []byte(`"(not shown)"`), 1)
			}
			continue
		}
		if strings.EqualFold(k, "pem") || strings.Contains(s, "-----BEGIN") {
			// Replace the value in place so that the fields keep their order ("op" first).
			data = bytes.Replace(data, []byte(`"`+k+`":`+string(raw)), []byte(fmt.Sprintf(`"%s":"(%d bytes, not shown)"`, k, len(s))), 1)
		}
	}
	return data
}

func opKind(op runtime.Op) string {
	if op.Operation == nil {
		return ""
	}
	return op.Kind()
}

func writePlan(w io.Writer, res plan.Result, caps plan.Capabilities) {
	switch {
	case res.Reload:
		fmt.Fprintf(w, "reload needed on HAProxy %s, because:\n", caps.Version)
		for _, r := range res.Reasons {
			if r.Directive != "" {
				fmt.Fprintf(w, "  %s: %s: %s\n", r.Section, r.Directive, r.Detail)
			} else {
				fmt.Fprintf(w, "  %s: %s\n", r.Section, r.Detail)
			}
		}
	case len(res.Ops) == 0:
		fmt.Fprintln(w, "no change reaches HAProxy")
	default:
		fmt.Fprintf(w, "reload-free on HAProxy %s: %d runtime operations\n", caps.Version, len(res.Ops))
		for _, op := range res.Ops {
			fmt.Fprintf(w, "  %s\n", redactedOp(op))
		}
	}
	if res.Running != nil {
		names := make([]string, 0, len(res.Running.Aliases))
		for d := range res.Running.Aliases {
			names = append(names, d)
		}
		sort.Strings(names)
		for _, d := range names {
			fmt.Fprintf(w, "  backend %s runs as spare backend %s until the next reload\n", d, res.Running.Aliases[d])
		}
	}
	for _, f := range res.Files {
		fmt.Fprintf(w, "  writes %s\n", f.Target())
	}
}
