package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/internal/validation"
	segjson "github.com/segmentio/encoding/json"
)

// envelope is what the server reads of one incoming JSON-RPC message
// before the go-sdk reads it: the members the go-sdk's decoder
// (jsonrpc.DecodeMessage) reads, with the same names, matched exactly as
// it matches them, and the types it decodes them into, so that what
// passes here is what the go-sdk can read.
type envelope struct {
	Version   string         `json:"jsonrpc"`
	ID        jsontext.Value `json:"id"`     // absent: nil
	RawMethod jsontext.Value `json:"method"` // absent: a response (null is present, as for the go-sdk)
	Params    jsontext.Value `json:"params"`
	Result    jsontext.Value `json:"result"`
	Error     *errorObject   `json:"error"`
	Method    string         `json:"-"` // RawMethod's string (checkEnvelope)
	raw       jsontext.Value // the message as sent
}

// errorObject is a JSON-RPC error object as the go-sdk decodes it
// (jsonrpc.Error): an error member of another shape is a message the
// go-sdk cannot read.
type errorObject struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data"`
}

// isRequest reports whether m is a request (a call or a notification)
// rather than a response: it has a method member, as the go-sdk decides.
func (m *envelope) isRequest() bool { return len(m.RawMethod) > 0 }

// isCall reports whether m is a request with an id.
func (m *envelope) isCall() bool { return m.isRequest() && len(m.ID) > 0 }

// isCancellation reports whether m is a notifications/cancelled.
func (m *envelope) isCancellation() bool {
	return m.isRequest() && len(m.ID) == 0 && m.Method == "notifications/cancelled"
}

// uncancelled returns body, the messages msgs, without its cancellation
// notifications: prickled runs every call it read to its end and answers
// it (MCP lets a receiver ignore a cancellation). A call cancelled in the
// go-sdk would be answered with an error, or, still queued, with code 0,
// while its claim may have committed. body comes back as it is when it
// holds none; nil when nothing else is left; otherwise a batch of the rest.
func uncancelled(body []byte, msgs []envelope) ([]byte, []envelope) {
	if !slices.ContainsFunc(msgs, func(m envelope) bool { return m.isCancellation() }) {
		return body, msgs
	}
	kept := slices.DeleteFunc(slices.Clone(msgs), func(m envelope) bool { return m.isCancellation() })
	if len(kept) == 0 {
		return nil, nil
	}
	return batchOf(kept), kept
}

// batchOf is the batch of msgs, each as it was sent.
func batchOf(msgs []envelope) []byte {
	b := []byte{'['}
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.raw...)
	}
	return append(b, ']')
}

// sessionless reports whether m is a request of the sessionless protocol
// (2026-07-28, SEP-2575), which needs no initialize, as the go-sdk tells
// one: a call whose _meta protocolVersion is a string naming that
// version or a later one. Any other value there (a number, null, an
// object, an older version) leaves it a request of the protocol with
// sessions.
func (m *envelope) sessionless() bool {
	if !m.isCall() || m.Params.Kind() != '{' {
		return false
	}
	var p struct {
		Meta map[string]jsontext.Value `json:"_meta"`
	}
	if jsonv2.Unmarshal(m.Params, &p, jsontext.AllowInvalidUTF8(true)) != nil || p.Meta[mcp.MetaKeyProtocolVersion].Kind() != '"' {
		return false
	}
	var v string
	return jsonv2.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v, jsontext.AllowInvalidUTF8(true)) == nil && v >= sessionlessSince
}

// sessionlessSince is the first protocol version without sessions.
const sessionlessSince = "2026-07-28"

// rpcError is a JSON-RPC error answered by the server itself: the
// message never reaches the go-sdk.
type rpcError struct {
	id      jsontext.Value // the request's id as sent, or nil (null)
	code    int64
	message string
	status  int // the HTTP status it goes with
}

func (e *rpcError) Error() string { return e.message }

// response is the JSON-RPC error response, one line of JSON.
func (e *rpcError) response() []byte {
	id := json.RawMessage("null")
	if len(e.id) > 0 {
		id = json.RawMessage(e.id)
	}
	b, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: e.code, Message: e.message}})
	return b
}

