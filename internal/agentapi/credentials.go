package agentapi

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrNoCredentials: neither a credentials file nor the environment names them.
var ErrNoCredentials = errors.New("no agent credentials: --credentials-file or HAPTIC_AGENT_USERNAME and HAPTIC_AGENT_PASSWORD")

// Credentials reads the agent API's "username:password" from file, else from
// HAPTIC_AGENT_USERNAME and HAPTIC_AGENT_PASSWORD (through getenv). The agent and
// the clients that talk to it (haptic plan --from-agent) read them the same way.
func Credentials(file string, getenv func(string) string) (string, string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("credentials file: %w", err)
		}
		user, pass, ok := strings.Cut(strings.TrimRight(string(data), "\r\n"), ":")
		if !ok || user == "" || pass == "" {
			return "", "", errors.New("credentials file: want one line 'username:password'")
		}
		return user, pass, nil
	}
	user, pass := getenv("HAPTIC_AGENT_USERNAME"), getenv("HAPTIC_AGENT_PASSWORD")
	if user == "" || pass == "" {
		return "", "", ErrNoCredentials
	}
	return user, pass, nil
}
