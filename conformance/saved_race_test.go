package conformance_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
)

// credentialPrefixRace is a saved race whose calls before the group use a
// credential on a second part of the model (a message, besides the task
// that gave it): the shape exploration saves when a probe of not_runner
// comes before a race.
const credentialPrefixRace = `# The calls before a group are judged as exploration judged them.

call -as runner:ana-builder-r1 claim_task '{"idempotency_key":"k","task_id":"t1"}'
save execution_credential.token T0
ok

call -as runner:ana-builder-r1 claim_discussion '{"harness":2,"idempotency_key":"k4","message_id":"m1"}'
refused not_your_room

call -as $T0 claim_discussion '{"harness":2,"idempotency_key":"k2","message_id":"m1"}'
refused not_runner

call -as $T0 claim_discussion '{"harness":2,"idempotency_key":"k2","message_id":"m1"}'
refused not_runner

race -as $T0 claim_discussion '{"harness":2,"idempotency_key":"k3","message_id":"m1"}'
race -as runner:ana-builder-r1 claim_task '{"idempotency_key":"k","task_id":"t1"}'
concurrently -tries 3

-- fixture.json --
{
  "version": 1,
  "projects": [{"slug": "api", "name": "Api"}],
  "people": [{"handle": "ana", "display_name": "Ana Tester"}],
  "memberships": [{"project": "api", "person": "ana"}],
  "agents": [{"id": "ana/builder", "model": "gpt-5", "client": "codex-cli", "availability": "idle", "trust_level": "owner_verified"}],
  "runners": [{"id": "ana-builder-r1", "agent": "ana/builder", "name": "ana-builder-r1"}],
  "rooms": [{"id": "api-general", "project": "api", "kind": "general", "name": "general"}],
  "messages": [{"id": "m1", "room": "api-general", "kind": "room_message", "author": "ana", "body": "hello"}],
  "tasks": [{"id": "t1", "project": "api", "agent": "ana/builder"}]
}
`

// TestSavedRacePrefix: a saved race passes against the reference server
// when calls before its group use a credential on two parts of the model
// (a task and a message), and when its tries use them again. Each failed
// with "unknown": the calls before the first group went through the
// check's parts, where a call on two parts that each had states was
// undecided; and a group on two parts that one try's group had left
// together counted them as two.
func TestSavedRacePrefix(t *testing.T) {
	sp, _ := loadSuite(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prefix.txtar"), []byte(credentialPrefixRace), 0o666); err != nil {
		t.Fatal(err)
	}
	saved, err := conformance.LoadScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range []conformance.Profile{conformance.Reference, conformance.Core} {
		o := conformance.Options{Target: referenceTarget("reference", nil, nil), Profile: prof, Spec: sp}
		if got := runSaved(t, saved, o); got.Status != conformance.Pass {
			t.Errorf("%s profile: %s, want pass\n%s", prof, got.Status, got.Log)
		}
	}
}
