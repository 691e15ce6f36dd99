//! The structure: the bytes between tokens, and what becomes of each token.
//!
//! The grammar state ([`Expect`]) says what may come next; the path stack names where the parser
//! is, for the events. This module reads whitespace, `{ } [ ] , :` and a value's first byte
//! (starting a token of the [`lexer`](super::lexer) there), and takes each token the lexer
//! completes: a key names the member, a value goes to [`complete`](PartialJson::complete)
//! ([`super::build`]), a closing bracket ends its container as the parser's
//! [`Mode`](super::Mode) says (its value, or its text).

use serde_json::Value;

use super::super::error::{PartialJsonError, PartialJsonErrorKind};
use super::super::events::{ContainerKind, PathEvent, PathSegment};
use super::super::tree::Frame;
use super::lexer::{Scan, FALSE, NULL, TRUE};
use super::{value_of_text, PartialJson, Step, MOVE_STRING_THRESHOLD, STRING_TRIM};

/// What the structure expects next, between tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    /// The top-level value (only whitespace so far).
    RootValue,
    /// The top-level value is complete: only whitespace may follow.
    AfterRoot,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After `:`: a member value.
    MemberValue,
    /// After `[`: an element or `]`.
    ElementOrEnd,
    /// After `,` in an array: an element.
    Element,
    /// After a member value: `,` or `}`.
    ObjectCommaOrEnd,
    /// After an element: `,` or `]`.
    ArrayCommaOrEnd,
}

