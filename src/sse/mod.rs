//! Server-Sent Events: the [`Decoder`] (Layer 1, lines split at CR, LF or
//! CRLF across chunk boundaries, and Layer 2, the field rules) and the
//! [`Encoder`] for the server side. The line splitter and the field parser
//! are internals of the decoder, not part of the API.
//!
//! The decoder follows the WHATWG HTML "event stream" interpretation
//! exactly (see [`decoder`] for the list of rules it implements).

pub(crate) mod buffer;
pub mod decoder;
pub mod encoder;
pub mod event;
pub(crate) mod fields;
pub(crate) mod lines;

pub use decoder::{
    DecodeError, Decoder, DecoderConfig, EndOfStream, Events, Utf8Mode, DEFAULT_LIMIT, DEFAULT_MAX_ID_LEN,
};
pub use encoder::{EncodeError, Encoder};
pub use event::{Event, OwnedEvent};
