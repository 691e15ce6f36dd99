//! Incremental partial JSON: tool-call arguments usable while they stream, in time
//! linear in their size.
//!
//! [`PartialJson`] consumes fragments of a JSON document split at arbitrary bytes, reports
//! path-level [`PathEvent`]s as they become known, materializes a best-effort current value on
//! demand and gives the strict result at the end.
//!
//! ```
//! use ssefold::json::{PartialJson, PathEvent, PathSegment};
//!
//! let mut parser = PartialJson::new();
//! let mut content = String::new();
//! for fragment in [&b"{\"path\": \"src/ma"[..], b"in.rs\", \"content\": \"fn main() {\\n", b"}\"}"] {
//!     parser
//!         .push(fragment, |event| {
//!             if let PathEvent::StringAppend { path: [PathSegment::Key(k)], text } = event {
//!                 if k == "content" {
//!                     content.push_str(text);
//!                 }
//!             }
//!         })
//!         .unwrap();
//! }
//! assert_eq!(content, "fn main() {\n}");
//! assert_eq!(parser.finish().unwrap()["path"], "src/main.rs");
//! ```

mod error;
mod events;
pub mod partial;
pub(crate) mod scan;
mod tree;

pub use error::{PartialJsonError, PartialJsonErrorKind, PartialJsonLimits};
pub use events::{ContainerKind, OwnedPathEvent, PathEvent, PathSegment};
pub use partial::{parse_partial_json, PartialJson, PartialStrings};