// write answers the error over HTTP.
func (e *rpcError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	w.Write(append(e.response(), '\n'))
}

func parseError(format string, args ...any) *rpcError {
	return &rpcError{code: jsonrpc.CodeParseError, message: fmt.Sprintf(format, args...), status: http.StatusBadRequest}
}

func invalidRequest(id jsontext.Value, format string, args ...any) *rpcError {
	return &rpcError{id: id, code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf(format, args...), status: http.StatusBadRequest}
}

// maxExactID is the largest integer id every JSON-RPC peer holds exactly
// (2^53-1, JavaScript's Number.MAX_SAFE_INTEGER); the go-sdk reads number
// ids as float64, then int64.
const maxExactID = 1<<53 - 1

// batchesRemoved is the first MCP version without JSON-RPC batches: the
// go-sdk refuses a batch on a session that negotiated it or a later one
// (over stdio by ending the session).
const batchesRemoved = "2025-06-18"

// refuseBatch refuses body when it is a batch and version, the protocol
// version of the session it is sent on, has none.
func refuseBatch(body []byte, version string) *rpcError {
	if jsontext.Value(body).Kind() == '[' && version >= batchesRemoved {
		return invalidRequest(nil, "invalid request: protocol version %s has no JSON-RPC batches", version)
	}
	return nil
}

// maxDepth is how deep a body may nest objects and arrays, the message's
// own object (and a batch's array) included: the go-sdk's decoder refuses
// deeper ones (its internal/json defaultMaxDepth), and over stdio that
// refusal ends the session. TestDepthIsTheGoSDKs holds the two together.
const maxDepth = 1000

// readMessages checks the body of one HTTP POST or one stdio line before
// the go-sdk reads it, and returns its messages (more than one for a
// batch); it is the one place that decides which messages the go-sdk
// gets. It answers a parse error (-32700) for anything but exactly one
// JSON value in which no object names a member twice: text after the
// value (a claim followed by "xyz", two concatenated objects) is never
// executed, and no decoder can read a different message than the one
// checked. It answers invalid request (-32600) for a body nested deeper
// than maxDepth, and for a message the go-sdk could not read or would
// read as another: not an object with "jsonrpc": "2.0"; a method that is
// not a string; a response without an id; an error member that is not a
// JSON-RPC error object; an id that is not a string of Unicode characters
// or an integer within ±(2^53-1) (the go-sdk would turn 1.5 into 1, larger
// integers into other numbers and invalid strings into U+FFFD, so the
// answer would carry another id than the request); a batch in which two
// requests have one id (by value).
//
// Invalid UTF-8 and lone surrogates pass here, so that in tool arguments
// the input validation refuses them naming their JSON pointer.
func readMessages(b []byte, maxDigits int) ([]envelope, *rpcError) {
	v := jsontext.Value(b)
	if depth, digits := measure(b); depth > maxDepth || digits > maxDigits {
		switch {
		case !v.IsValid(jsontext.AllowInvalidUTF8(true)):
			return nil, parseError("parse error: %s", syntaxReason(b))
		case digits > maxDigits:
			return nil, longNumber(v, maxDigits)
		}
		return nil, invalidRequest(messageID(v), "invalid request: nested deeper than %d levels", maxDepth)
	}
	if v.Kind() == '{' {
		// One message, read in one pass: the decoder checks the whole
		// document (syntax, names twice, text after it) as it goes.
		m := make([]envelope, 1)
		if plainEnvelope(b, &m[0]) {
			if rerr := checkEnvelope(&m[0]); rerr != nil {
				return nil, rerr
			}
			m[0].raw = v
			return m, nil
		}
		m[0] = envelope{}
		if err := jsonv2.Unmarshal(b, &m[0], jsontext.AllowInvalidUTF8(true)); err != nil {
			if !v.IsValid(jsontext.AllowInvalidUTF8(true)) {
				return nil, parseError("parse error: %s", syntaxReason(b))
			}
			return nil, badMember(v, err)
		}
		if rerr := checkEnvelope(&m[0]); rerr != nil {
			return nil, rerr
		}
		m[0].raw = v
		return m, nil
	}
	if !v.IsValid(jsontext.AllowInvalidUTF8(true)) {
		return nil, parseError("parse error: %s", syntaxReason(b))
	}
	var raws []jsontext.Value
	switch v.Kind() {
	case '[':
		if err := jsonv2.Unmarshal(b, &raws, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, parseError("parse error: %v", err)
		}
		if len(raws) == 0 {
			return nil, invalidRequest(nil, "invalid request: empty batch")
		}
	default:
		raws = []jsontext.Value{v}
	}
	msgs := make([]envelope, len(raws))
	ids := map[string]bool{} // idKey of the batch's calls
	for i, raw := range raws {
		if raw.Kind() != '{' {
			return nil, invalidRequest(nil, "invalid request: a JSON-RPC message is an object")
		}
		m := &msgs[i]
		if err := jsonv2.Unmarshal(raw, m, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, badMember(raw, err)
		}
		m.raw = raw
		if rerr := checkEnvelope(m); rerr != nil {
			return nil, rerr
		}
		// The go-sdk answers one of two calls with one id and drops the
		// other.
		if k := idKey(m.ID); m.isCall() && ids[k] {
			return nil, invalidRequest(nil, "invalid request: two requests of the batch have the id %s", validation.Cut(string(m.ID)))
		} else if m.isCall() {
			ids[k] = true
		}
	}
	return msgs, nil
}

