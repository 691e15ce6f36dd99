//! The public [`Stream`]: a body's [framing](super::framing) feeding the
//! [driver](super::driver), and what a host asks of the turn.

use serde_json::Value;

use super::driver::Driver;
use super::framing::{Framing, Unit, Units};
use super::sink::Sink;
use super::{MessageView, Provider, StreamConfig, StreamError, StreamEvent};
use crate::reconnect::ResumeCursor;
use crate::sse::Event;

/// One streamed turn: feed it bytes (or SSE events), get normalized events,
/// read the folded message at any time.
///
/// Guarantees: events come in stream order; the result does not depend on
/// how the bytes are chunked; no input makes it panic; memory is bounded by
/// [`StreamConfig`] plus the content folded.
#[derive(Debug)]
pub struct Stream {
    /// How the body is framed into units, with the one decoder it needs.
    framing: Framing,
    /// The turn and its dialect.
    driver: Driver,
    closed: bool,
    aborted: bool,
}

// A `Stream` moves between threads and is shared behind locks by the
// bindings (Python objects, Go handles): keep it `Send + Sync`.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Stream>();
};

impl Stream {
    /// A stream with the default [`StreamConfig`].
    pub fn new(provider: Provider) -> Self {
        Stream::with_config(provider, StreamConfig::default())
    }

    /// A stream with the given limits.
    pub fn with_config(provider: Provider, config: StreamConfig) -> Self {
        Stream {
            framing: Framing::of(provider, &config),
            driver: Driver::new(provider, config),
            closed: false,
            aborted: false,
        }
    }

    /// The limits the stream was made with.
    pub fn config(&self) -> &StreamConfig {
        &self.driver.turn.config
    }

    /// The dialect: the one given, or the one detected ([`Provider::Auto`]
    /// until detection).
    pub fn provider(&self) -> Provider {
        self.driver.provider()
    }

