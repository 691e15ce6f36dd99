//! How a body's bytes become the units the [driver](super::driver) folds:
//! one [`Framing`] over Server-Sent Events, newline-delimited JSON (Ollama)
//! and the AWS event stream (Bedrock), holding only the decoder its body
//! needs.
//!
//! A stream given its dialect knows its framing from the start;
//! [`Provider::Auto`] reads the body's start
//! undecided (see [`prefix`](super::prefix)) and picks the framing at the
//! first byte that decides, dropping what the others would have needed: a
//! body that is not SSE holds no SSE decoder.

use super::prefix::{Picked, Prefix};
use super::sink::{warn, Sink};
use super::{bedrock, ndjson, Provider, StreamConfig, StreamError, WarningCode};
use crate::eventstream::{DecoderLimits, Message};
use crate::sse::{Decoder, Event};

/// One unit of a body, as its framing delivers it to the driver.
pub(crate) enum Unit<'u, 'a> {
    /// An SSE event.
    Event(&'u Event<'a>),
    /// One line of a newline-delimited JSON body, as an event named `line`.
    Line(&'u Event<'a>),
    /// One AWS event-stream message, with the buffer a `chunk` message's
    /// base64 payload is decoded into (reused).
    Message(&'u Message<'a>, &'u mut Vec<u8>),
}

/// What a framing hands its units to: the [driver](super::driver).
pub(crate) trait Units {
    /// Takes one unit of a body being fed.
    fn unit(&mut self, unit: Unit<'_, '_>, sink: &mut Sink<'_>) -> Result<(), StreamError>;

    /// Takes the unit a body's end left unfinished, at `finish`.
    fn last_unit(&mut self, unit: Unit<'_, '_>, sink: &mut Sink<'_>) -> Result<(), StreamError>;
}

/// How a body is framed into units, with the one decoder that framing needs.
#[derive(Debug)]
pub(crate) enum Framing {
    /// [`Provider::Auto`] before the byte that decides: the undecided start
    /// (a BOM, blank bytes) fed to the SSE decoder, which the SSE framing
    /// then keeps, and, once there is one, as the other framings took it.
    Undecided {
        /// The SSE decoder, fed the undecided start.
        sse: Decoder,
        /// The undecided start as the other framings took it.
        prefix: Option<Box<Prefix>>,
        /// The limits of an event-stream decoder, if that framing is picked.
        event_stream: DecoderLimits,
    },
    /// Server-Sent Events.
    Sse(Decoder),
    /// One JSON document per line (Ollama).
    Lines {
        /// The line splitter.
        lines: ndjson::Lines,
        /// The longest line accepted (the SSE decoder's `max_line_len`).
        max_line_len: usize,
    },
    /// AWS event-stream messages (Bedrock).
    EventStream(Box<bedrock::Frames>),
}

impl Framing {
    /// The framing of `provider`'s bodies (undecided for
    /// [`Provider::Auto`]), within `config`'s limits.
    pub(crate) fn of(provider: Provider, config: &StreamConfig) -> Framing {
        match provider {
            Provider::Auto => Framing::Undecided {
                sse: Decoder::with_config(config.sse.clone()),
                prefix: None,
                event_stream: config.event_stream,
            },
            Provider::Ollama => Framing::lines(config.sse.max_line_len),
            Provider::Bedrock | Provider::BedrockConverse => Framing::event_stream(config.event_stream),
            _ => Framing::Sse(Decoder::with_config(config.sse.clone())),
        }
    }

    /// Newline-delimited JSON, lines up to `max_line_len` bytes.
    fn lines(max_line_len: usize) -> Framing {
        Framing::Lines { lines: ndjson::Lines::default(), max_line_len }
    }

    /// The AWS event stream, within `limits`.
    fn event_stream(limits: DecoderLimits) -> Framing {
        Framing::EventStream(Box::new(bedrock::Frames::with_limits(limits)))
    }

    /// Frames `chunk`, the next bytes of the body, handing each complete
    /// unit to `units` in body order; stops at the first error (a
    /// framing's or `units`').
    #[inline]
    pub(crate) fn feed<U: Units>(
        &mut self,
        chunk: &[u8],
        sink: &mut Sink<'_>,
        units: &mut U,
    ) -> Result<(), StreamError> {
        let mut chunk = chunk;
        if let Framing::Undecided { sse, prefix, .. } = self {
            let (len, picked) = Prefix::scan(prefix.as_deref(), chunk);
            if len > 0 {
                prefix.get_or_insert_with(Default::default).take(&chunk[..len], sse);
                chunk = &chunk[len..];
            }
            let Some(picked) = picked else { return Ok(()) };
            self.pick(picked)?;
        }
        match self {
            Framing::Sse(decoder) => {
                let mut events = decoder.feed(chunk);
                while let Some(r) = events.next_event() {
                    let event = r.map_err(StreamError::Sse)?;
                    units.unit(Unit::Event(&event), sink)?;
                }
                Ok(())
            }
            Framing::Lines { lines, max_line_len } => lines.feed(chunk, *max_line_len, &mut |line| {
                units.unit(Unit::Line(&Event::new("line", line, None, None)), sink)
            }),
            Framing::EventStream(frames) => {
                let bedrock::Frames { decoder, json } = &mut **frames;
                let mut failure = None;
                let r = decoder.feed(chunk, |message| {
                    if failure.is_none() {
                        failure = units.unit(Unit::Message(&message, json), sink).err();
                    }
                });
                match (failure, r) {
                    (Some(e), _) => Err(e),
                    (None, r) => r.map_err(StreamError::EventStream),
                }
            }
            Framing::Undecided { .. } => Ok(()),
        }
    }

    /// [`Provider::Auto`]'s framing, picked by the first deciding byte,
    /// going on from the undecided start (see [`prefix`](super::prefix)):
    /// the error a framing found in that start is the stream's. The SSE
    /// decoder is kept only when SSE is picked.
    fn pick(&mut self, picked: Picked) -> Result<(), StreamError> {
        let undecided = core::mem::replace(self, Framing::lines(0));
        let Framing::Undecided { sse, prefix, event_stream } = undecided else {
            *self = undecided;
            return Ok(());
        };
        let max_line_len = sse.config().max_line_len;
        *self = match picked {
            Picked::Sse => Framing::Sse(sse),
            Picked::Lines => Framing::lines(max_line_len),
            Picked::EventStream => Framing::event_stream(event_stream),
        };
        let Some(mut prefix) = prefix else { return Ok(()) };
        match self {
            Framing::Sse(_) => prefix.sse_error().map_or(Ok(()), |e| Err(StreamError::Sse(e))),
            Framing::Lines { lines, .. } => {
                *lines = prefix.into_lines()?;
                Ok(())
            }
            Framing::EventStream(frames) => Ok(prefix.into_frames(&mut frames.decoder)?),
            Framing::Undecided { .. } => Ok(()),
        }
    }

    /// Ends the body: the unit its end left unfinished, if any, is handed
    /// to `units` when it is whole (warning `unterminated_final_event`), else
    /// discarded (warning `truncated_final_event`; see the module docs of
    /// [`providers`](super) and [`ollama`](super::ollama)).
    pub(crate) fn finish<U: Units>(&mut self, sink: &mut Sink<'_>, units: &mut U) -> Result<(), StreamError> {
        let unterminated = match self {
            Framing::Lines { lines, .. } => {
                if let Some(line) = lines.finish() {
                    ndjson::finish_line(&line, sink, &mut |event, sink| units.last_unit(Unit::Line(event), sink))?;
                }
                None
            }
            Framing::EventStream(frames) => {
                let end = frames.decoder.finish();
                if end.discarded_bytes > 0 {
                    let msg = format!("{} bytes of an unfinished event-stream message; discarded", end.discarded_bytes);
                    warn(sink, WarningCode::TruncatedFinalEvent, &msg);
                }
                None
            }
            Framing::Undecided { sse, prefix, .. } => {
                // A blank body: the default framing's (SSE's) error, if any.
                if let Some(e) = prefix.as_mut().and_then(|p| p.sse_error()) {
                    return Err(StreamError::Sse(e));
                }
                sse.finish().unterminated
            }
            Framing::Sse(decoder) => decoder.finish().unterminated,
        };
        let Some(ev) = unterminated else { return Ok(()) };
        let complete = ev.data.trim() == "[DONE]" || serde_json::from_str::<serde::de::IgnoredAny>(&ev.data).is_ok();
        if complete {
            warn(
                sink,
                WarningCode::UnterminatedFinalEvent,
                &format!(
                    "final event {:?} had no dispatching blank line; applied (its data is complete JSON)",
                    ev.event
                ),
            );
            units.last_unit(Unit::Event(&ev.as_event()), sink)
        } else {
            warn(
                sink,
                WarningCode::TruncatedFinalEvent,
                &format!("final event {:?} had no dispatching blank line and truncated data; discarded", ev.event),
            );
            Ok(())
        }
    }

    /// The connection dropped: what the old body left unfinished is
    /// forgotten, and the new body starts afresh (an undecided one decides
    /// anew); the SSE last event ID and reconnection time are kept.
    pub(crate) fn reconnect(&mut self) {
        match self {
            Framing::Sse(decoder) => {
                decoder.finish();
            }
            Framing::Undecided { sse, prefix, .. } => {
                sse.finish();
                *prefix = None;
            }
            Framing::Lines { lines, .. } => lines.reset(),
            Framing::EventStream(frames) => {
                frames.decoder.finish();
            }
        }
    }

    /// The SSE decoder, if the body is (or may still be) SSE.
    fn sse(&self) -> Option<&Decoder> {
        match self {
            Framing::Sse(decoder) | Framing::Undecided { sse: decoder, .. } => Some(decoder),
            Framing::Lines { .. } | Framing::EventStream(_) => None,
        }
    }

    /// The SSE last event ID (none for a body that is not SSE).
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.sse().and_then(Decoder::last_event_id)
    }

    /// The server's SSE reconnection time (`retry:`), if it sent one.
    pub(crate) fn reconnection_time(&self) -> Option<u64> {
        self.sse().and_then(Decoder::reconnection_time)
    }

    /// Bytes held outside the framing's own size: the decoder's buffers.
    pub(crate) fn footprint(&self) -> usize {
        let sse = self.sse().map_or(0, |d| d.memory_footprint() - core::mem::size_of::<Decoder>());
        sse + match self {
            Framing::Undecided { prefix, .. } => prefix.as_ref().map_or(0, |p| p.footprint()),
            Framing::Lines { lines, .. } => lines.footprint(),
            Framing::EventStream(frames) => frames.footprint(),
            Framing::Sse(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::StreamEvent;

    fn kind(f: &Framing) -> &'static str {
        match f {
            Framing::Undecided { .. } => "undecided",
            Framing::Sse(_) => "sse",
            Framing::Lines { .. } => "lines",
            Framing::EventStream(_) => "event_stream",
        }
    }

    /// The body's framing and the units it gave (name and data), fed in
    /// `chunk`-byte pieces.
    fn frame(provider: Provider, body: &[u8], chunk: usize) -> (&'static str, Vec<String>) {
        struct Seen(Vec<String>);
        impl Units for Seen {
            fn unit(&mut self, unit: Unit<'_, '_>, _: &mut Sink<'_>) -> Result<(), StreamError> {
                self.0.push(match unit {
                    Unit::Event(e) => format!("event {}", e.data()),
                    Unit::Line(e) => format!("line {}", e.data()),
                    Unit::Message(m, _) => format!("message {}", m.payload.len()),
                });
                Ok(())
            }
            fn last_unit(&mut self, unit: Unit<'_, '_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
                self.unit(unit, sink)
            }
        }
        let mut f = Framing::of(provider, &StreamConfig::default());
        let mut units = Seen(Vec::new());
        let sink = &mut |_: &StreamEvent<'_>| {};
        for piece in body.chunks(chunk) {
            f.feed(piece, sink, &mut units).unwrap();
        }
        f.finish(sink, &mut units).unwrap();
        (kind(&f), units.0)
    }

    #[test]
    fn auto_keeps_only_the_decoder_its_body_needs() {
        let cases: [(&[u8], &str, &[&str]); 4] = [
            (b"\xef\xbb\xbf\n\ndata: x\n\ndata: 1", "sse", &["event x", "event 1"]),
            (b"\r\n{\"a\":1}\n{\"b\":2}", "lines", &["line {\"a\":1}", "line {\"b\":2}"]),
            (b"\n \n", "undecided", &[]),
            (b"\x00\x00\x00", "event_stream", &[]),
        ];
        for (body, framing, units) in cases {
            for chunk in [1, 2, body.len()] {
                assert_eq!(
                    frame(Provider::Auto, body, chunk),
                    (framing, units.iter().map(|u| u.to_string()).collect())
                );
            }
        }
        assert!(Framing::of(Provider::Auto, &StreamConfig::default()).sse().is_some());
        for (provider, framing) in
            [(Provider::Anthropic, "sse"), (Provider::Ollama, "lines"), (Provider::Bedrock, "event_stream")]
        {
            let f = Framing::of(provider, &StreamConfig::default());
            assert_eq!(kind(&f), framing);
            assert_eq!(f.sse().is_some(), framing == "sse", "{provider:?}");
        }
    }
}