// plainEnvelope reads the envelope of b, one message, as jsonv2.Unmarshal
// reads it, for the common message alone: one JSON object, member names
// without escapes, "jsonrpc" a plain string, no "error" member. It
// reports false for anything else (and for any error, which the full
// read then names), so that the full read decides every other message.
// The members it keeps are slices of b, not copies: the most a call pays
// the front door for is one pass of the tokenizer.
// TestPlainEnvelopeIsUnmarshal and FuzzPlainEnvelope hold it to the full
// read.
func plainEnvelope(b []byte, m *envelope) bool {
	d := envelopeDecoders.Get().(*jsontext.Decoder)
	defer envelopeDecoders.Put(d)
	d.Reset(bytes.NewReader(b), jsontext.AllowInvalidUTF8(true))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return false
	}
	for d.PeekKind() != '}' {
		// What ReadValue returns lasts until the next read: both are
		// taken from b by their place.
		name, err := d.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		end := int(d.InputOffset())
		name = b[end-len(name) : end : end]
		val, err := d.ReadValue()
		if err != nil {
			return false
		}
		end = int(d.InputOffset())
		raw := jsontext.Value(b[end-len(val) : end : end])
		switch string(name) {
		case `"jsonrpc"`:
			// jsonv2 unescapes, and turns invalid UTF-8 into U+FFFD.
			if raw.Kind() != '"' || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
				return false
			}
			m.Version = string(raw[1 : len(raw)-1])
		case `"id"`:
			m.ID = raw
		case `"method"`:
			m.RawMethod = raw
		case `"params"`:
			m.Params = raw
		case `"result"`:
			m.Result = raw
		case `"error"`:
			return false
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	_, err := d.ReadToken()
	return err == io.EOF // nothing after the object
}

// envelopeDecoders are plainEnvelope's decoders, kept between calls.
var envelopeDecoders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

// badMember is the invalid request of a message (valid JSON) whose
// envelope members have the wrong types, with its id when it can be
// echoed.
func badMember(raw jsontext.Value, err error) *rpcError {
	return invalidRequest(messageID(raw), "invalid request: %s", memberReason(err))
}

// messageID returns the id of raw, valid JSON, when it is one message and
// its id can be echoed, else nil.
func messageID(raw jsontext.Value) jsontext.Value {
	if raw.Kind() != '{' {
		return nil
	}
	var id struct {
		ID jsontext.Value `json:"id"`
	}
	_ = jsonv2.Unmarshal(raw, &id, jsontext.AllowInvalidUTF8(true))
	return exactID(id.ID)
}

