//! Path-level events emitted by [`PartialJson::push`](super::PartialJson::push).
//!
//! The event types only: this module knows nothing of the parser.
//! [`PathEvent::value`], which parses a completed container's text, is
//! defined beside the parser, in [`partial`](super::partial).

use serde_json::Value;

/// One step of a path from the root value to a nested value.
///
/// The path of the root value is the empty slice. An object member is reached by its key
/// (decoded, escapes resolved), an array element by its zero-based index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// The member of an object with this (decoded) key.
    Key(String),
    /// The element of an array at this zero-based index.
    Index(usize),
}

/// The kind of a container value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    /// A JSON object (`{...}`).
    Object,
    /// A JSON array (`[...]`).
    Array,
}

/// A path-level event, borrowed from the parser (valid only during the callback).
///
/// Events arrive in document order. For every value of the document the parser emits, in order:
/// * containers: one [`ContainerStart`](PathEvent::ContainerStart) when the opening bracket is
///   read, then the events of the members, then one [`ValueComplete`](PathEvent::ValueComplete)
///   when the closing bracket is read;
/// * strings: zero or more [`StringAppend`](PathEvent::StringAppend) (their concatenation is
///   exactly the decoded string), then one `ValueComplete` when the closing quote is read;
/// * literals (`true`, `false`, `null`): one `ValueComplete` when the last letter is read;
/// * numbers: one `ValueComplete` when the byte that ends the number is read (a number at the
///   very end of the input may still grow, so a top-level number is only completed by
///   [`finish`](super::PartialJson::finish), which emits no event).
///
/// Object keys produce no events of their own; they appear as the last [`PathSegment::Key`] of the
/// member's path. A duplicate key produces events for the new member at the same path (the
/// materialized object keeps the last value at the first position, as serde_json does).
#[derive(Debug, Clone, PartialEq)]
pub enum PathEvent<'a> {
    /// A container started at `path` (wire name `"container_start"`).
    ContainerStart {
        /// Path of the new container.
        path: &'a [PathSegment],
        /// Object or array.
        kind: ContainerKind,
    },
    /// New decoded text of the string at `path` (wire name `"string_append"`).
    ///
    /// `text` holds only the text decoded since the previous event for this string, with escapes
    /// resolved; it is never empty and never splits a character. The parser emits at most one
    /// `StringAppend` per string per pushed fragment.
    StringAppend {
        /// Path of the string value.
        path: &'a [PathSegment],
        /// The newly decoded text.
        text: &'a str,
    },
    /// The value at `path` is complete (wire name `"value_complete"`): scalars (strings included)
    /// and containers when they close. `value` is borrowed from the parser's tree (no copy) and is
    /// identical to what serde_json produces for that part of the document.
    ValueComplete {
        /// Path of the completed value.
        path: &'a [PathSegment],
        /// The completed value.
        value: &'a Value,
    },
    /// A container is complete, given as its JSON text as it arrived (wire name
    /// `"value_complete"`, like [`ValueComplete`](PathEvent::ValueComplete), whose JSON form it
    /// shares: [`value`](Self::value) parses the text). The tool-argument path events of a
    /// provider stream send this for containers: they keep no tree, so a closing container costs
    /// O(1) and a host parses the text only where it wants the value.
    /// [`PartialJson::push`](super::PartialJson::push) never emits it.
    ContainerComplete {
        /// Path of the completed container.
        path: &'a [PathSegment],
        /// Object or array.
        kind: ContainerKind,
        /// Its JSON text, validated, whitespace as received.
        json: &'a str,
    },
}

