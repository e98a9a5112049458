// Package images holds the container image definitions (haptic/Dockerfile for the
// controller, haproxy/Dockerfile for HAProxy with haptic-agent, versions.env for what
// they are built from) and a static test of them: there is no Docker engine where the
// tests run, so the test reads the Dockerfiles instead of building them.
package images
