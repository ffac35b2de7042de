package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves MCP over newline-delimited JSON-RPC on in and out
// (standard input and output), with every call made as the holder of
// token, which is authenticated on each call so expiry and revocation
// apply. It returns when in ends (after the calls read before the end
// are answered) or ctx is done.
//
// Each line is checked as an HTTP body is (readMessages) before the go-sdk
// reads it: a line that is not one JSON-RPC message is answered with a
// parse error (-32700) or invalid request (-32600) and the server reads
// on; a line longer than cfg.MaxBodyBytes is answered -32600 and skipped.
// (The go-sdk alone ends the session at the first bad line and drops the
// answers of the calls before it.)
func (s *Server) ServeStdio(ctx context.Context, token string, in io.Reader, out io.Writer) error {
	if _, err := s.store.Authenticate(ctx, token); err != nil {
		return err
	}
	s.logUnimplemented()
	srv := newMCPServer()
	s.register(srv, func(ctx context.Context) (context.Context, error) {
		p, err := s.store.Authenticate(ctx, token)
		if err != nil {
			return nil, s.tokenRefused(ctx, err)
		}
		return withPrincipal(ctx, p), nil
	})
	w := &stdioWriter{w: out}
	pr, pw := io.Pipe()
	defer pr.Close()
	fctx, stop := context.WithCancel(ctx)
	defer stop() // the filter stops waiting for answers once the session is over
	go func() {
		pw.CloseWithError(s.filterLines(fctx, in, pw, w))
	}()
	err := srv.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: int(s.cfg.MaxBodyBytes) + 16})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// filterLines copies the lines of in that are JSON-RPC messages to pw,
// and answers the others itself on w. When in ends it waits until every
// request it passed on is answered, so that the go-sdk, which stops at
// the end of its input, drops none.
func (s *Server) filterLines(ctx context.Context, in io.Reader, pw io.Writer, w *stdioWriter) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, int(s.cfg.MaxBodyBytes))
		if len(line) > 0 || tooLong {
			msgs, rerr := s.admit(line, tooLong, w)
			if rerr != nil {
				if werr := w.writeLine(rerr.response()); werr != nil {
					return werr
				}
			} else {
				for _, l := range passOn(line, msgs) {
					if _, werr := pw.Write(append(l, '\n')); werr != nil {
						return werr
					}
				}
				// The next line is judged by what an initialize
				// negotiates, so its answer comes first.
				w.wait(ctx, func() bool { return w.initializing == 0 })
			}
		}
		if err != nil {
			if err == io.EOF {
				w.wait(ctx, func() bool { return len(w.pending) == 0 })
			}
			return err
		}
	}
}

// admit checks a line before the go-sdk reads it, and returns its
// messages to pass on, or the answer that refuses it: a line too long,
// not JSON-RPC or too large a batch (as over HTTP); a batch once the
// session negotiated a protocol without batches, which would end the
// session; a call the go-sdk refuses before an initialize, with code 0; a
// request whose id one in progress has, of which the go-sdk would answer
// one, and the end of input would wait for the other forever.
func (s *Server) admit(line []byte, tooLong bool, w *stdioWriter) ([]envelope, *rpcError) {
	if tooLong {
		return nil, invalidRequest(nil, "invalid request: line exceeds %d bytes", s.cfg.MaxBodyBytes)
	}
	msgs, rerr := s.readMessages(line)
	if rerr != nil {
		return nil, rerr
	}
	v := w.negotiated()
	if rerr := refuseBatch(line, v); rerr != nil {
		return nil, rerr
	}
	if v == "" && !slices.ContainsFunc(msgs, isInitialize) {
		for i := range msgs {
			if m := &msgs[i]; m.needsSession() {
				return nil, invalidRequest(m.ID, "invalid request: send initialize first")
			}
		}
	}
	if dup, ok := w.expect(msgs); !ok {
		return nil, invalidRequest(dup, "invalid request: a request with id %s is already in progress", dup)
	}
	return msgs, nil
}

