//! Where the dialects and the driver emit events ([`EventSink`]), and the
//! warnings every dialect gives alike.

use super::view::JsonStr;
use super::{StreamEvent, WarningCode};

/// The sink type the dialects emit to.
pub(crate) type Sink<'s> = dyn EventSink + 's;

/// Where the dialects emit events: any `FnMut(&StreamEvent)`, or a sink
/// that can use a delta's text as the provider escaped it (the relay).
pub(crate) trait EventSink {
    /// Takes one event.
    fn event(&mut self, event: &StreamEvent<'_>);

    /// Takes a `text_delta` or `tool_args_delta` event together with its
    /// text as the provider escaped it: the contents of the JSON string it
    /// sent, without the quotes, escaped exactly as serde_json escapes the
    /// event's text (only `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`), so that
    /// a sink writing the text as a JSON string can copy it.
    fn escaped(&mut self, event: &StreamEvent<'_>, escaped: &str) {
        let _ = escaped;
        self.event(event);
    }
}

impl<F: FnMut(&StreamEvent<'_>) + ?Sized> EventSink for F {
    fn event(&mut self, event: &StreamEvent<'_>) {
        self(event);
    }
}

/// Emits a warning.
pub(crate) fn warn(sink: &mut Sink<'_>, code: WarningCode, message: &str) {
    sink.event(&StreamEvent::Warning { code, message });
}

/// The `lone_surrogate` warning: `n` lone surrogate escapes in `what` read
/// as U+FFFD.
pub(crate) fn warn_lone(sink: &mut Sink<'_>, what: &str, n: usize) {
    let s = if n == 1 { "" } else { "s" };
    warn(
        sink,
        WarningCode::LoneSurrogate,
        &format!("{what}: {n} lone surrogate escape{s} (\\uD800-\\uDFFF unpaired) read as U+FFFD"),
    );
}

/// Warns `lone_surrogate` when a streamed string held lone surrogates (it
/// was decoded with U+FFFD in their place).
pub(crate) fn check_lone(sink: &mut Sink<'_>, what: &str, s: &JsonStr<'_>) {
    if s.lone_surrogates() {
        warn_lone(sink, what, 1);
    }
}