impl PathEvent<'_> {
    /// The wire name: `"container_start"`, `"string_append"` or `"value_complete"`.
    pub fn name(&self) -> &'static str {
        match self {
            PathEvent::ContainerStart { .. } => "container_start",
            PathEvent::StringAppend { .. } => "string_append",
            PathEvent::ValueComplete { .. } | PathEvent::ContainerComplete { .. } => "value_complete",
        }
    }

    /// The path the event is about.
    pub fn path(&self) -> &[PathSegment] {
        match self {
            PathEvent::ContainerStart { path, .. }
            | PathEvent::StringAppend { path, .. }
            | PathEvent::ValueComplete { path, .. }
            | PathEvent::ContainerComplete { path, .. } => path,
        }
    }

    /// An owned copy of this event (copies the path, the text or the value).
    pub fn to_owned_event(&self) -> OwnedPathEvent {
        match *self {
            PathEvent::ContainerStart { path, kind } => OwnedPathEvent::ContainerStart { path: path.to_vec(), kind },
            PathEvent::StringAppend { path, text } => {
                OwnedPathEvent::StringAppend { path: path.to_vec(), text: text.to_owned() }
            }
            PathEvent::ValueComplete { path, value } => {
                OwnedPathEvent::ValueComplete { path: path.to_vec(), value: value.clone() }
            }
            PathEvent::ContainerComplete { path, kind, json } => {
                OwnedPathEvent::ContainerComplete { path: path.to_vec(), kind, json: json.to_owned() }
            }
        }
    }
}

/// An owned [`PathEvent`], as returned by [`PartialJson::push_owned`](super::PartialJson::push_owned).
#[derive(Debug, Clone, PartialEq)]
pub enum OwnedPathEvent {
    /// See [`PathEvent::ContainerStart`].
    ContainerStart {
        /// Path of the new container.
        path: Vec<PathSegment>,
        /// Object or array.
        kind: ContainerKind,
    },
    /// See [`PathEvent::StringAppend`].
    StringAppend {
        /// Path of the string value.
        path: Vec<PathSegment>,
        /// The newly decoded text (never empty).
        text: String,
    },
    /// See [`PathEvent::ValueComplete`].
    ValueComplete {
        /// Path of the completed value.
        path: Vec<PathSegment>,
        /// The completed value.
        value: Value,
    },
    /// See [`PathEvent::ContainerComplete`].
    ContainerComplete {
        /// Path of the completed container.
        path: Vec<PathSegment>,
        /// Object or array.
        kind: ContainerKind,
        /// Its JSON text.
        json: String,
    },
}

impl OwnedPathEvent {
    /// The wire name: `"container_start"`, `"string_append"` or `"value_complete"`.
    pub fn name(&self) -> &'static str {
        match self {
            OwnedPathEvent::ContainerStart { .. } => "container_start",
            OwnedPathEvent::StringAppend { .. } => "string_append",
            OwnedPathEvent::ValueComplete { .. } | OwnedPathEvent::ContainerComplete { .. } => "value_complete",
        }
    }

    /// The path the event is about.
    pub fn path(&self) -> &[PathSegment] {
        match self {
            OwnedPathEvent::ContainerStart { path, .. }
            | OwnedPathEvent::StringAppend { path, .. }
            | OwnedPathEvent::ValueComplete { path, .. }
            | OwnedPathEvent::ContainerComplete { path, .. } => path,
        }
    }

    /// A borrowed view of this event.
    pub fn as_event(&self) -> PathEvent<'_> {
        match self {
            OwnedPathEvent::ContainerStart { path, kind } => PathEvent::ContainerStart { path, kind: *kind },
            OwnedPathEvent::StringAppend { path, text } => PathEvent::StringAppend { path, text },
            OwnedPathEvent::ValueComplete { path, value } => PathEvent::ValueComplete { path, value },
            OwnedPathEvent::ContainerComplete { path, kind, json } => {
                PathEvent::ContainerComplete { path, kind: *kind, json }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_round_trip() {
        let path = [PathSegment::Key("a".into()), PathSegment::Index(2)];
        let value = Value::Bool(true);
        let events = [
            PathEvent::ContainerStart { path: &path, kind: ContainerKind::Array },
            PathEvent::StringAppend { path: &path, text: "hi" },
            PathEvent::ValueComplete { path: &path, value: &value },
        ];
        let names: Vec<_> = events.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["container_start", "string_append", "value_complete"]);
        for event in &events {
            let owned = event.to_owned_event();
            assert_eq!(owned.name(), event.name());
            assert_eq!(owned.path(), &path[..]);
            assert_eq!(&owned.as_event(), event);
        }
    }
}
