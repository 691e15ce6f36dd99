//! The provider driver: each unit a [framing](super::framing) delivers,
//! through detection, the restart-or-resume check after a reconnection and
//! the dialect, to the end of the turn.
//!
//! The turn ends in one place ([`Driver::end_turn`]), whether the terminal
//! event came or the body's end leaves the answer whole; the first event
//! after [`Stream::reconnect`](super::Stream::reconnect) decides restart or
//! resume in one place ([`Driver::event`]).

use serde_json::Value;

use super::detect::{check_dialect, detect, make_dialect};
use super::fastpath::string_members;
use super::framing::{Unit, Units};
use super::sink::{warn, Sink};
use super::turn::{Dialect, Flow, Turn, TurnState};
use super::{bedrock, ndjson, MessageView, Provider, ProviderError, StreamConfig, StreamError, StreamEvent};
use super::{StreamLimit, WarningCode};
use crate::eventstream::Message;
use crate::sse::Event;

/// Events larger than this are estimated against `max_memory_bytes` before
/// they are parsed (smaller ones cannot amplify past a few MiB).
const BIG_EVENT_BYTES: usize = 64 << 10;

/// The turn and its dialect, driven by the units of a body.
#[derive(Debug)]
pub(crate) struct Driver {
    /// The dialect the stream was made with ([`Provider::Auto`] included).
    provider: Provider,
    /// The turn state machine and the parts (shared by every dialect).
    pub(crate) turn: Turn,
    /// The dialect: given, or detected from the first event.
    pub(crate) dialect: Option<Box<dyn Dialect>>,
    /// [`reconnect`](Self::reconnect) was called: the next event decides
    /// restart or resume.
    resuming: bool,
}

impl Driver {
    /// A driver for `provider` (its dialect made now, unless
    /// [`Provider::Auto`]).
    pub(crate) fn new(provider: Provider, config: StreamConfig) -> Self {
        Driver { provider, turn: Turn::new(config), dialect: make_dialect(provider), resuming: false }
    }

    /// The dialect: the one given, or the one detected ([`Provider::Auto`]
    /// until detection).
    pub(crate) fn provider(&self) -> Provider {
        self.dialect.as_ref().map_or(self.provider, |d| d.provider())
    }

    /// A unit to the path its framing takes: an SSE event as it is, a line
    /// for Ollama (a lone CR explained in its JSON error), an event-stream
    /// message through [`frame`](Self::frame); `resume`: the first event
    /// may decide restart or resume.
    #[inline(always)]
    fn route(&mut self, unit: Unit<'_, '_>, resume: bool, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        match unit {
            Unit::Event(event) => self.event(event, None, resume, sink),
            // Ollama's, the one dialect framed this way.
            Unit::Line(event) => self
                .event(event, Some(Provider::Ollama), resume, sink)
                .map_err(|e| ndjson::explain_lone_cr(e, event.data())),
            Unit::Message(message, json) => self.frame(message, json, sink),
        }
    }

    /// One event: after a reconnection, the restart-or-resume decision
    /// first (when `resume`); then [`dispatch`](Self::dispatch), the
    /// dialect named by the framing (`framed_as`) if none is yet.
    #[inline(always)]
    fn event(
        &mut self,
        event: &Event<'_>,
        framed_as: Option<Provider>,
        resume: bool,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        if resume && self.resuming {
            self.resuming = false;
            self.restart_or_resume(event, sink);
        }
        if self.dialect.is_none() {
            if let Some(p) = framed_as {
                self.dialect = make_dialect(p);
            }
        }
        self.dispatch(event, sink)
    }

