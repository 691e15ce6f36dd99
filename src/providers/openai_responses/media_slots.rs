//! Media parts of a response: partial images and the response audio.

use serde_json::Value;

use super::ResponsesFold;
use crate::providers::events::StreamEvent;
use crate::providers::events::WarningCode;
use crate::providers::media;
use crate::providers::turn::{Part, Turn};
use crate::providers::{append_str, warn, Sink, StreamError};

/// [`Part::at`] of a media part (not an item's): its [`Part::sub`] is its
/// position in [`ResponsesFold::media`].
pub(super) const MEDIA_AT: u32 = u32::MAX;

/// A media part of the response (a partial image, or the response audio):
/// what its `part_end` content is built from.
#[derive(Debug)]
pub(super) enum MediaSlot {
    /// The `partial_image` event as received (released once committed).
    PartialImage(Value),
    /// The response audio: its base64 text so far, and which of its two
    /// streams (audio, transcript) started and finished.
    Audio { data: String, data_started: bool, data_done: bool, transcript_started: bool, transcript_done: bool },
}

impl ResponsesFold {
    /// The content of a media part: a partial image's event (without
    /// `type` and `sequence_number`), or the response audio as
    /// `{"data", "transcript"}`.
    pub(super) fn media_content(&self, part: &Part) -> Value {
        match self.media.get(part.sub as usize) {
            Some(MediaSlot::PartialImage(v)) => {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut() {
                    m.shift_remove("type");
                    m.shift_remove("sequence_number");
                }
                v
            }
            Some(MediaSlot::Audio { data, .. }) => {
                serde_json::json!({"data": data, "transcript": part.text})
            }
            None => Value::Null,
        }
    }

    /// `response.image_generation_call.partial_image`: one `media` part per
    /// partial image (each is a whole image), committed at once; its MIME
    /// type from `output_format` (default `png`).
    pub(super) fn on_partial_image(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        v: Value,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let Some(b64) = v.get("partial_image_b64").and_then(Value::as_str) else {
            warn(sink, WarningCode::InvalidEvent, &format!("{ty} without a string partial_image_b64; ignored"));
            return Ok(());
        };
        let mime = media::image_mime(v.get("output_format").and_then(Value::as_str).unwrap_or("png"));
        let index = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        let sub = self.media.len() as u32;
        let id = turn.open_media((MEDIA_AT, sub), 0, index, "image_generation_call.partial_image", &mime, sink)?;
        for key in ["item_id", "partial_image_index"] {
            if let Some(val) = v.get(key).filter(|x| !x.is_null()) {
                sink.event(&StreamEvent::PartMetadata { part: id, key, value: val });
            }
        }
        let b64 = b64.to_owned();
        self.media.push(MediaSlot::PartialImage(v));
        turn.append_base64(id, &b64, sink)?;
        turn.commit(self, id, false, sink);
        self.media[sub as usize] = MediaSlot::PartialImage(Value::Null);
        Ok(())
    }

    /// The response audio (`response.audio.delta` base64 bytes,
    /// `response.audio.transcript.delta` text): one `media` part
    /// (`audio/pcm`), committed once each of its started streams is done.
    pub(super) fn on_audio(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        v: &Value,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let delta = v.get("delta").and_then(Value::as_str);
        let is_delta = ty.ends_with(".delta");
        if is_delta && delta.is_none() {
            warn(sink, WarningCode::InvalidEvent, &format!("{ty} without a string delta; ignored"));
            return Ok(());
        }
        let id = match self.audio {
            Some(id) => id,
            None if !is_delta => return Ok(()),
            None => {
                let sub = self.media.len() as u32;
                let mime = media::audio_mime("pcm16");
                let id = turn.open_media((MEDIA_AT, sub), 0, 0, "audio", &mime, sink)?;
                self.media.push(MediaSlot::Audio {
                    data: String::new(),
                    data_started: false,
                    data_done: false,
                    transcript_started: false,
                    transcript_done: false,
                });
                *self.audio.insert(id)
            }
        };
        if !turn.parts[id as usize].is_open() {
            warn(sink, WarningCode::PartAlreadyEnded, &format!("{ty} after the audio part was committed; ignored"));
            return Ok(());
        }
        let sub = turn.parts[id as usize].sub as usize;
        let Some(MediaSlot::Audio { data, data_started, data_done, transcript_started, transcript_done }) =
            self.media.get_mut(sub)
        else {
            return Ok(());
        };
        match (ty, delta) {
            ("response.audio.delta", Some(d)) => {
                *data_started = true;
                data.push_str(d);
                turn.append_base64(id, d, sink)?;
            }
            ("response.audio.transcript.delta", Some(d)) => {
                *transcript_started = true;
                append_str(turn, id, d, sink)?;
            }
            ("response.audio.done", _) => *data_done = true,
            _ => *transcript_done = true,
        }
        if (*data_done || !*data_started) && (*transcript_done || !*transcript_started) && !is_delta {
            turn.commit(self, id, false, sink);
        }
        Ok(())
    }
}