impl PartialJson {
    /// Reads the bytes between tokens from `input[*i..]` until a token begins or a container
    /// closes.
    pub(super) fn structural<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        i: &mut usize,
        base: u64,
        on_event: &mut F,
    ) -> Step {
        while *i < input.len() {
            let byte = input[*i];
            let offset = base + *i as u64;
            if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
                *i += 1;
                continue;
            }
            match self.expect {
                Expect::RootValue | Expect::MemberValue | Expect::Element => {
                    *i += 1;
                    return self.begin_value(byte, offset, on_event);
                }
                Expect::ElementOrEnd => {
                    *i += 1;
                    if byte == b']' {
                        return self.close(ContainerKind::Array, offset, (text, base), on_event);
                    }
                    return self.begin_value(byte, offset, on_event);
                }
                Expect::AfterRoot => return Err(PartialJsonError::invalid("trailing characters", offset)),
                Expect::KeyOrEnd | Expect::Key => {
                    *i += 1;
                    match byte {
                        b'"' => {
                            self.in_key = true;
                            self.lex.begin_string();
                            return Ok(());
                        }
                        b'}' if self.expect == Expect::KeyOrEnd => {
                            return self.close(ContainerKind::Object, offset, (text, base), on_event)
                        }
                        _ => return Err(PartialJsonError::invalid("expected object key", offset)),
                    }
                }
                Expect::Colon => {
                    if byte != b':' {
                        return Err(PartialJsonError::invalid("expected ':'", offset));
                    }
                    self.expect = Expect::MemberValue;
                }
                Expect::ObjectCommaOrEnd => match byte {
                    b',' => self.expect = Expect::Key,
                    b'}' => {
                        *i += 1;
                        return self.close(ContainerKind::Object, offset, (text, base), on_event);
                    }
                    _ => return Err(PartialJsonError::invalid("expected ',' or '}'", offset)),
                },
                Expect::ArrayCommaOrEnd => match byte {
                    b',' => self.expect = Expect::Element,
                    b']' => {
                        *i += 1;
                        return self.close(ContainerKind::Array, offset, (text, base), on_event);
                    }
                    _ => return Err(PartialJsonError::invalid("expected ',' or ']'", offset)),
                },
            }
            *i += 1;
        }
        Ok(())
    }

    /// The first byte of a value (already consumed).
    #[inline]
    fn begin_value<F: FnMut(&PathEvent<'_>)>(&mut self, byte: u8, offset: u64, on_event: &mut F) -> Step {
        if let Some(frame) = self.stack.last().filter(|f| !f.is_object()) {
            let index = frame.len();
            if let Some(segment) = self.path.last_mut() {
                *segment = PathSegment::Index(index);
            }
        }
        match byte {
            b'{' => self.open(ContainerKind::Object, offset, on_event),
            b'[' => self.open(ContainerKind::Array, offset, on_event),
            b'"' => {
                self.in_key = false;
                self.reported = 0;
                self.str_start = offset;
                self.str_trimmed = false;
                self.lex.begin_string();
                Ok(())
            }
            b'-' | b'0'..=b'9' => {
                self.lex.begin_number(byte, offset);
                Ok(())
            }
            b't' => {
                self.lex.begin_literal(TRUE);
                Ok(())
            }
            b'f' => {
                self.lex.begin_literal(FALSE);
                Ok(())
            }
            b'n' => {
                self.lex.begin_literal(NULL);
                Ok(())
            }
            _ => Err(PartialJsonError::invalid("expected value", offset)),
        }
    }

    fn open<F: FnMut(&PathEvent<'_>)>(&mut self, kind: ContainerKind, offset: u64, on_event: &mut F) -> Step {
        if self.stack.len() >= self.limits.max_depth {
            return Err(PartialJsonError { kind: PartialJsonErrorKind::DepthLimit, offset });
        }
        on_event(&PathEvent::ContainerStart { path: &self.path, kind });
        if self.mode.skeleton() {
            self.starts.push(offset);
        }
        let tree = self.has_tree();
        if !tree {
            self.stack.push(Frame::Open { kind, len: 0 });
        }
        match kind {
            ContainerKind::Object => {
                if tree {
                    self.stack.push(Frame::Object(serde_json::Map::new()));
                }
                let key = self.spare_keys.pop().unwrap_or_default();
                self.path.push(PathSegment::Key(key));
                self.expect = Expect::KeyOrEnd;
            }
            ContainerKind::Array => {
                if tree {
                    self.stack.push(Frame::Array(Vec::new()));
                }
                self.path.push(PathSegment::Index(0));
                self.expect = Expect::ElementOrEnd;
            }
        }
        Ok(())
    }

    /// The closing bracket at `offset`; `doc`: the input as text (if known) and its offset.
    fn close<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        kind: ContainerKind,
        offset: u64,
        doc: (Option<&str>, u64),
        on_event: &mut F,
    ) -> Step {
        let frame = match self.stack.pop() {
            Some(frame) => frame,
            None => return Err(PartialJsonError::invalid("unbalanced bracket", offset)),
        };
        debug_assert_eq!(frame.is_object(), kind == ContainerKind::Object);
        if let Some(segment) = self.path.pop() {
            self.recycle(segment);
        }
        if self.mode.skeleton() {
            // The container's text, when the input holds it whole.
            let (text, base) = doc;
            let start = self.starts.pop().unwrap_or(0);
            let span = start.checked_sub(base).map(|s| s as usize..(offset + 1 - base) as usize);
            let json = text.zip(span).and_then(|(t, span)| t.get(span)).unwrap_or("");
            self.lex.scan = Scan::Between;
            self.tree_bytes += self.slot_bytes() + Self::container_bytes(kind);
            if matches!(frame, Frame::Open { .. }) {
                self.settle();
            } else {
                self.store(frame.into_value());
                self.check_tree_budget();
            }
            on_event(&PathEvent::ContainerComplete { path: &self.path, kind, json });
            return Ok(());
        }
        self.tree_bytes += Self::container_bytes(kind);
        self.complete(frame.into_value(), on_event);
        Ok(())
    }

    /// A literal the lexer completed.
    #[inline]
    pub(super) fn end_literal<F: FnMut(&PathEvent<'_>)>(&mut self, value: Value, on_event: &mut F) -> Step {
        self.complete(value, on_event);
        Ok(())
    }

    /// The number the lexer completed (in `nbuf`), converted by serde_json.
    pub(super) fn end_number<F: FnMut(&PathEvent<'_>)>(&mut self, on_event: &mut F) -> Step {
        let value = self.lex.number_value()?;
        self.complete(value, on_event);
        Ok(())
    }

    /// The string the lexer completed (its closing quote at `input[end - 1]`): a key names the
    /// member; a value is reported and completed.
    pub(super) fn end_string<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        text: Option<&str>,
        end: usize,
        base: u64,
        on_event: &mut F,
    ) -> Step {
        if self.in_key {
            self.in_key = false;
            self.lex.scan = Scan::Between;
            self.expect = Expect::Colon;
            if let Some(PathSegment::Key(key)) = self.path.last_mut() {
                key.clear();
                key.push_str(&self.lex.sbuf);
            }
            return Ok(());
        }
        self.report_append(on_event);
        if self.str_trimmed {
            // A trimmed string's whole text, quotes included.
            let whole = match (text, self.str_start.checked_sub(base)) {
                (Some(t), Some(start)) => t.get(start as usize..end),
                _ => None,
            };
            self.str_trimmed = false;
            self.reported = 0;
            // Validated as it streamed: the document's text decodes (a lone surrogate as U+FFFD,
            // counted then). Trimming needs the document, so `whole` is there.
            debug_assert!(whole.is_some(), "a trimmed string without its document");
            let value = whole.map_or(Value::Null, value_of_text);
            self.complete(value, on_event);
            return Ok(());
        }
        let text = if !self.has_tree() || self.lex.sbuf.len() >= MOVE_STRING_THRESHOLD {
            std::mem::take(&mut self.lex.sbuf)
        } else {
            self.lex.sbuf.as_str().to_owned()
        };
        self.reported = 0;
        self.complete(Value::String(text), on_event);
        Ok(())
    }

    /// At the end of a push: [`report_append`](Self::report_append), then a skeleton parser fed
    /// the document (`document`) drops a long string's reported text (see [`STRING_TRIM`]).
    pub(super) fn flush_append<F: FnMut(&PathEvent<'_>)>(&mut self, document: bool, on_event: &mut F) {
        self.report_append(on_event);
        if matches!(self.lex.scan, Scan::Str(_))
            && !self.in_key
            && document
            && self.lex.sbuf.len() >= STRING_TRIM
            && !self.has_tree()
        {
            self.lex.sbuf.clear();
            self.reported = 0;
            self.str_trimmed = true;
        }
    }

    /// Reports the text decoded since the last `StringAppend` of the current value string.
    fn report_append<F: FnMut(&PathEvent<'_>)>(&mut self, on_event: &mut F) {
        if matches!(self.lex.scan, Scan::Str(_)) && !self.in_key && self.lex.sbuf.len() > self.reported {
            on_event(&PathEvent::StringAppend { path: &self.path, text: &self.lex.sbuf[self.reported..] });
            self.reported = self.lex.sbuf.len();
        }
    }
}
