package store

import (
	"errors"
	"fmt"
)

// Refusal is a domain refusal: the call was understood and is not allowed.
// Code is a stable snake_case machine-readable code; Message is a human
// explanation that never contains a token. The MCP layer turns a Refusal
// into an isError tool result carrying the code (never structuredContent).
type Refusal struct {
	// Code is the stable machine-readable reason, e.g. "not_routed".
	Code string
	// Message is the human explanation, lowercase, without secrets.
	Message string
}

// Error returns "code: message".
func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Is reports whether target is a *Refusal with the same Code, so that
// errors.Is(err, &Refusal{Code: CodeNotRouted}) works.
func (r *Refusal) Is(target error) bool {
	var t *Refusal
	if errors.As(target, &t) {
		return t.Code == r.Code
	}
	return false
}

// RefusalCode returns the Code of the *Refusal in err's chain, or "" if
// there is none.
func RefusalCode(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return ""
}

func refuse(code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Refusal codes. They are stable: clients may switch on them.
const (
	// CodeUnauthenticated: no principal was given.
	CodeUnauthenticated = "unauthenticated"
	// CodeUnknownTool: the tool name is not in the 18-tool catalog.
	CodeUnknownTool = "unknown_tool"
	// CodeNotRunner: a runner-only tool was called by something else.
	CodeNotRunner = "not_runner"
	// CodeToolNotAllowed: the tool is outside the caller's allowed tools.
	CodeToolNotAllowed = "tool_not_allowed"
	// CodeProjectNotVisible: the project does not exist or the caller cannot
	// see it (deliberately indistinguishable).
	CodeProjectNotVisible = "project_not_visible"
	// CodeTaskNotFound: no such task in a project the caller can see.
	CodeTaskNotFound = "task_not_found"
	// CodeNotRouted: the task is routed to another agent.
	CodeNotRouted = "not_routed"
	// CodeMentionNotCause: wake.message_id names a mention.
	CodeMentionNotCause = "mention_not_cause"
	// CodeCauseMismatch: wake.message_id is not the task's own request.
	CodeCauseMismatch = "cause_mismatch"
	// CodeAttemptInProgress: another key's attempt on the task is still live.
	CodeAttemptInProgress = "attempt_in_progress"
	// CodeAttemptSuperseded: the key's attempt was replaced by a newer one.
	CodeAttemptSuperseded = "attempt_superseded"
	// CodeHarnessOutdated: harness missing or below 2.
	CodeHarnessOutdated = "harness_outdated"
	// CodeHarnessUnsupported: harness above 2.
	CodeHarnessUnsupported = "harness_unsupported"
	// CodeMessageNotFound: no such message in a project the caller can see.
	CodeMessageNotFound = "message_not_found"
	// CodeNotYourRoom: the message is not in the owner's private rooms.
	CodeNotYourRoom = "not_your_room"
	// CodeNotWoken: the message did not wake the runner's agent.
	CodeNotWoken = "not_woken"
	// CodeTurnEnded: the message's turn has ended.
	CodeTurnEnded = "turn_ended"
	// CodeTurnStopped: the owner stopped the turn.
	CodeTurnStopped = "turn_stopped"
	// CodeTurnTimedOut: the turn ran out of time.
	CodeTurnTimedOut = "turn_timed_out"
	// CodeTurnReplaced: the owner's next message replaced the turn.
	CodeTurnReplaced = "turn_replaced"
	// CodeReplyPosted: the reply was already posted; nothing left to claim.
	CodeReplyPosted = "reply_posted"
	// CodeDraftPending: a reviewer claimed before the lead's draft exists.
	CodeDraftPending = "draft_pending"
	// CodeReviewsPending: the lead claimed again before every review exists.
	CodeReviewsPending = "reviews_pending"
	// CodeNoRepliesLeft: the turn allows no more replies.
	CodeNoRepliesLeft = "no_replies_left"
	// CodeDiscussionInProgress: another key's discussion claim for the same
	// agent and turn is still live.
	CodeDiscussionInProgress = "discussion_in_progress"
	// CodeClaimSuperseded: the key's discussion claim was replaced.
	CodeClaimSuperseded = "claim_superseded"
	// CodeNotDiscussionCredential: PostReply called without a discussion
	// credential.
	CodeNotDiscussionCredential = "not_discussion_credential"
	// CodeCredentialExpired: the credential expired.
	CodeCredentialExpired = "credential_expired"
	// CodeInvalidArgument: an argument of PostDiscussionReply is malformed.
	// (A tool's arguments follow its input schema, checked before the store
	// is called, and are refused with invalid_arguments.)
	CodeInvalidArgument = "invalid_argument"
)
