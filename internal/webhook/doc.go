// Package webhook answers the API server's admission reviews for watched resources
// whose watchedResources entry sets enableValidationWebhook: a proposed object is
// admitted only if the configuration still renders with it (bad annotation values,
// templates that fail on it, objects the libraries reject). The decision itself is
// the caller's (Validator: the controller renders the live stores with the proposed
// object in place); this package speaks AdmissionReview v1 over HTTPS, reloads its
// certificate when the mounted files change, and counts requests.
//
// It never runs haproxy or any other process on the proposed object: the controller
// still validates every rendered bundle with `haproxy -c` before it reaches a pod, so
// what the webhook lets through cannot reach HAProxy unchecked either.
package webhook
