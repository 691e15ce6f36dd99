//! The parser's materialized tree: the completed root, or a stack of open containers each holding
//! its completed members. Completing a value moves it into its parent in O(1) (plus one hash for
//! object members); materializing the best-effort value clones each open level once, O(size).

use serde_json::{Map, Value};

use super::events::{ContainerKind, PathSegment};

/// An open container with its completed members.
#[derive(Debug)]
pub(crate) enum Frame {
    Object(Map<String, Value>),
    Array(Vec<Value>),
    /// A container of a parser that keeps no tree (see `PartialJson::skeleton`): its kind and
    /// its number of members so far.
    Open {
        kind: ContainerKind,
        len: usize,
    },
}

/// What [`Frame::insert`] returns for an [`Open`](Frame::Open) frame, which stores nothing.
static NOT_STORED: Value = Value::Null;

impl Frame {
    /// Converts into the finished value (no copy).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Frame::Object(map) => Value::Object(map),
            Frame::Array(vec) => Value::Array(vec),
            Frame::Open { kind: ContainerKind::Object, .. } => Value::Object(Map::new()),
            Frame::Open { kind: ContainerKind::Array, .. } => Value::Array(Vec::new()),
        }
    }

    /// Whether this is an object (the members follow `,` or `}`).
    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Frame::Object(_) | Frame::Open { kind: ContainerKind::Object, .. })
    }

    /// Number of members so far.
    pub(crate) fn len(&self) -> usize {
        match self {
            Frame::Object(map) => map.len(),
            Frame::Array(vec) => vec.len(),
            Frame::Open { len, .. } => *len,
        }
    }

    /// Stores a completed child at `segment` (the key for objects; arrays append) and returns a
    /// reference to it. Duplicate keys behave as in serde_json: last value, first position.
    pub(crate) fn insert(&mut self, segment: &PathSegment, value: Value) -> &Value {
        match (self, segment) {
            (Frame::Open { len, .. }, _) => {
                *len += 1;
                &NOT_STORED
            }
            (Frame::Object(map), PathSegment::Key(key)) => match map.entry(key.as_str()) {
                serde_json::map::Entry::Vacant(vacant) => vacant.insert(value),
                serde_json::map::Entry::Occupied(mut occupied) => {
                    occupied.insert(value);
                    occupied.into_mut()
                }
            },
            (Frame::Array(vec), _) => {
                vec.push(value);
                // Just pushed: the vector is not empty.
                let last = vec.len() - 1;
                &vec[last]
            }
            // The parser keeps a `Key` segment for every object frame; an `Index` here would be a
            // bug. Degrade gracefully (no panic): store under the decimal index.
            (Frame::Object(map), PathSegment::Index(i)) => {
                let key = i.to_string();
                map.insert(key.clone(), value);
                &map[&key]
            }
        }
    }

    /// A copy of the container with its completed members, plus `child` (if any) inserted at
    /// `segment`.
    pub(crate) fn materialize(&self, segment: &PathSegment, child: Option<Value>) -> Value {
        let mut frame = match self {
            Frame::Open { kind: ContainerKind::Object, .. } => Frame::Object(Map::new()),
            Frame::Open { kind: ContainerKind::Array, .. } => Frame::Array(Vec::new()),
            Frame::Object(map) => Frame::Object(map.clone()),
            Frame::Array(vec) => {
                let mut copy = Vec::with_capacity(vec.len() + usize::from(child.is_some()));
                copy.extend(vec.iter().cloned());
                Frame::Array(copy)
            }
        };
        if let Some(child) = child {
            frame.insert(segment, child);
        }
        frame.into_value()
    }
}

/// Best-effort value of the open containers `stack` (outermost first) with `path[i]` the current
/// member segment of `stack[i]`, and `innermost` the partial scalar of the innermost level (if
/// any). Iterative: one clone per level, O(size) in total.
pub(crate) fn materialize(stack: &[Frame], path: &[PathSegment], innermost: Option<Value>) -> Value {
    let mut child = innermost;
    for (frame, segment) in stack.iter().zip(path).rev() {
        child = Some(frame.materialize(segment, child));
    }
    child.unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let mut frame = Frame::Object(Map::new());
        frame.insert(&PathSegment::Key("a".into()), json!(1));
        frame.insert(&PathSegment::Key("b".into()), json!(2));
        assert_eq!(frame.insert(&PathSegment::Key("a".into()), json!(3)), &json!(3));
        let value = frame.into_value();
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"a":3,"b":2}"#);
        let expected: Value = serde_json::from_str(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(serde_json::to_string(&expected).unwrap(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn materialize_nests_levels() {
        let stack = vec![Frame::Object(Map::new()), Frame::Array(vec![json!(1)])];
        let path = vec![PathSegment::Key("k".into()), PathSegment::Index(1)];
        assert_eq!(materialize(&stack, &path, Some(json!("x"))), json!({"k": [1, "x"]}));
        assert_eq!(materialize(&stack, &path, None), json!({"k": [1]}));
    }
}
