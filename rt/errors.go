package rt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Codes of the refusals the runtime itself makes.
const (
	// CodeInvalidArguments: the arguments do not validate against the
	// tool's input schema (or do not decode into its Go type).
	CodeInvalidArguments = "invalid_arguments"
)

// ToolError is what a Handler returns to refuse a call. It becomes an
// isError tool result (never a JSON-RPC error) whose text content is
// "Code: Message" and whose _meta is {"code": Code}. An error result never
// carries structuredContent: the TypeScript SDK validates structuredContent
// of error results against the output schema, and throws.
//
// On the client side, an isError result comes back as a *ToolError.
type ToolError struct {
	// Code is a stable machine-readable reason, snake_case.
	Code string
	// Message is for humans (and the model); it never holds a secret.
	Message string
}

// Refuse returns a *ToolError with a formatted message.
func Refuse(code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *ToolError) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// Result renders the refusal as an isError tool result: text "Code:
// Message", _meta {"code": Code}, no structuredContent.
func (e *ToolError) Result() *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: e.Error()}},
	}
	if e.Code != "" {
		res.Meta = mcp.Meta{"code": e.Code}
	}
	return res
}

// ToolErrorFromResult reads an isError tool result back into a
// *ToolError: the code from _meta.code, or else from a "code: " prefix of
// the text content (a snake_case word); the message is the text after the
// prefix. It returns nil when res is not an error result.
func ToolErrorFromResult(res *mcp.CallToolResult) *ToolError {
	if res == nil || !res.IsError {
		return nil
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	text := strings.Join(parts, "\n")
	code, _ := res.Meta["code"].(string)
	prefCode, rest, hasPrefix := splitCode(text)
	switch {
	case code != "" && hasPrefix && prefCode == code:
		return &ToolError{Code: code, Message: rest}
	case code != "":
		return &ToolError{Code: code, Message: text}
	case hasPrefix:
		return &ToolError{Code: prefCode, Message: rest}
	}
	return &ToolError{Message: text}
}

// splitCode splits "some_code: message" into its code and message.
func splitCode(text string) (code, rest string, ok bool) {
	i := strings.Index(text, ": ")
	if i <= 0 {
		return "", text, false
	}
	for j, r := range text[:i] {
		if !(r >= 'a' && r <= 'z' || r == '_' || j > 0 && r >= '0' && r <= '9') {
			return "", text, false
		}
	}
	return text[:i], text[i+2:], true
}

// AsToolError reports whether err is (or wraps) a *ToolError and returns it.
func AsToolError(err error) (*ToolError, bool) {
	var te *ToolError
	if errors.As(err, &te) {
		return te, true
	}
	return nil, false
}