    /// The first event after [`reconnect`](Self::reconnect): when it starts
    /// a new answer, the partial turn is reset (`turn_reset`).
    fn restart_or_resume(&mut self, event: &Event<'_>, sink: &mut Sink<'_>) {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(rename = "type", default, borrow)]
            ty: Option<std::borrow::Cow<'a, str>>,
            #[serde(default, borrow)]
            id: Option<std::borrow::Cow<'a, str>>,
        }
        let Some(d) = &self.dialect else { return };
        // The exact bytes first, serde_json for anything else.
        let slow: Option<Head<'_>>;
        let [ty, id] = match string_members(event.data(), ["type", "id"]) {
            Some(fast) => fast,
            None => {
                slow = serde_json::from_str(event.data()).ok();
                [slow.as_ref().and_then(|h| h.ty.as_deref()), slow.as_ref().and_then(|h| h.id.as_deref())]
            }
        };
        if d.is_restart(ty.unwrap_or(event.event()), id) {
            sink.event(&StreamEvent::TurnReset);
            self.dialect = make_dialect(self.provider);
            self.turn.reset();
        }
    }

    /// The connection dropped: the next event decides restart or resume.
    pub(crate) fn reconnect(&mut self) {
        self.resuming = true;
        if let Some(d) = self.dialect.as_deref_mut() {
            d.on_reconnect();
        }
    }

    /// One AWS event-stream message: detection (`chunk`: Bedrock
    /// InvokeModel, anything else: ConverseStream), then the event it
    /// carries.
    fn frame(&mut self, message: &Message<'_>, json: &mut Vec<u8>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let error;
        let (event, chunk) = match bedrock::frame_event(message, json, sink) {
            bedrock::Framed::Skip => return Ok(()),
            // An exception first says nothing of the dialect (InvokeModel and
            // ConverseStream fail alike): the error, with none picked.
            bedrock::Framed::Error(data) if self.dialect.is_none() => {
                return self.fail(false, bedrock::exception_error(&data), sink);
            }
            bedrock::Framed::Error(data) => {
                error = data;
                (Event::new("error", &error, None, None), None)
            }
            bedrock::Framed::Event { event, chunk } => (event, Some(chunk)),
        };
        let seen = if chunk == Some(true) { Provider::Bedrock } else { Provider::BedrockConverse };
        match &self.dialect {
            None => self.dialect = make_dialect(seen),
            Some(d) if self.turn.state == TurnState::Idle && chunk.is_some() && d.provider() != seen => {
                let expected = d.provider();
                if matches!(expected, Provider::Bedrock | Provider::BedrockConverse) {
                    return Err(StreamError::DialectMismatch { expected, detected: seen });
                }
            }
            Some(_) => {}
        }
        self.event(&event, None, true, sink)
    }

    /// One event through the turn state machine: detection, the dialect's
    /// handler, and the end of the turn it signals.
    fn dispatch(&mut self, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let Driver { dialect, turn, .. } = self;
        if event.event() == "error"
            && !turn.is_terminated()
            && serde_json::from_str::<serde::de::IgnoredAny>(event.data()).is_err()
        {
            // `event: error` with a plain-text body (proxies, gateways): a
            // provider error all the same, with the text as its message.
            let error = ProviderError {
                error_type: String::new(),
                message: event.data().to_owned(),
                request_id: None,
                output_emitted: turn.output_emitted(),
            };
            if let Some(d) = dialect {
                d.start_implicitly(turn, sink);
            }
            let started = dialect.is_some();
            return self.fail(started, error, sink);
        }
        if event.data().len() > BIG_EVENT_BYTES {
            // A large event may become a tree many times its size (a whole
            // function call's arguments `[[[[]]]],…`): refused before it is
            // parsed (to detect the dialect, or to fold it) when what it
            // would cost does not fit the budget.
            let estimate = crate::json::scan::estimate_value_bytes(event.data().as_bytes());
            let max = turn.config.max_memory_bytes;
            if turn.held().saturating_add(estimate) > max {
                return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max });
            }
        }
        let d = match dialect {
            Some(d) => {
                if turn.state == TurnState::Idle {
                    check_dialect(d.provider(), event)?;
                }
                d
            }
            None if event.data().trim() == "[DONE]" && turn.state == TurnState::Idle => {
                // A stray terminal first: it names no dialect and ends nothing.
                warn(sink, WarningCode::TerminalBeforeStart, "[DONE] before any event; ignored");
                return Ok(());
            }
            None => dialect.insert((detect(event).ok_or(StreamError::UnknownDialect)?.make)()),
        };
        if turn.is_terminated() {
            warn(sink, WarningCode::DataAfterTerminal, &d.after_terminal(event));
            return Ok(());
        }
        let flow = d.on_event(turn, event, sink)?;
        if !matches!(flow, Flow::Fail(_)) {
            // Everything the dialect keeps counts against the budget.
            turn.check_kept(event.data().len(), || d.footprint())?;
        }
        match flow {
            Flow::Continue => Ok(()),
            Flow::End => {
                Self::end_turn(d.as_mut(), turn, sink);
                Ok(())
            }
            Flow::Fail(error) => self.fail(true, error, sink),
        }
    }

    /// Ends the turn normally: open parts committed as `incomplete`, the
    /// dialect's last events, `turn_end` with the stop reason.
    fn end_turn(d: &mut dyn Dialect, turn: &mut Turn, sink: &mut Sink<'_>) {
        turn.close_open(d, sink);
        turn.state = TurnState::Done;
        let reason = d.on_turn_end(turn, sink);
        sink.event(&StreamEvent::TurnEnd { stop_reason: reason.as_deref() });
    }

    /// Ends the turn on a provider error: open parts committed as
    /// `incomplete` (when the answer `started`: a dialect is known), the
    /// `error` event, the typed error.
    fn fail(&mut self, started: bool, error: ProviderError, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if let Some(d) = self.dialect.as_deref_mut().filter(|_| started) {
            self.turn.close_open(d, sink);
            self.turn.state = TurnState::Errored;
        }
        sink.event(&StreamEvent::Error { error: &error });
        Err(StreamError::Provider(error))
    }

    /// The body ended (after its last unit): unless the turn already ended,
    /// it ends here when the answer is whole without a terminal event (see
    /// [`Stream::is_complete_at_end`](super::Stream::is_complete_at_end)),
    /// else open parts are committed as `incomplete` and
    /// [`StreamError::Incomplete`] is returned.
    pub(crate) fn end_of_body(&mut self, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let Some(d) = self.dialect.as_deref_mut() else {
            return Err(StreamError::Incomplete { expected: "any event" });
        };
        if self.turn.is_terminated() {
            return Ok(());
        }
        if d.end_of_body(&mut self.turn, sink) {
            // The answer is whole without a terminal event
            // (`complete_at_end`: Gemini, which has none; Chat without
            // `[DONE]`): the end of the body ends the turn.
            Self::end_turn(d, &mut self.turn, sink);
            return Ok(());
        }
        self.turn.close_open(d, sink);
        Err(StreamError::Incomplete { expected: d.terminal() })
    }

    /// Aborts the turn: the dialect's implicit start, open parts committed
    /// as `incomplete` into `closed`, the turn errored.
    pub(crate) fn abort(&mut self, closed: &mut Sink<'_>) {
        if let Some(d) = self.dialect.as_deref_mut() {
            d.start_implicitly(&mut self.turn, closed);
            self.turn.close_open(d, closed);
            self.turn.state = TurnState::Errored;
        }
    }

    /// Commits the parts still open as `incomplete` into `closed`.
    pub(crate) fn close_open_parts(&mut self, closed: &mut Sink<'_>) {
        if let Some(d) = self.dialect.as_deref_mut() {
            self.turn.close_open(d, closed);
        }
    }

    /// The folded message so far (`null` before the dialect is known).
    pub(crate) fn message(&self) -> Value {
        self.dialect.as_ref().map_or(Value::Null, |d| d.message(&self.turn))
    }

    /// The folded message, the driver consumed (moved out of the fold).
    pub(crate) fn into_message(mut self) -> Value {
        match self.dialect.take() {
            Some(d) => d.into_message(&mut self.turn),
            None => Value::Null,
        }
    }

    /// The folded message, lent where the dialect holds it as it is.
    pub(crate) fn message_view(&self) -> MessageView<'_> {
        self.dialect.as_ref().map_or(MessageView::Owned(Value::Null), |d| d.message_view(&self.turn))
    }

    /// Whether the answer folded so far is whole without a terminal event
    /// (the turn not yet ended).
    pub(crate) fn complete_at_end(&self) -> bool {
        !self.turn.is_terminated() && self.dialect.as_deref().is_some_and(|d| d.complete_at_end(&self.turn))
    }

    /// The highest Responses `sequence_number` applied (other dialects:
    /// `None`).
    pub(crate) fn last_sequence_number(&self) -> Option<u64> {
        self.dialect.as_ref().and_then(|d| d.last_sequence_number())
    }

    /// Bytes held by the turn and the dialect (capacities).
    pub(crate) fn footprint(&self) -> usize {
        self.turn.footprint() + self.dialect.as_ref().map_or(0, |d| d.footprint())
    }
}

