package validation

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	segjson "github.com/segmentio/encoding/json"
)

// unmarshalCorpus holds documents both decoders must agree on: valid ones
// (same values, same Go types) and invalid ones (the same error).
var unmarshalCorpus = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.50`, `1e3`, `-1E+03`, `1.0e-7`,
	`12345678901234567890123456789`, `"x"`, `""`, ` {"a" : [1, "b", null, true, {"c": {}}]} ` + "\n\t\r",
	`{"a":1,"a":2}`, `{"":0}`, `[[[[[]]]]]`, `{"k\u00e9y":"\ud83d\ude00","e":"\\\"\/\b\f\n\r\t"}`,
	`"\u0000"`, `"\ud800"`, `"\udc00x"`, `"\ud83dx"`, "\"\xff\xfe\"", "\"caf\xc3\xa9\"", "\"\xc3\"", "{\"\xff\":1}",
	`{"project":"website-v2"}`, `{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`,
	"", " ", `{`, `}`, `[`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `{"a":1}{`, `{"a":1} x`, `[] []`, `1 2`,
	`01`, `-`, `-01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `NaN`, `Infinity`, `nul`, `nulll`, `tru`, `True`,
	`"abc`, "\"a\tb\"", "\"a\nb\"", "\"\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, "\ufeff{}", "{}\x00", "\x0b{}", "\f{}",
	`[1 2]`, `{"a":1 "b":2}`, `{"a"::1}`, `{,}`, `[,]`, `{"a":[}]}`, `{"a":"b"]`, `123abc`, `"a"b`, `true false`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	strings.Repeat("[", 10001),
	`"` + strings.Repeat("[", 20000) + `"`,
}

// checkUnmarshal compares Unmarshal and Validate's zero-copy decoding with
// jsonschema.UnmarshalJSON (encoding/json), the decoder they replace.
func checkUnmarshal(t *testing.T, raw []byte) {
	t.Helper()
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	for _, flags := range []segjson.ParseFlags{segjson.UseNumber, segjson.UseNumber | segjson.ZeroCopy} {
		got, err := unmarshal(raw, flags)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%.80q: error %v, want %v", raw, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%.80q: decoded %#v, want %#v", raw, got, want)
		}
	}
}

func TestUnmarshalLikeEncodingJSON(t *testing.T) {
	for _, doc := range unmarshalCorpus {
		checkUnmarshal(t, []byte(doc))
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, doc := range unmarshalCorpus {
		if len(doc) < 1000 {
			f.Add([]byte(doc))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkUnmarshal(t, raw)
	})
}

// benchDoc is a discover_team_agents output: three people, three agents.
const benchDoc = `{"people":[{"handle":"maya","display_name":"Maya Okafor","avatar_url":"https://avatars.example.com/maya.png","color":2,"away":false},` +
	`{"handle":"theo","display_name":"Theo Lindqvist","avatar_url":null,"color":5,"away":true},{"handle":"rin","display_name":"Rin Sato","avatar_url":null,"color":6,"away":false}],` +
	`"agents":[{"agent_id":"maya/builder","owner":"maya","name":"builder","avatar_url":"https://avatars.example.com/maya-builder.png","model":"claude-sonnet-4-5",` +
	`"client":"claude-code","role":"Builds website features","capabilities":[{"kind":"repo","name":"prickle-dev/website-v2"},{"kind":"deploy","name":"preview-deploys"}],` +
	`"availability":"online","trust_level":"owner_verified","last_seen_at":"2026-05-01T11:58:00Z"},{"agent_id":"theo/reviewer","owner":"theo","name":"reviewer",` +
	`"avatar_url":null,"model":"gpt-5","client":"codex-cli","role":"Reviews pull requests","capabilities":[{"kind":"repo","name":"prickle-dev/website-v2"}],` +
	`"availability":"away","trust_level":"unverified","last_seen_at":null},{"agent_id":"rin/analyst","owner":"rin","name":"analyst","avatar_url":null,` +
	`"model":"gemini-2.5-pro","client":"gemini-cli","role":"","capabilities":[],"availability":"offline","trust_level":"unverified","last_seen_at":null}]}`

// BenchmarkUnmarshal compares the decoders on benchDoc: encoding/json (as
// jsonschema.UnmarshalJSON, what Validate used), Unmarshal, and the
// zero-copy decoding Validate uses.
func BenchmarkUnmarshal(b *testing.B) {
	raw := []byte(benchDoc)
	for _, c := range []struct {
		name string
		dec  func([]byte) (any, error)
	}{
		{"encoding-json", func(raw []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(raw)) }},
		{"Unmarshal", Unmarshal},
		{"zero-copy", func(raw []byte) (any, error) { return unmarshal(raw, segjson.UseNumber|segjson.ZeroCopy) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.dec(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
