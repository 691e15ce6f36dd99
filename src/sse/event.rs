//! Dispatched events: a borrowed view and an owned copy.

/// One dispatched Server-Sent Event, borrowed from the chunk that was fed or
/// from the decoder's reused buffers. Valid until the next call on the
/// [`Events`](super::Events) it came from.
///
/// Equality compares the four fields, not [`id_generation`](Self::id_generation).
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub(crate) event: &'a str,
    pub(crate) data: &'a str,
    pub(crate) id: Option<&'a str>,
    pub(crate) retry: Option<u64>,
    pub(crate) id_generation: u64,
}

impl PartialEq for Event<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.event, self.data, self.id, self.retry) == (other.event, other.data, other.id, other.retry)
    }
}

impl Eq for Event<'_> {}

impl<'a> Event<'a> {
    /// A view over the given parts (for hosts and tests that build events).
    pub fn new(event: &'a str, data: &'a str, id: Option<&'a str>, retry: Option<u64>) -> Self {
        Event { event, data, id, retry, id_generation: 0 }
    }

    /// The event type: the last `event` field of the block, `"message"` when
    /// there was none or it was empty.
    pub fn event(&self) -> &'a str {
        self.event
    }

    /// The `data` lines of the block joined with LF (no trailing LF).
    pub fn data(&self) -> &'a str {
        self.data
    }

    /// The last event ID in force at dispatch: `None` until an `id` field was
    /// first accepted, `Some("")` after an empty `id` reset it.
    pub fn id(&self) -> Option<&'a str> {
        self.id
    }

    /// The valid `retry` value (milliseconds) set in this event's own block,
    /// if any. The decoder also keeps the stream's reconnection time.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// A counter that the decoder bumps whenever its last event ID may have
    /// changed (an `id` field accepted, an unterminated block's id dropped, a
    /// reset). Two events of one decoder with the same generation carry the
    /// same id, so a binding can convert the id once and share it until the
    /// generation changes instead of copying it into every event (the id can
    /// be up to [`DecoderConfig::max_id_len`](super::DecoderConfig::max_id_len)
    /// bytes and is repeated on every event). 0 for events built with
    /// [`Event::new`].
    pub fn id_generation(&self) -> u64 {
        self.id_generation
    }

    /// An owned copy.
    pub fn to_owned_event(&self) -> OwnedEvent {
        OwnedEvent {
            event: self.event.to_owned(),
            data: self.data.to_owned(),
            id: self.id.map(str::to_owned),
            retry: self.retry,
        }
    }
}

/// An owned [`Event`], for collecting events past the decoder's next call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct OwnedEvent {
    /// See [`Event::event`].
    pub event: String,
    /// See [`Event::data`].
    pub data: String,
    /// See [`Event::id`].
    pub id: Option<String>,
    /// See [`Event::retry`].
    pub retry: Option<u64>,
}

impl OwnedEvent {
    /// A borrowed view of this event.
    pub fn as_event(&self) -> Event<'_> {
        Event { event: &self.event, data: &self.data, id: self.id.as_deref(), retry: self.retry, id_generation: 0 }
    }
}

impl From<Event<'_>> for OwnedEvent {
    fn from(e: Event<'_>) -> Self {
        e.to_owned_event()
    }
}