impl Units for Driver {
    /// One unit of a body being fed.
    #[inline(always)]
    fn unit(&mut self, unit: Unit<'_, '_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.route(unit, true, sink)
    }

    /// The unit a body's end left unfinished, applied at `finish` (no
    /// restart-or-resume decision: it is the end of the body fed).
    fn last_unit(&mut self, unit: Unit<'_, '_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.route(unit, false, sink)
    }
}

#[cfg(test)]
mod tests {
    use crate::providers::{Provider, Stream, StreamEvent};

    const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n";

    fn names(s: &mut Stream, body: &str, finish: bool) -> Vec<String> {
        let mut out = Vec::new();
        s.feed(body.as_bytes(), |e: &StreamEvent<'_>| out.push(e.name().to_owned())).unwrap();
        if finish {
            let _ = s.finish(|e: &StreamEvent<'_>| out.push(e.name().to_owned()));
        }
        out
    }

    /// After a reconnection the first event fed decides restart or resume,
    /// once; the event a body's end left unfinished, applied at `finish`,
    /// decides nothing.
    #[test]
    fn only_the_first_event_fed_after_a_reconnection_decides() {
        let mut s = Stream::new(Provider::Anthropic);
        names(&mut s, &format!("{START}\n"), false);
        s.reconnect().unwrap();
        let seen = names(&mut s, &format!("{START}\n{START}\n"), false);
        assert_eq!(seen.iter().filter(|n| *n == "turn_reset").count(), 1, "{seen:?}");
        assert_eq!(seen[0], "turn_reset");

        let mut s = Stream::new(Provider::Anthropic);
        names(&mut s, &format!("{START}\n"), false);
        s.reconnect().unwrap();
        let seen = names(&mut s, START, true);
        assert!(!seen.iter().any(|n| n == "turn_reset"), "{seen:?}");
        assert!(seen.iter().any(|n| n == "warning"), "{seen:?}");
    }
}
