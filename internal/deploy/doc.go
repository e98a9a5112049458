// Package deploy delivers bundles to the HAProxy pods' agents: one worker per pod,
// all pods in parallel, each apply bounded by syncTimeout. The latest bundle always
// wins; a new pod gets it at once. Reloads of one pod are paced by
// minDeploymentInterval: a change inside the window is scheduled for the window's
// end, never dropped. A worker that has no record of its pod (a new leader, a
// restarted controller) first reads what the pod runs — files, HAProxy version and
// the pool aliases the agent keeps with them — and plans from that, so a takeover
// costs no reload when the change is runtime-applicable. A bundle the admission
// webhook rendered can be planned before it is desired (Prepare): its delivery
// then finds the plan made. It speaks the agent protocol through internal/agentapi
// (the client and wire types) and never imports the agent itself.
package deploy