// longNumber is the refusal of raw, valid JSON that holds a number of
// more than maxDigits digits: invalid params when it is in "params",
// invalid request elsewhere, naming where it is and quoting a few dozen
// of its characters.
func longNumber(raw jsontext.Value, maxDigits int) *rpcError {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return invalidRequest(nil, "invalid request: a number has more than %d digits", maxDigits)
		}
		if tok.Kind() != '0' {
			continue
		}
		lit := tok.String()
		digits, integer := numberDigits([]byte(lit))
		if digits <= maxDigits {
			continue
		}
		what := "a number"
		if integer {
			what = "an integer"
		}
		ptr := dec.StackPointer()
		code, kind := int64(jsonrpc.CodeInvalidRequest), "invalid request"
		if inParams(raw, ptr) {
			code, kind = jsonrpc.CodeInvalidParams, "invalid params"
		}
		return &rpcError{id: messageID(raw), code: code, status: http.StatusBadRequest,
			message: fmt.Sprintf("%s: %s: %s is %s of %d digits written out in full, more than the %d a number may have",
				kind, ptr, validation.Cut(lit), what, digits, maxDigits)}
	}
}

// inParams reports whether ptr, a pointer into raw, is inside a message's
// params.
func inParams(raw jsontext.Value, ptr jsontext.Pointer) bool {
	tokens := strings.Split(string(ptr), "/")[1:]
	if raw.Kind() == '[' && len(tokens) > 0 {
		tokens = tokens[1:] // the message's index in the batch
	}
	return len(tokens) > 1 && tokens[0] == "params"
}

// checkEnvelope checks what the envelope's types do not: the version, the
// id, the method, that a response has an id and that params, when
// present, is an object.
func checkEnvelope(m *envelope) *rpcError {
	if m.Version != "2.0" {
		return invalidRequest(exactID(m.ID), `invalid request: "jsonrpc" must be "2.0"`)
	}
	if err := checkID(m.ID); err != nil {
		return invalidRequest(exactID(m.ID), "invalid request: %v", err)
	}
	if !m.isRequest() {
		if len(m.ID) == 0 {
			return invalidRequest(nil, `invalid request: neither a request ("method") nor a response ("id")`)
		}
		return nil
	}
	switch {
	case m.RawMethod.Kind() != '"':
		return invalidRequest(exactID(m.ID), `invalid request: "method" must be a string`)
	case bytes.IndexByte(m.RawMethod, '\\') < 0: // a valid string without escapes is its bytes
		m.Method = string(m.RawMethod[1 : len(m.RawMethod)-1])
	default:
		_ = jsonv2.Unmarshal(m.RawMethod, &m.Method, jsontext.AllowInvalidUTF8(true))
	}
	if !m.isCall() {
		return nil // a notification is never answered: the go-sdk drops what it cannot use
	}
	// Every MCP method takes an object; the go-sdk answers other params
	// with code 0 for some methods.
	if len(m.Params) > 0 && m.Params.Kind() != '{' {
		return invalidParams(m.ID, `"params" must be an object`)
	}
	if m.Method == "initialize" {
		if err := decodeInitialize(m.Params); err != nil {
			return invalidParams(m.ID, "%v", err)
		}
	}
	return nil
}

func invalidParams(id jsontext.Value, format string, args ...any) *rpcError {
	return &rpcError{id: exactID(id), code: jsonrpc.CodeInvalidParams, status: http.StatusBadRequest,
		message: "invalid params: " + fmt.Sprintf(format, args...)}
}

// initializeParams is what the go-sdk decodes an initialize's params into
// (its initializeParamsV2, made of its exported types). It answers params
// it cannot decode into it with code 0, where every other method's get
// invalid params.
type initializeParams struct {
	mcp.InitializeParams
	Capabilities *struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	} `json:"capabilities"`
}

// decodeInitialize decodes params as the go-sdk does (its internal/json:
// segmentio's decoder, names matched exactly).
func decodeInitialize(params jsontext.Value) error {
	dec := segjson.NewDecoder(bytes.NewReader(params))
	dec.DontMatchCaseInsensitiveStructFields()
	var p initializeParams
	return dec.Decode(&p)
}

