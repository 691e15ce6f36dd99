//! Dispatched events: a borrowed view and an owned copy.

/// One dispatched Server-Sent Event, borrowed from the chunk that was fed or
/// from the decoder's reused buffers. Valid until the next call on the
/// [`Events`](super::Events) it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    pub(crate) event: &'a str,
    pub(crate) data: &'a str,
    pub(crate) id: Option<&'a str>,
    pub(crate) retry: Option<u64>,
}

impl<'a> Event<'a> {
    /// A view over the given parts (for hosts and tests that build events).
    pub fn new(event: &'a str, data: &'a str, id: Option<&'a str>, retry: Option<u64>) -> Self {
        Event { event, data, id, retry }
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
        Event { event: &self.event, data: &self.data, id: self.id.as_deref(), retry: self.retry }
    }
}

impl From<Event<'_>> for OwnedEvent {
    fn from(e: Event<'_>) -> Self {
        e.to_owned_event()
    }
}