    /// Feeds raw bytes of the HTTP body, calling `on_event` for each
    /// normalized event, in stream order.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(&StreamEvent<'_>)) -> Result<(), StreamError> {
        self.feed_to(chunk, &mut on_event)
    }

    /// [`feed`](Self::feed) into any [`EventSink`](super::EventSink).
    pub(crate) fn feed_to(&mut self, chunk: &[u8], sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.driver.turn.begin_call();
        let Stream { framing, driver, .. } = self;
        let r = framing.feed(chunk, sink, driver);
        if r.is_err() {
            self.closed = true;
        }
        r
    }

    /// Feeds one already-decoded SSE event (for hosts with their own SSE
    /// decoder). Do not mix with [`feed`](Self::feed) on the same stream.
    pub fn feed_sse(
        &mut self,
        event: &Event<'_>,
        mut on_event: impl FnMut(&StreamEvent<'_>),
    ) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.driver.turn.begin_call();
        let r = self.driver.unit(Unit::Event(event), &mut on_event);
        if r.is_err() {
            self.closed = true;
        }
        r
    }

    /// The connection dropped and the host is about to feed the body of a
    /// new one (see "Reconnection" in the module docs). The event the old
    /// connection left unfinished is discarded; the first event of the new
    /// body decides restart (`turn_reset`) or resume.
    ///
    /// # Errors
    /// [`StreamError::Closed`] after `finish`, `abort` or an error.
    pub fn reconnect(&mut self) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.framing.reconnect();
        self.driver.reconnect();
        Ok(())
    }

    /// What to send on reconnection: the Responses `sequence_number` to
    /// resume after (`starting_after`), else the SSE `Last-Event-ID`, else
    /// nothing.
    pub fn resume_cursor(&self) -> ResumeCursor {
        if let Some(n) = self.last_sequence_number() {
            ResumeCursor::StartingAfter(n)
        } else if let Some(id) = self.last_event_id() {
            ResumeCursor::LastEventId(id.to_owned())
        } else {
            ResumeCursor::None
        }
    }

    /// The SSE last event ID (kept across reconnections).
    pub fn last_event_id(&self) -> Option<&str> {
        self.framing.last_event_id()
    }

    /// The server's reconnection time (`retry:`), if it sent one.
    pub fn reconnection_time(&self) -> Option<u64> {
        self.framing.reconnection_time()
    }

    /// The highest Responses `sequence_number` applied (other dialects:
    /// `None`).
    pub fn last_sequence_number(&self) -> Option<u64> {
        self.driver.last_sequence_number()
    }

    /// Aborts the turn (the user cancelled; see "Abort" in the module docs):
    /// one `turn_end` with stop reason `aborted`, and nothing after it.
    /// Open parts are closed as `incomplete` silently; committed parts stay
    /// in [`message`](Self::message). Does nothing once the turn is over.
    pub fn abort(&mut self, mut on_event: impl FnMut(&StreamEvent<'_>)) {
        self.abort_to(&mut |_: &StreamEvent<'_>| {}, &mut on_event);
    }

    /// [`abort`](Self::abort), the open parts' commits (not shown to the
    /// host) going to `closed` (the agent turn gives their calls a result).
    pub(crate) fn abort_to(&mut self, closed: &mut Sink<'_>, on_event: &mut Sink<'_>) {
        if self.closed || self.is_terminated() {
            self.closed = true;
            return;
        }
        self.closed = true;
        self.aborted = true;
        self.driver.abort(closed);
        on_event.event(&StreamEvent::TurnEnd { stop_reason: Some("aborted") });
    }

    /// After an error closed the stream: commits the parts still open as
    /// `incomplete` into `closed` (not shown to the host; the agent turn
    /// gives their calls a result), as [`abort`](Self::abort) does.
    pub(crate) fn close_open_parts(&mut self, closed: &mut Sink<'_>) {
        self.driver.close_open_parts(closed);
    }

    /// Whether an error, [`finish`](Self::finish) or [`abort`](Self::abort)
    /// closed the stream.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether [`abort`](Self::abort) ended the turn.
    pub fn is_aborted(&self) -> bool {
        self.aborted
    }

    /// Ends the stream. An event left undispatched by a missing final blank
    /// line is applied only if its data is complete JSON (warning
    /// `unterminated_final_event`), else discarded (warning
    /// `truncated_final_event`). Then, if the terminal event never came and
    /// the answer is not whole without it (see
    /// [`is_complete_at_end`](Self::is_complete_at_end)), open parts are
    /// committed as `incomplete` and [`StreamError::Incomplete`] is returned.
    pub fn finish(&mut self, mut on_event: impl FnMut(&StreamEvent<'_>)) -> Result<(), StreamError> {
        self.finish_to(&mut on_event)
    }

    /// [`finish`](Self::finish) into any [`EventSink`](super::EventSink).
    pub(crate) fn finish_to(&mut self, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.driver.turn.begin_call();
        self.closed = true;
        let Stream { framing, driver, .. } = self;
        framing.finish(sink, driver)?;
        driver.end_of_body(sink)
    }

    /// The folded message so far (also after an error): the JSON the
    /// provider's non-streaming endpoint would have returned. `null` before
    /// the dialect is known.
    pub fn message(&self) -> Value {
        self.driver.message()
    }

    /// The folded message of [`message`](Self::message), the stream
    /// consumed: equal to it, built by moving the fold's members and texts
    /// into it instead of copying them (for the host done with the stream).
    pub fn into_message(self) -> Value {
        self.driver.into_message()
    }

    /// The folded message of [`message`](Self::message), lent where the
    /// dialect holds it as it is (a Responses terminal `output`): its JSON
    /// or a host's value is then built without a copy of the message first.
    pub fn message_view(&self) -> MessageView<'_> {
        self.driver.message_view()
    }

    /// Whether the terminal event was seen.
    pub fn is_terminated(&self) -> bool {
        self.driver.turn.is_terminated()
    }

    /// Whether the body may end here: the turn ended normally (its terminal
    /// event came, or [`finish`](Self::finish) already ended it), or the
    /// answer folded so far is whole without a terminal event — Gemini (it
    /// has none) once every candidate has its `finishReason`, Bedrock
    /// Converse after `messageStop`, Ollama on a lone done line, OpenAI Chat
    /// once every choice has its `finish_reason` and the usage a chunk
    /// announced came (no `[DONE]`: vLLM, TGI, proxies).
    ///
    /// Hosts ask it when a connection's body ends, before `finish`: when
    /// true the answer is complete (no reconnection) and `finish` ends the
    /// turn normally (`turn_end` with the stop reason; for OpenAI Chat
    /// without `[DONE]`, after a `terminal_missing` warning). False after an
    /// error or [`abort`](Self::abort), and while the answer is not whole
    /// (then `finish` returns [`StreamError::Incomplete`]). It never changes
    /// the stream, and considers the events dispatched so far only: an
    /// event the body's end left without its dispatching blank line is
    /// decided by `finish` (applied when its data is complete JSON).
    pub fn is_complete_at_end(&self) -> bool {
        if self.driver.turn.state == super::turn::TurnState::Done {
            return true;
        }
        !self.closed && self.driver.complete_at_end()
    }

    /// Bytes held by the stream: its own size, the framing decoder's
    /// buffers and the folded content (capacities).
    pub fn memory_footprint(&self) -> usize {
        core::mem::size_of::<Self>() + self.framing.footprint() + self.driver.footprint()
    }
}
