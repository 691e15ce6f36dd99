//! The fast path: a chunk as OpenAI writes it, read from its exact bytes
//! (with the [fast-path toolkit](crate::providers::fastpath)) into the same
//! view serde_json gives, or declined.

use std::borrow::Cow;

use super::view::{ChoiceView, ChunkView, ContentView, DeltaView, FunctionView, Lenient, LenientList, ToolCallView};
use crate::providers::fastpath::Cursor;
use crate::providers::view::{Few, JsonText, Str};

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
    let mut q = Cursor::new(data);
    if skip {
        q = Cursor::at(data, known.len());
    } else {
        q.eat(b'{')?;
    }
    let mut after_choices = false;
    loop {
        let at = q.pos();
        let key = q.key()?;
        match key {
            "choices" => {
                if !after_choices {
                    chunk.top_text = &data[..at];
                    after_choices = true;
                }
                q.eat(b'[')?;
                if q.eat(b']').is_some() {
                    chunk.choices = LenientList::Ok(Few::from_iter_opt(None));
                } else {
                    chunk.choices = LenientList::Ok(Few::from_iter_opt(Some(Lenient::Ok(ChoiceView::default()))));
                    let LenientList::Ok(few) = &mut chunk.choices else { return None };
                    let Some(Lenient::Ok(c)) = few.first_mut() else { return None };
                    choice(&mut q, c)?;
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
        return q.end();
    }
}

/// A plain string or `null`, as [`Str`].
#[inline]
fn opt_str<'a>(q: &mut Cursor<'a>) -> Option<Option<Str<'a>>> {
    Some(q.opt_plain()?.map(|t| Str(Cow::Borrowed(t))))
}

/// A choice: `index`, `delta`, `logprobs: null`, `finish_reason`.
fn choice<'a>(q: &mut Cursor<'a>, c: &mut ChoiceView<'a>) -> Option<()> {
    q.object(|key, q| {
        match key {
            "index" => c.index = q.small()?,
            "delta" => {
                c.delta = Lenient::Ok(DeltaView::default());
                let Lenient::Ok(d) = &mut c.delta else { return None };
                delta(q, d)?;
            }
            "logprobs" => q.null()?,
            "finish_reason" => c.finish_reason = opt_str(q)?,
            _ => return None,
        }
        Some(())
    })
}

/// A delta: `role`, string `content`, `refusal`, `reasoning_content`, one
/// tool-call fragment.
fn delta<'a>(q: &mut Cursor<'a>, d: &mut DeltaView<'a>) -> Option<()> {
    q.object(|key, q| {
        match key {
            "role" => d.role = opt_str(q)?,
            "content" => d.content = q.opt_string()?.map(ContentView::Text),
            "refusal" => d.refusal = q.opt_string()?,
            "reasoning_content" => d.reasoning_content = q.opt_string()?,
            "tool_calls" => {
                q.eat(b'[')?;
                d.tool_calls = LenientList::Ok(Few::from_iter_opt(Some(Lenient::Ok(ToolCallView::default()))));
                let LenientList::Ok(few) = &mut d.tool_calls else { return None };
                let Some(Lenient::Ok(tc)) = few.first_mut() else { return None };
                tool_call(q, tc)?;
                q.eat(b']')?;
            }
            _ => return None,
        }
        Some(())
    })
}

/// A tool-call fragment: `index`, `id`, `type`, `function` (`name`,
/// string `arguments`).
fn tool_call<'a>(q: &mut Cursor<'a>, tc: &mut ToolCallView<'a>) -> Option<()> {
    q.object(|key, q| {
        match key {
            "index" => tc.index = Some(q.small()?),
            "id" => tc.id = opt_str(q)?,
            "type" => tc.ty = opt_str(q)?,
            "function" => {
                let mut f = FunctionView::default();
                q.object(|key, q| {
                    match key {
                        "name" => f.name = opt_str(q)?,
                        "arguments" => f.arguments = q.opt_string()?.map(JsonText::Str),
                        _ => return None,
                    }
                    Some(())
                })?;
                tc.function = Lenient::Ok(f);
            }
            _ => return None,
        }
        Some(())
    })
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
                    r#"{"tool_calls":[{}]}"#.to_owned(),
                    r#"{"tool_calls":[{"index":0,"function":{}}]}"#.to_owned(),
                ] {
                    let choice = format!(r#"{{"index":{n},"delta":{delta},"logprobs":null,"finish_reason":null}}"#);
                    docs.push(format!(r#"{}{choice}],"usage":null}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}],"usage":null}} "#, top(n)));
                    docs.push(format!(r#"{}{choice}],"obfuscation":{v}}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}, {choice}]}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}]}}x"#, top(n)));
                    docs.push(format!(r#"{} {choice}]}}"#, top(n)));
                    docs.push(format!(r#"{}]}}"#, top(n)));
                    docs.push(format!(r#"{}{{}}]}}"#, top(n)));
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
