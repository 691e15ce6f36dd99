//! What the parser keeps of each completed value, by its [`Mode`]: the tree of values (stored
//! in the innermost open container, or as the root), or in a skeleton parser only the count of
//! each container's members; and the estimate of what the tree costs in memory, which bounds a
//! [`Mode::Bounded`] parser's tree.

use serde_json::Value;

use super::super::events::{ContainerKind, PathEvent, PathSegment};
use super::super::tree::Frame;
use super::lexer::Scan;
use super::structure::Expect;
use super::{Mode, PartialJson, REUSE_STRING_MAX};

impl PartialJson {
    /// Stores a completed value in its parent (or as the root) and reports it.
    pub(super) fn complete<F: FnMut(&PathEvent<'_>)>(&mut self, value: Value, on_event: &mut F) {
        self.lex.scan = Scan::Between;
        let text_bytes = match &value {
            Value::String(text) => text.len(),
            _ => 0,
        };
        if !self.has_tree() {
            self.tree_bytes += self.slot_bytes() + text_bytes;
            self.settle();
            on_event(&PathEvent::ValueComplete { path: &self.path, value: &value });
            if let Value::String(mut buffer) = value {
                // Reuse the string's buffer for the next one (unless it is huge).
                if buffer.capacity() > self.lex.sbuf.capacity() && buffer.capacity() <= REUSE_STRING_MAX {
                    buffer.clear();
                    self.lex.sbuf = buffer;
                }
            }
            return;
        }
        match (self.stack.last_mut(), self.path.last()) {
            (Some(frame), Some(segment)) => {
                let object = frame.is_object();
                self.tree_bytes += text_bytes + Self::member_bytes(object, segment);
                self.expect = if object { Expect::ObjectCommaOrEnd } else { Expect::ArrayCommaOrEnd };
                let value = frame.insert(segment, value);
                on_event(&PathEvent::ValueComplete { path: &self.path, value });
            }
            _ => {
                self.tree_bytes += text_bytes + core::mem::size_of::<Value>();
                self.expect = Expect::AfterRoot;
                self.root_done = self.mode.skeleton();
                let value: &Value = self.root.insert(value);
                on_event(&PathEvent::ValueComplete { path: &[], value });
            }
        }
        if self.mode.skeleton() {
            self.check_tree_budget();
        }
    }

    /// Stores a completed container in the innermost container (or as the root), setting what is
    /// expected next (its size is already counted).
    pub(super) fn store(&mut self, value: Value) {
        match (self.stack.last_mut(), self.path.last()) {
            (Some(frame), Some(segment)) => {
                self.expect = if frame.is_object() { Expect::ObjectCommaOrEnd } else { Expect::ArrayCommaOrEnd };
                frame.insert(segment, value);
            }
            _ => {
                self.expect = Expect::AfterRoot;
                self.root_done = self.mode.skeleton();
                self.root = Some(value);
            }
        }
    }

    /// Skeleton: a value completed in the innermost container (counted) or as the root.
    pub(super) fn settle(&mut self) {
        match (self.stack.last_mut(), self.path.last()) {
            (Some(frame), Some(segment)) => {
                self.expect = if frame.is_object() { Expect::ObjectCommaOrEnd } else { Expect::ArrayCommaOrEnd };
                frame.insert(segment, Value::Null);
            }
            _ => {
                self.expect = Expect::AfterRoot;
                self.root_done = true;
            }
        }
    }

    /// A [`Mode::Bounded`] parser past its tree budget drops the tree (see
    /// [`drop_tree`](Self::drop_tree)).
    #[inline]
    pub(super) fn check_tree_budget(&mut self) {
        if let Mode::Bounded { budget, .. } = self.mode {
            if self.tree_bytes > budget {
                self.drop_tree();
            }
        }
    }

    /// Drops the tree: the open containers keep only their kind and length, the root is
    /// forgotten, and the parser is a plain skeleton one from here on (until
    /// [`reset`](Self::reset)).
    #[cold]
    #[inline(never)]
    fn drop_tree(&mut self) {
        if let Mode::Bounded { dropped, .. } = &mut self.mode {
            *dropped = true;
        }
        for frame in &mut self.stack {
            let kind = if frame.is_object() { ContainerKind::Object } else { ContainerKind::Array };
            *frame = Frame::Open { kind, len: frame.len() };
        }
        self.root = None;
    }

    /// Estimated heap bytes of one more member of the innermost container (or the root), as
    /// serde_json (`preserve_order`) holds it.
    pub(super) fn slot_bytes(&self) -> usize {
        match (self.stack.last(), self.path.last()) {
            (Some(frame), Some(segment)) => Self::member_bytes(frame.is_object(), segment),
            _ => core::mem::size_of::<Value>(),
        }
    }

    /// [`slot_bytes`](Self::slot_bytes) of a member of an object (or an array) at `segment`.
    #[inline]
    fn member_bytes(object: bool, segment: &PathSegment) -> usize {
        const VALUE: usize = core::mem::size_of::<Value>();
        match segment {
            // An `IndexMap` entry (hash, key, value) with the vector's growth slack, its index in
            // the hash table, and the key's own allocation.
            PathSegment::Key(key) if object => 2 * (8 + 24 + VALUE) + 24 + key.len().max(24) + 8,
            // A vector element, with the vector's growth slack.
            _ => 2 * VALUE,
        }
    }

    /// Estimated heap bytes of a container's own allocations (a vector's first four elements,
    /// a map's first entries and table), whatever its members.
    pub(super) fn container_bytes(kind: ContainerKind) -> usize {
        match kind {
            ContainerKind::Array => 4 * core::mem::size_of::<Value>() + 16,
            ContainerKind::Object => 320,
        }
    }

    /// Keeps a closed object's key string for the next object.
    pub(super) fn recycle(&mut self, segment: PathSegment) {
        if let PathSegment::Key(mut key) = segment {
            key.clear();
            self.spare_keys.push(key);
        }
    }
}
