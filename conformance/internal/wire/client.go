package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ProtocolVersion is the MCP protocol version the suite's client asks for:
// the one the official TypeScript SDK client negotiates, so a server that
// passes the suite also serves that client.
const ProtocolVersion = "2025-11-25"

// maxBody bounds a response body the client reads.
const maxBody = 8 << 20

// Client is a deliberately small MCP client over streamable HTTP. It keeps
// every response byte for byte, so the suite checks what is on the wire and
// not what an SDK made of it. It opens one MCP session per bearer token
// (servers bind a session to its caller).
type Client struct {
	endpoint string
	http     *http.Client

	mu       sync.Mutex
	sessions map[string]*session // by token ("" for no Authorization)
	nextID   atomic.Int64
}

type session struct {
	ready   chan struct{}
	id      string // Mcp-Session-Id, "" for a stateless server
	version string // negotiated protocol version
	err     error
}

// NewClient returns a client of the MCP endpoint; hc nil is a client that
// never goes through a proxy and gives up on a request after 30s.
func NewClient(endpoint string, hc *http.Client) *Client {
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil // the suite talks to the server under test, never through a proxy
		hc = &http.Client{Timeout: 30 * time.Second, Transport: tr}
	}
	return &Client{endpoint: endpoint, http: hc, sessions: map[string]*session{}}
}

// HTTPError is a response that is not a JSON-RPC answer: a non-2xx status
// (401 for a missing or unknown token, for instance).
type HTTPError struct {
	Status int
	Body   string
}

// Error returns "HTTP STATUS: BODY", the body cut short.
func (e *HTTPError) Error() string {
	body := strings.TrimSpace(e.Body)
	if len(body) > 300 {
		body = body[:300] + "..."
	}
	if body == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, body)
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns "JSON-RPC error CODE: MESSAGE".
func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Response is one JSON-RPC response as received.
type Response struct {
	Raw    json.RawMessage // the whole message
	Result json.RawMessage // nil when Error is set
	Error  *RPCError
}

// Request sends one JSON-RPC request with the given token (empty: no
// Authorization header), opening the token's session first if needed. A
// transport failure or an HTTP error status is returned as an error; a
// JSON-RPC error is returned inside the response.
func (c *Client) Request(ctx context.Context, token, method string, params any) (*Response, error) {
	s, err := c.session(ctx, token)
	if err != nil {
		return nil, err
	}
	return c.post(ctx, token, s, method, params)
}

// CallTool calls tool with args (a JSON object) as Request does.
func (c *Client) CallTool(ctx context.Context, token, tool string, args json.RawMessage) (*Response, error) {
	return c.Request(ctx, token, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// Open opens the MCP session of token (initialize), if it is not open
// yet: a server that refuses the token answers it with an *HTTPError.
func (c *Client) Open(ctx context.Context, token string) error {
	_, err := c.session(ctx, token)
	return err
}

func (c *Client) session(ctx context.Context, token string) (*session, error) {
	c.mu.Lock()
	s, ok := c.sessions[token]
	if !ok {
		s = &session{ready: make(chan struct{})}
		c.sessions[token] = s
		c.mu.Unlock()
		s.err = c.initialize(ctx, token, s)
		close(s.ready)
		if s.err != nil {
			c.mu.Lock()
			delete(c.sessions, token) // try again next time
			c.mu.Unlock()
		}
		return s, s.err
	}
	c.mu.Unlock()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.err != nil {
		return c.session(ctx, token)
	}
	return s, nil
}

func (c *Client) initialize(ctx context.Context, token string, s *session) error {
	params := map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "prickle-conformance", "version": "1"},
	}
	resp, hdr, err := c.roundTrip(ctx, token, s, "initialize", params, true)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("initialize: %w", resp.Error)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.ProtocolVersion == "" {
		return fmt.Errorf("initialize: the result has no protocolVersion: %s", resp.Raw)
	}
	s.version = res.ProtocolVersion
	s.id = hdr.Get("Mcp-Session-Id")
	// The initialized notification: 202 Accepted, no body.
	if _, _, err := c.roundTrip(ctx, token, s, "notifications/initialized", nil, false); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

func (c *Client) post(ctx context.Context, token string, s *session, method string, params any) (*Response, error) {
	resp, _, err := c.roundTrip(ctx, token, s, method, params, true)
	return resp, err
}

// roundTrip posts one message. For a request (wantReply) it returns the
// JSON-RPC response with the request's id, from a JSON body or an SSE
// stream; for a notification it expects 202 or 200 and returns nil.
func (c *Client) roundTrip(ctx context.Context, token string, s *session, method string, params any, wantReply bool) (*Response, http.Header, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	var id int64
	if wantReply {
		id = c.nextID.Add(1)
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.version != "" {
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return nil, res.Header, &HTTPError{Status: res.StatusCode, Body: string(b)}
	}
	if !wantReply {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxBody))
		return nil, res.Header, nil
	}
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
		if err != nil {
			return nil, res.Header, err
		}
		r, err := parseResponse(b, id)
		return r, res.Header, err
	case "text/event-stream":
		r, err := readSSE(res.Body, id)
		return r, res.Header, err
	default:
		return nil, res.Header, fmt.Errorf("response Content-Type %q is neither application/json nor text/event-stream", res.Header.Get("Content-Type"))
	}
}

var errNotOurs = errors.New("not the response to this request")

// parseResponse parses one JSON-RPC response and checks its envelope.
func parseResponse(b []byte, id int64) (*Response, error) {
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   *RPCError       `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("response is not a JSON-RPC message: %v: %.300s", err, b)
	}
	if env.Method != "" {
		return nil, errNotOurs // a server request or notification
	}
	if string(env.ID) != strconv.FormatInt(id, 10) {
		return nil, errNotOurs
	}
	if env.JSONRPC != "2.0" {
		return nil, fmt.Errorf(`response has "jsonrpc": %q, want "2.0"`, env.JSONRPC)
	}
	if (env.Error == nil) == (env.Result == nil) {
		return nil, fmt.Errorf("response must have exactly one of result and error: %.300s", b)
	}
	return &Response{Raw: json.RawMessage(bytes.TrimSpace(b)), Result: env.Result, Error: env.Error}, nil
}

// readSSE reads server-sent events until the response to id arrives.
func readSSE(r io.Reader, id int64) (*Response, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxBody))
	sc.Buffer(make([]byte, 64*1024), maxBody)
	var data []string
	event := ""
	flush := func() (*Response, error) {
		defer func() { data, event = nil, "" }()
		if len(data) == 0 || (event != "" && event != "message") {
			return nil, nil
		}
		resp, err := parseResponse([]byte(strings.Join(data, "\n")), id)
		if errors.Is(err, errNotOurs) {
			return nil, nil
		}
		return resp, err
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			resp, err := flush()
			if resp != nil || err != nil {
				return resp, err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		}
	}
	if resp, err := flush(); resp != nil || err != nil {
		return resp, err
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the event stream: %w", err)
	}
	return nil, errors.New("the event stream ended without a response to the request")
}

// Close ends every session (DELETE with its id), best effort.
func (c *Client) Close() {
	c.mu.Lock()
	sessions := c.sessions
	c.sessions = map[string]*session{}
	c.mu.Unlock()
	for tok, s := range sessions {
		select {
		case <-s.ready:
		default:
			continue
		}
		if s.err != nil || s.id == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.endpoint, nil)
		if err == nil {
			req.Header.Set("Mcp-Session-Id", s.id)
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			if res, err := c.http.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
		cancel()
	}
	c.http.CloseIdleConnections()
}
