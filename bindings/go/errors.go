package ssefold

/*
#include "ssefold_go.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Result is a ssefold_result status code (numbers are part of the ABI).
type Result uint32

// Status codes of the C ABI.
const (
	ResultOK                   Result = 0
	ResultStopped              Result = 1
	ResultNullParameter        Result = 100
	ResultInvalidArgument      Result = 101
	ResultInvalidUTF8Argument  Result = 102
	ResultBadState             Result = 103
	ResultPoisoned             Result = 104
	ResultPanic                Result = 105
	ResultSSELineTooLong       Result = 200
	ResultSSEEventTooLarge     Result = 201
	ResultSSEInvalidUTF8       Result = 202
	ResultSSEIDTooLong         Result = 203
	ResultEncodeLineBreak      Result = 300
	ResultEncodeNulInID        Result = 301
	ResultJSONInvalid          Result = 400
	ResultJSONDepthLimit       Result = 401
	ResultJSONSizeLimit        Result = 402
	ResultJSONIncomplete       Result = 403
	ResultStreamInvalidJSON    Result = 500
	ResultStreamLimitExceeded  Result = 501
	ResultStreamProviderError  Result = 502
	ResultStreamUnknownDialect Result = 503
	ResultStreamIncomplete     Result = 504
	ResultStreamClosed         Result = 505
	// ResultStreamRetryableProviderError: a provider error of a transient
	// type (overloaded_error, rate_limit_error, server_error, ...).
	ResultStreamRetryableProviderError Result = 506
	// ResultStreamDialectMismatch: given one dialect, the first event is
	// another's (the message names it; ProviderAuto detects it).
	ResultStreamDialectMismatch Result = 507
	// ResultStreamEventStream: the AWS event-stream framing (Bedrock) is
	// broken: a CRC mismatch, bad lengths or headers.
	ResultStreamEventStream Result = 508
)

// String is the library's description of the code.
func (r Result) String() string {
	maybeGC()
	return C.GoString(C.ssefold_result_str(C.uint32_t(r)))
}

// Sentinel errors, matched with errors.Is against an *Error, an
// *HTTPStatusError or a *GiveUpError. The kinds are those of the Python
// package (ProviderError, RetryableProviderError, IncompleteStreamError,
// ...) and of the C result codes (SSEFOLD_RESULT_STREAM_PROVIDER_ERROR,
// ..._STREAM_RETRYABLE_PROVIDER_ERROR, ..._STREAM_INCOMPLETE, ...).
var (
	// ErrProviderError: the provider reported an error, inside the stream
	// or as an HTTP error status (ErrRetryableProviderError included).
	ErrProviderError = errors.New("ssefold: provider error")
	// ErrRetryableProviderError: a provider error worth sending the request
	// again for: rate limit (HTTP 429), overload (529), server error (5xx,
	// 408), or an error event of a transient type (IsRetryableErrorType).
	ErrRetryableProviderError = errors.New("ssefold: retryable provider error")
	// ErrIncompleteStream: the stream ended before its terminal event, also
	// when HTTPStream.Run gave up reconnecting (a *GiveUpError).
	ErrIncompleteStream = errors.New("ssefold: incomplete stream")
	// ErrIncomplete: ErrIncompleteStream, or partial JSON that was not
	// complete at Finish.
	ErrIncomplete = errors.New("ssefold: incomplete")
	// ErrLimit: a configured limit was exceeded.
	ErrLimit = errors.New("ssefold: limit exceeded")
	// ErrInvalidInput: the input was malformed (not JSON, bad UTF-8, unknown
	// dialect, broken event-stream framing).
	ErrInvalidInput = errors.New("ssefold: invalid input")
	// ErrClosed: the handle was closed (Go side) or the stream is closed.
	ErrClosed = errors.New("ssefold: closed")
	// ErrDialectMismatch: the stream was given the wrong provider dialect
	// (also ErrInvalidInput).
	ErrDialectMismatch = errors.New("ssefold: dialect mismatch")
	// ErrBadState: the value cannot do this now; in particular it is in use
	// by a call on another goroutine (Decoder, Stream, PartialJSON,
	// AgentTurn, … are not safe for concurrent use: the call that loses the
	// race gets this error and changes nothing).
	ErrBadState = errors.New("ssefold: bad state")
)

// Error is a failed C call: its status code and the handle's last error
// message.
type Error struct {
	// Code is the ssefold_result status of the call.
	Code Result
	// Message is the handle's last error message (may be empty).
	Message string
}

// Error formats the code, its description and the message.
func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("ssefold: %s (%d)", e.Code, uint32(e.Code))
	}
	return fmt.Sprintf("ssefold: %s (%d): %s", e.Code, uint32(e.Code), e.Message)
}

// Is maps the code onto the sentinel errors.
func (e *Error) Is(target error) bool {
	if relayErrorIs(e.Code, target) {
		return true
	}
	switch target {
	case ErrProviderError:
		return e.Code == ResultStreamProviderError || e.Code == ResultStreamRetryableProviderError
	case ErrRetryableProviderError:
		return e.Code == ResultStreamRetryableProviderError
	case ErrIncompleteStream:
		return e.Code == ResultStreamIncomplete
	case ErrIncomplete:
		return e.Code == ResultStreamIncomplete || e.Code == ResultJSONIncomplete
	case ErrLimit:
		switch e.Code {
		case ResultSSELineTooLong, ResultSSEEventTooLarge, ResultSSEIDTooLong, ResultJSONDepthLimit,
			ResultJSONSizeLimit, ResultStreamLimitExceeded:
			return true
		}
	case ErrInvalidInput:
		switch e.Code {
		case ResultSSEInvalidUTF8, ResultJSONInvalid, ResultStreamInvalidJSON,
			ResultStreamUnknownDialect, ResultStreamDialectMismatch, ResultStreamEventStream:
			return true
		}
	case ErrDialectMismatch:
		return e.Code == ResultStreamDialectMismatch
	case ErrBadState:
		return e.Code == ResultBadState
	case ErrClosed:
		return e.Code == ResultStreamClosed
	}
	return isSchedulerError(e.Code, target)
}

// newError builds an *Error from a code and a message fetcher.
func newError(code C.ssefold_result, msg string) error {
	if code == 0 {
		return nil
	}
	return &Error{Code: Result(code), Message: msg}
}
