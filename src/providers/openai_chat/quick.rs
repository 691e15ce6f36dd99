//! The fast path: a chunk as OpenAI writes it, read from its exact bytes
//! into the same view serde_json gives, or declined.

use std::borrow::Cow;

use super::view::{ChoiceView, ChunkView, ContentView, DeltaView, FunctionView, Lenient, LenientList, ToolCallView};
use crate::json::scan::{escape_char, json_plain_prefix};
use crate::providers::view::{Few, JsonStr, JsonText, Str};

/// A chunk as OpenAI writes it (compact, members of plain strings, small
/// numbers or `null`, one choice with a delta of `role` / `content` /
/// `refusal` / `reasoning_content` / one tool-call fragment), read without
/// serde_json, giving exactly the view serde_json would give. Anything else
/// (whitespace, escaped keys, other members or shapes) is `None` and goes
/// through serde_json.
///
/// `known` is the last applied [`ChunkView::top_text`]: a chunk that starts
/// with those exact bytes (every chunk of a stream, as providers send them)
/// is read from its `choices` on; its members before `choices` are not
/// parsed again, and are left out of `top` (they were applied with that
/// prefix). A member after `choices` then restarts the read from the start,
/// so that `top` holds every member whenever `top_text` is empty.
pub(super) fn quick_chunk<'a>(data: &'a str, known: &str, chunk: &mut ChunkView<'a>) -> Option<()> {
    let skip = !known.is_empty() && data.len() > known.len() && data.as_bytes().starts_with(known.as_bytes());
    let mut q = Quick { s: data, at: 0 };
    if skip {
        q.at = known.len();
    } else {
        q.eat(b'{')?;
    }
    let mut after_choices = false;
    loop {
        let at = q.at;
        let key = q.key()?;
        match key {
            "choices" => {
                if !after_choices {
                    chunk.top_text = &data[..at];
                    after_choices = true;
                }
                q.eat(b'[')?;
                if q.peek()? == b']' {
                    q.at += 1;
                    chunk.choices = LenientList::Ok(Few::from_iter_opt(None));
                } else {
                    chunk.choices = LenientList::Ok(Few::from_iter_opt(Some(Lenient::Ok(ChoiceView::default()))));
                    let LenientList::Ok(few) = &mut chunk.choices else { return None };
                    let Some(Lenient::Ok(c)) = few.first_mut() else { return None };
                    q.choice(c)?;
                    q.eat(b']')?;
                }
            }
            "usage" => {
                q.null()?;
                chunk.usage_member = true;
            }
            "error" => q.null()?,
            "obfuscation" => {
                q.string()?;
            }
            _ if skip => {
                *chunk = ChunkView::default();
                return quick_chunk(data, "", chunk);
            }
            _ => {
                let v = q.scalar()?;
                if key == "object" {
                    chunk.object = Some(v);
                }
                chunk.top.push(Str(Cow::Borrowed(key)), v);
                if after_choices {
                    // A member after `choices`: the prefix does not hold them all.
                    chunk.top_text = "";
                }
            }
        }
        if q.next_member()? {
            continue;
        }
        return (q.at == data.len()).then_some(());
    }
}

/// The cursor of [`quick_chunk`].
pub(super) struct Quick<'a> {
    pub(super) s: &'a str,
    pub(super) at: usize,
}