// checkID accepts an absent id (a notification or a response), a string,
// and an integer within ±maxExactID however it is written (MCP: "a
// string or integer").
func checkID(id jsontext.Value) error {
	switch id.Kind() {
	case 0:
		return nil
	case '"':
		// The go-sdk reads invalid UTF-8 and lone surrogates as U+FFFD:
		// two such ids would be answered as one, and under another id.
		if !id.IsValid() {
			return errors.New(`"id" is not a string of Unicode characters (invalid UTF-8 or a lone surrogate)`)
		}
		return nil
	case '0':
		f, err := strconv.ParseFloat(string(id), 64)
		if err == nil && f == float64(int64(f)) && f >= -maxExactID && f <= maxExactID {
			return nil
		}
		return fmt.Errorf(`"id" %s is not an integer between -%d and %d`, validation.Cut(string(id)), int64(maxExactID), int64(maxExactID))
	}
	return errors.New(`"id" must be a string or an integer`)
}

// exactID returns id when it can be echoed in an answer as it was sent (a
// string of Unicode characters, or a number of at most a few dozen
// characters), else nil (null).
func exactID(id jsontext.Value) jsontext.Value {
	if k := id.Kind(); k == '"' && id.IsValid() || k == '0' && len(id) <= validation.MaxQuoted {
		return id
	}
	return nil
}

// measure returns how deep b, a JSON value, nests objects and arrays,
// and the most digits a number in it has written out in full (see
// numberDigits), in one pass over its bytes that parses nothing. On
// invalid JSON the results mean nothing.
func measure(b []byte) (depth, digits int) {
	level := 0
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			level++
			depth = max(depth, level)
		case c == '}' || c == ']':
			level--
		case c == '-' || '0' <= c && c <= '9':
			// Outside strings only numbers hold these bytes.
			j, exp := i+1, false
			for ; j < len(b) && isNumberByte(b[j]); j++ {
				exp = exp || b[j] == 'e' || b[j] == 'E'
			}
			if n := j - i; exp || n > digits {
				d, _ := numberDigits(b[i:j])
				digits = max(digits, d)
			}
			i = j - 1
		}
	}
	return depth, digits
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// numberDigits returns how many digits the JSON number lit has written
// out in full, without an exponent (1e3000000 has 3000001, 0.001 has 4,
// 5e-324, float64's smallest, 325), and whether its value is an integer.
// It parses no value: the exponent is read only as far as it matters.
func numberDigits(lit []byte) (digits int, integer bool) {
	lit = bytes.TrimPrefix(lit, []byte("-"))
	mant, expPart := lit, []byte(nil)
	if i := bytes.IndexAny(lit, "eE"); i >= 0 {
		mant, expPart = lit[:i], lit[i+1:]
	}
	intPart, frac, _ := bytes.Cut(mant, []byte("."))
	const huge = 1 << 40 // beyond any body: an exponent this large is as good as infinite
	exp, neg := 0, false
	for i, c := range expPart {
		switch {
		case i == 0 && (c == '+' || c == '-'):
			neg = c == '-'
		case exp < huge:
			exp = exp*10 + int(c-'0')
		}
	}
	if neg {
		exp = -exp
	}
	digits = max(len(intPart)+exp, 1) + max(len(frac)-exp, 0)
	// An integer when no digit after the point, moved by the exponent,
	// is other than 0.
	point := len(intPart) + exp
	nonzero := func(digits []byte, from int) bool {
		return bytes.ContainsFunc(digits[min(max(from, 0), len(digits)):], func(r rune) bool { return r != '0' })
	}
	integer = !nonzero(intPart, point) && !nonzero(frac, point-len(intPart))
	return digits, integer
}

// syntaxReason says where b stops being one JSON value.
func syntaxReason(b []byte) string {
	err := jsonv2.Unmarshal(b, new(jsontext.Value), jsontext.AllowInvalidUTF8(true))
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			return fmt.Sprintf("member %s appears twice in one object", se.JSONPointer)
		}
		return fmt.Sprintf("%v at byte %d", se.Err, se.ByteOffset)
	}
	if err != nil {
		return err.Error()
	}
	return "not one JSON value"
}

// memberReason words why an envelope member has the wrong type.
func memberReason(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) && se.JSONPointer != "" {
		return fmt.Sprintf("%q has the wrong type", se.JSONPointer.LastToken())
	}
	return "malformed message"
}
