// Package deploy delivers bundles to the HAProxy pods' agents: one worker per pod,
// all pods in parallel, each apply bounded by syncTimeout. The latest bundle always
// wins; a new pod gets it at once. Reloads of one pod are paced by
// minDeploymentInterval: a change inside the window is scheduled for the window's
// end, never dropped. It speaks the agent protocol through internal/agentapi (the
// client and wire types) and never imports the agent itself.
package deploy