// passOn returns the lines that carry msgs, the messages of line, to the
// go-sdk: line itself, except that cancellations are dropped (uncancelled)
// and a batch's notifications go one a line ahead of the rest. (The go-sdk's stdio transport waits for an answer to
// every request of a batch, notifications included, so it would never
// write the batch's answers, and two notifications in one batch end the
// session. JSON-RPC lets a batch's messages be processed in any order.)
func passOn(line []byte, msgs []envelope) [][]byte {
	line, msgs = uncancelled(line, msgs)
	switch {
	case line == nil:
		return nil
	case jsontext.Value(line).Kind() != '[' || !slices.ContainsFunc(msgs, isNotification):
		return [][]byte{line}
	}
	var lines [][]byte
	var rest []envelope
	for _, m := range msgs {
		if isNotification(m) {
			lines = append(lines, m.raw)
		} else {
			rest = append(rest, m)
		}
	}
	if len(rest) > 0 {
		lines = append(lines, batchOf(rest))
	}
	return lines
}

func isNotification(m envelope) bool { return m.isRequest() && len(m.ID) == 0 }

func isInitialize(m envelope) bool { return m.isCall() && m.Method == "initialize" }

// readLine returns the next line of r without its line ending, and
// whether it was longer than limit (it is then read to its end and
// dropped). Blank lines come back empty.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > limit+2 { // room for "\r\n"
				line, tooLong = nil, true
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !tooLong {
			line = trimSpace(line)
		}
		return line, tooLong, err
	}
}

// trimSpace drops JSON white space at both ends.
func trimSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// stdioWriter is standard output shared by the go-sdk (one Write per
// message) and the line filter's own answers. It counts the requests
// passed on that have no answer yet, and reads the protocol version an
// initialize negotiated off its answer.
type stdioWriter struct {
	w io.Writer

	mu           sync.Mutex
	pending      map[string]bool // ids (idKey) of the requests passed on and not yet answered: true for an initialize
	initializing int             // initializes among pending
	protocol     string          // the protocol version the first answered initialize negotiated
	changed      chan struct{}   // closed when pending shrinks; nil when nobody waits
}

func (w *stdioWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answered(p)
	return w.w.Write(p)
}

// Close does nothing: standard output outlives the session.
func (w *stdioWriter) Close() error { return nil }

// writeLine writes one of the line filter's own answers: it answers a
// request never passed on, so it settles none that was (one may share its
// id).
func (w *stdioWriter) writeLine(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(append(b, '\n'))
	return err
}

// expect records the requests among msgs (whose ids differ: see
// readMessages), unless one of them has the id of a request still in
// progress: then it records none and returns that id and false.
func (w *stdioWriter) expect(msgs []envelope) (dup jsontext.Value, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls := map[string]bool{} // idKey: an initialize
	for _, m := range msgs {
		if m.isCall() {
			k := idKey(m.ID)
			if _, busy := w.pending[k]; busy {
				return m.ID, false
			}
			calls[k] = isInitialize(m)
		}
	}
	if w.pending == nil {
		w.pending = map[string]bool{}
	}
	for k, init := range calls {
		w.pending[k] = init
		if init {
			w.initializing++
		}
	}
	return nil, true
}

// negotiated returns the protocol version the session negotiated, or ""
// before an initialize was answered.
func (w *stdioWriter) negotiated() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.protocol
}

// answered settles the requests that the responses in p answer.
func (w *stdioWriter) answered(p []byte) {
	if len(w.pending) == 0 {
		return
	}
	msgs, err := readMessages(trimSpace(p), math.MaxInt) // the go-sdk's own answers
	if err != nil {
		return
	}
	settled := false
	for _, m := range msgs {
		if m.isRequest() || len(m.ID) == 0 {
			continue
		}
		k := idKey(m.ID)
		init, ok := w.pending[k]
		if !ok {
			continue
		}
		delete(w.pending, k)
		settled = true
		if init {
			w.initializing--
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if w.protocol == "" && jsonv2.Unmarshal(m.Result, &r) == nil {
				w.protocol = r.ProtocolVersion
			}
		}
	}
	if settled && w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}

// wait waits until done, called with w.mu held, holds, or ctx is done.
func (w *stdioWriter) wait(ctx context.Context, done func() bool) {
	for {
		w.mu.Lock()
		if done() {
			w.mu.Unlock()
			return
		}
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// idKey is a JSON-RPC id as a map key, by value: the go-sdk writes the id
// of its answer anew (1e2 as 100, "\u0041" as "A").
func idKey(id jsontext.Value) string {
	switch id.Kind() {
	case '0':
		if f, err := strconv.ParseFloat(string(id), 64); err == nil {
			return "n" + strconv.FormatInt(int64(f), 10)
		}
	case '"':
		var str string
		if jsonv2.Unmarshal(id, &str, jsontext.AllowInvalidUTF8(true)) == nil {
			return "s" + str
		}
	}
	return string(id)
}