impl<'a> Quick<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// `,` (another member follows: true) or `}` (false).
    fn next_member(&mut self) -> Option<bool> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b',' => Some(true),
            b'}' => Some(false),
            _ => None,
        }
    }

    /// A string without escapes or control characters: its text (a byte
    /// loop: keys and names are short).
    fn plain(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        if b.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let i = start + json_plain_prefix(b.get(start..)?);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        self.at = i + 1;
        self.s.get(start..i)
    }

    /// `"key":`.
    fn key(&mut self) -> Option<&'a str> {
        let k = self.plain()?;
        self.eat(b':')?;
        Some(k)
    }

    /// A string, decoded lazily: escapes checked as serde_json checks them
    /// (a `\\u` escape naming no character is refused by
    /// [`JsonStr::from_raw`]).
    fn string(&mut self) -> Option<JsonStr<'a>> {
        if let Some(text) = self.plain() {
            return Some(JsonStr::plain(text));
        }
        let b = self.s.as_bytes();
        if b.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut i = self.at + 1;
        loop {
            i += json_plain_prefix(b.get(i..)?);
            match *b.get(i)? {
                b'"' => break,
                b'\\' => match *b.get(i + 1)? {
                    b'u' => {
                        if !b.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 6;
                    }
                    e => {
                        escape_char(e)?;
                        i += 2;
                    }
                },
                _ => return None,
            }
        }
        let v = JsonStr::from_raw(self.s.get(self.at..=i)?)?;
        self.at = i + 1;
        Some(v)
    }

    /// A string or `null`.
    fn opt_string(&mut self) -> Option<Option<JsonStr<'a>>> {
        if self.peek()? == b'n' {
            self.null()?;
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A plain string or `null`, as [`Str`].
    fn opt_plain(&mut self) -> Option<Option<Str<'a>>> {
        if self.peek()? == b'n' {
            self.null()?;
            return Some(None);
        }
        self.plain().map(|t| Some(Str(Cow::Borrowed(t))))
    }

    fn null(&mut self) -> Option<()> {
        let rest = self.s.get(self.at..)?;
        rest.starts_with("null").then(|| self.at += 4)
    }

    /// An unsigned integer of at most `max` digits as serde_json reads it
    /// (no leading zero, no fraction or exponent): its text.
    fn digits(&mut self, max: usize) -> Option<&'a str> {
        let b = self.s.as_bytes().get(self.at..)?;
        let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > max || (n > 1 && b[0] == b'0') || matches!(b.get(n), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let text = &self.s[self.at..self.at + n];
        self.at += n;
        Some(text)
    }

    /// A `u32` of at most 9 digits.
    fn small(&mut self) -> Option<u32> {
        self.digits(9)?.parse().ok()
    }

    /// A string, a small unsigned integer or `null`: its raw text.
    fn scalar(&mut self) -> Option<&'a str> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'n' => self.null()?,
            _ => {
                self.digits(18)?;
            }
        }
        Some(&self.s[start..self.at])
    }

    fn choice(&mut self, c: &mut ChoiceView<'a>) -> Option<()> {
        self.eat(b'{')?;
        loop {
            match self.key()? {
                "index" => c.index = self.small()?,
                "delta" => {
                    c.delta = Lenient::Ok(DeltaView::default());
                    let Lenient::Ok(d) = &mut c.delta else { return None };
                    self.delta(d)?;
                }
                "logprobs" => self.null()?,
                "finish_reason" => c.finish_reason = self.opt_plain()?,
                _ => return None,
            }
            if !self.next_member()? {
                return Some(());
            }
        }
    }

    fn delta(&mut self, d: &mut DeltaView<'a>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            match self.key()? {
                "role" => d.role = self.opt_plain()?,
                "content" => d.content = self.opt_string()?.map(ContentView::Text),
                "refusal" => d.refusal = self.opt_string()?,
                "reasoning_content" => d.reasoning_content = self.opt_string()?,
                "tool_calls" => {
                    self.eat(b'[')?;
                    d.tool_calls = LenientList::Ok(Few::from_iter_opt(Some(Lenient::Ok(ToolCallView::default()))));
                    let LenientList::Ok(few) = &mut d.tool_calls else { return None };
                    let Some(Lenient::Ok(tc)) = few.first_mut() else { return None };
                    self.tool_call(tc)?;
                    self.eat(b']')?;
                }
                _ => return None,
            }
            if !self.next_member()? {
                return Some(());
            }
        }
    }

    fn tool_call(&mut self, tc: &mut ToolCallView<'a>) -> Option<()> {
        self.eat(b'{')?;
        loop {
            match self.key()? {
                "index" => tc.index = Some(self.small()?),
                "id" => tc.id = self.opt_plain()?,
                "type" => tc.ty = self.opt_plain()?,
                "function" => {
                    let mut f = FunctionView::default();
                    self.eat(b'{')?;
                    loop {
                        match self.key()? {
                            "name" => f.name = self.opt_plain()?,
                            "arguments" => f.arguments = self.opt_string()?.map(JsonText::Str),
                            _ => return None,
                        }
                        if !self.next_member()? {
                            break;
                        }
                    }
                    tc.function = Lenient::Ok(f);
                }
                _ => return None,
            }
            if !self.next_member()? {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::openai_chat::view::Members;

    fn quick_view(doc: &str) -> Option<ChunkView<'_>> {
        let mut c = ChunkView::default();
        quick_chunk(doc, "", &mut c).map(|()| c)
    }

    fn serde_view(doc: &str) -> Option<ChunkView<'_>> {
        match serde_json::from_str::<Lenient<ChunkView<'_>>>(doc) {
            Ok(Lenient::Ok(c)) => Some(c),
            _ => None,
        }
    }

    /// The fast path gives exactly serde_json's view, or declines.
    #[test]
    fn quick_chunk_is_serde_json_or_nothing() {
        let strings = crate::providers::view::TRICKY_JSON_STRINGS;
        let numbers = ["0", "7", "01", "-1", "1e2", "1700000000", "4294967296", "1.0", "null"];
        let mut docs = Vec::new();
        let top = |n: &str| {
            format!(
                r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":{n},"model":"m","system_fingerprint":"fp","choices":["#
            )
        };
        for v in strings {
            for n in numbers {
                for delta in [
                    format!(r#"{{"content":{v}}}"#),
                    format!(r#"{{"role":"assistant","content":{v},"refusal":null}}"#),
                    format!(r#"{{"reasoning_content":{v}}}"#),
                    format!(r#"{{"tool_calls":[{{"index":{n},"function":{{"arguments":{v}}}}}]}}"#),
                    format!(
                        r#"{{"tool_calls":[{{"index":0,"id":{v},"type":"function","function":{{"name":{v},"arguments":""}}}}]}}"#
                    ),
                    "{}".to_owned(),
                ] {
                    let choice = format!(r#"{{"index":{n},"delta":{delta},"logprobs":null,"finish_reason":null}}"#);
                    docs.push(format!(r#"{}{choice}],"usage":null}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}],"usage":null}} "#, top(n)));
                    docs.push(format!(r#"{}{choice}],"obfuscation":{v}}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}, {choice}]}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}]}}x"#, top(n)));
                    docs.push(format!(r#"{} {choice}]}}"#, top(n)));
                    docs.push(format!(r#"{}]}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}],"usage":{{"total_tokens":1}}}}"#, top(n)));
                    docs.push(format!(
                        r#"{}{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{v}}}]}}"#,
                        top("1")
                    ));
                }
            }
        }
        let mut quick = 0;
        let mut known = String::new();
        let mut skipped = 0;
        for doc in &docs {
            // Read again with the prefix of the last chunk read as known:
            // the same view, without the members of a matching prefix.
            let mut again = ChunkView::default();
            let read = quick_chunk(doc, &known, &mut again);
            assert_eq!(read.is_some(), quick_view(doc).is_some(), "{doc}");
            if let Some(mut full) = quick_view(doc) {
                if !known.is_empty() && doc.starts_with(&known) && !again.top_text.is_empty() {
                    assert_eq!(again.top_text, known);
                    skipped += 1;
                    full.top = Members::default();
                    full.object = None;
                }
                assert_eq!(again, full, "{doc} after {known}");
                known = full.top_text.to_owned();
            }
            if let Some(mut q) = quick_view(doc) {
                quick += 1;
                assert!(q.top_text.is_empty() || doc.starts_with(q.top_text));
                q.top_text = "";
                assert_eq!(Some(q), serde_view(doc), "{doc}");
            }
        }
        assert!(quick > docs.len() / 10, "{quick} of {}", docs.len());
        assert!(skipped > quick / 4, "{skipped} of {quick}");
    }

    #[test]
    fn the_corpus_takes_the_fast_path() {
        let corpus = ssefold_corpus::openai_chat_parallel_tools(200_000);
        let text = std::str::from_utf8(&corpus).unwrap();
        let payloads: Vec<&str> =
            text.lines().filter_map(|l| l.strip_prefix("data: ")).filter(|p| *p != "[DONE]").collect();
        let quick = payloads.iter().filter(|p| quick_view(p).is_some()).count();
        assert!(quick * 10 >= payloads.len() * 9, "{quick} of {}", payloads.len());
        for p in payloads {
            if let Some(mut q) = quick_view(p) {
                assert!(!q.top_text.is_empty());
                q.top_text = "";
                assert_eq!(Some(q), serde_view(p), "{p}");
            }
        }
    }
}
