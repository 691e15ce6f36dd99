//! Server-Sent Events: Layer 1 ([`lines`]), Layer 2 ([`fields`] and the
//! [`Decoder`]) and the [`Encoder`] for the server side.
//!
//! The decoder follows the WHATWG HTML "event stream" interpretation
//! exactly (see [`decoder`] for the list of rules it implements).

pub mod decoder;
pub mod encoder;
pub mod event;
pub mod fields;
pub mod lines;

pub use decoder::{
    DecodeError, Decoder, DecoderConfig, EndOfStream, Events, Utf8Mode, DEFAULT_LIMIT, DEFAULT_MAX_ID_LEN,
};
pub use encoder::{EncodeError, Encoder};
pub use event::{Event, OwnedEvent};
