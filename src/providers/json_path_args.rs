//! Vertex AI's streamed function-call arguments (`functionCall.partialArgs`:
//! `{jsonPath, stringValue | numberValue | boolValue | nullValue,
//! willContinue}`) turned back into the JSON text of the arguments object,
//! in order, so that they go through the one arguments path of every
//! dialect (`tool_args_delta`, `tool_args_path`, ready when complete).
//!
//! [`ArgsWriter`] keeps the stack of containers open in the text. Each
//! argument at path `P` closes the containers that are not on `P`, opens
//! those down to `P`'s parent (an object for a key, an array for an index),
//! and writes the value; a string with `willContinue: true` stays open and
//! the next argument at the same path appends to it. Paths are RFC 9535
//! normalized paths from `$`: `.name`, `['name']` / `["name"]`, `[n]`.
//!
//! A path the text cannot take in order — malformed, the root itself, a
//! container already closed, an array index other than the next one, a
//! member or index where a value of another kind is, a key already written
//! — is a [`PathError`]: the argument is skipped, the text stays valid.

use serde_json::Value;

use super::raw::member;

/// One segment of an argument's path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(u64),
}

/// Why an argument could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathError(pub(crate) String);

/// One open container of the text: the segment it sits at (none for the
/// root object), whether it is an array, and what it holds so far.
#[derive(Debug)]
struct Open {
    at: Option<Seg>,
    array: bool,
    /// Members written (objects: their keys, a set: checking a new key is
    /// O(1) however many there are; arrays: their count).
    keys: std::collections::HashSet<String>,
    len: u64,
}

/// Rebuilds the arguments' JSON text from streamed partial arguments.
#[derive(Debug, Default)]
pub(crate) struct ArgsWriter {
    stack: Vec<Open>,
    /// The path of the string left open by `willContinue: true`.
    open_string: Option<Vec<Seg>>,
    started: bool,
}

impl ArgsWriter {
    /// Heap bytes held (keys of open objects).
    pub(crate) fn footprint(&self) -> usize {
        self.stack
            .iter()
            .map(|o| {
                o.keys.iter().map(String::capacity).sum::<usize>()
                    + o.keys.capacity() * core::mem::size_of::<String>()
                    + 32
            })
            .sum()
    }

    /// The text for one partial argument (appended to `out`), or why it was
    /// skipped.
    pub(crate) fn push(&mut self, arg: &Value, out: &mut String) -> Result<(), PathError> {
        let path_text = get(arg, "jsonPath").and_then(Value::as_str).ok_or_else(|| PathError("no jsonPath".into()))?;
        let path = parse_path(path_text)?;
        let Some((last, parent)) = path.split_last() else {
            return Err(PathError(format!("{path_text:?}: the root is not an argument")));
        };
        let will_continue = get(arg, "willContinue").and_then(Value::as_bool) == Some(true);
        let value = value_of(arg).ok_or_else(|| PathError(format!("{path_text:?}: no value")))?;
        if self.open_string.as_deref() == Some(&path[..]) {
            let Value::String(s) = value else {
                return Err(PathError(format!("{path_text:?}: a string continues with a non-string")));
            };
            push_string_body(out, s);
            if !will_continue {
                out.push('"');
                self.open_string = None;
            }
            return Ok(());
        }
        // Check before writing anything.
        let common = self.common_prefix(parent);
        self.check(path_text, parent, common, last)?;
        self.close_string(out);
        if !self.started {
            out.push('{');
            self.started = true;
            self.stack.push(Open { at: None, array: false, keys: Default::default(), len: 0 });
        }
        while self.stack.len() > common + 1 {
            let o = self.stack.pop().expect("non-empty");
            out.push(if o.array { ']' } else { '}' });
        }
        for (i, seg) in parent.iter().enumerate().skip(common) {
            self.member(seg, out);
            let array = matches!(path.get(i + 1), Some(Seg::Index(_)));
            out.push(if array { '[' } else { '{' });
            self.stack.push(Open { at: Some(seg.clone()), array, keys: Default::default(), len: 0 });
        }
        self.member(last, out);
        match value {
            Value::String(s) => {
                out.push('"');
                push_string_body(out, s);
                if will_continue {
                    self.open_string = Some(path);
                } else {
                    out.push('"');
                }
            }
            other => out.push_str(&other.to_string()),
        }
        Ok(())
    }

    /// Closes everything open: the text is then one complete object (`{}`
    /// when no argument came).
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.close_string(out);
        if !self.started {
            out.push_str("{}");
            self.started = true;
            return;
        }
        while let Some(o) = self.stack.pop() {
            out.push(if o.array { ']' } else { '}' });
        }
    }

    fn close_string(&mut self, out: &mut String) {
        if self.open_string.take().is_some() {
            out.push('"');
        }
    }

    /// How many segments of `parent` are containers still open (the root
    /// object not counted).
    fn common_prefix(&self, parent: &[Seg]) -> usize {
        self.stack.iter().skip(1).zip(parent).take_while(|(o, s)| o.at.as_ref() == Some(*s)).count()
    }

    /// Whether the argument at `parent` + `last` can be written in order.
    fn check(&self, path: &str, parent: &[Seg], common: usize, last: &Seg) -> Result<(), PathError> {
        let bad = |why: &str| Err(PathError(format!("{path:?}: {why}")));
        // The container that receives the first new segment.
        let new = parent.get(common).unwrap_or(last);
        let holder = self.stack.get(common);
        let (is_array, keys, len) = match holder {
            Some(o) => (o.array, Some(&o.keys), o.len),
            None if common == 0 => (false, None, 0),
            None => return bad("inside a container already closed"),
        };
        match new {
            Seg::Key(k) if is_array => return bad(&format!("member {k:?} of an array")),
            Seg::Key(k) if keys.is_some_and(|keys| keys.contains(k)) => {
                return bad(&format!("member {k:?} already written"))
            }
            Seg::Index(_) if common == 0 => return bad("the arguments are an object, not an array"),
            Seg::Index(_) if !is_array => return bad("index of an object"),
            Seg::Index(i) if *i != len => return bad(&format!("index {i} where {len} is next")),
            _ => {}
        }
        // Below it every container is new: an array starts at index 0.
        let below = parent.iter().skip(common + 1).chain((common < parent.len()).then_some(last));
        match below.into_iter().find(|s| matches!(s, Seg::Index(i) if *i != 0)) {
            Some(Seg::Index(i)) => bad(&format!("index {i} of a new array")),
            _ => Ok(()),
        }
    }

    /// Writes the separator and key of a new member of the innermost open
    /// container.
    fn member(&mut self, seg: &Seg, out: &mut String) {
        let o = self.stack.last_mut().expect("the root is open");
        let first = if o.array { o.len == 0 } else { o.keys.is_empty() };
        if !first {
            out.push(',');
        }
        match seg {
            Seg::Key(k) => {
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                o.keys.insert(k.clone());
            }
            Seg::Index(_) => o.len += 1,
        }
    }
}

/// `arg[key]` of an object argument, found by a scan ([`member`]): no key
/// hashed.
fn get<'v>(arg: &'v Value, key: &str) -> Option<&'v Value> {
    arg.as_object().and_then(|m| member(m, key))
}

/// The value of a partial argument, whichever of its members holds it.
fn value_of(arg: &Value) -> Option<&Value> {
    if let Some(v) = get(arg, "stringValue").filter(|v| v.is_string()) {
        return Some(v);
    }
    if let Some(v) = get(arg, "numberValue").filter(|v| v.is_number()) {
        return Some(v);
    }
    if let Some(v) = get(arg, "boolValue").filter(|v| v.is_boolean()) {
        return Some(v);
    }
    get(arg, "nullValue").map(|_| &Value::Null)
}

/// Appends `s` JSON-escaped, without quotes.
fn push_string_body(out: &mut String, s: &str) {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    out.push_str(&quoted[1..quoted.len() - 1]);
}

/// Parses `$`, then `.name`, `['name']`, `["name"]`, `[n]` segments.
fn parse_path(p: &str) -> Result<Vec<Seg>, PathError> {
    let bad = |why: &str| PathError(format!("{p:?}: {why}"));
    let mut rest = p.strip_prefix('$').ok_or_else(|| bad("does not start with $"))?;
    let mut segs = Vec::new();
    while let Some(c) = rest.chars().next() {
        match c {
            '.' => {
                let end = rest[1..].find(['.', '[']).map_or(rest.len(), |e| e + 1);
                let name = &rest[1..end];
                if name.is_empty() {
                    return Err(bad("empty member name"));
                }
                segs.push(Seg::Key(name.to_owned()));
                rest = &rest[end..];
            }
            '[' => {
                let inner = &rest[1..];
                if let Some(q @ ('\'' | '"')) = inner.chars().next() {
                    let mut name = String::new();
                    let mut chars = inner[1..].char_indices();
                    let mut end = None;
                    while let Some((i, ch)) = chars.next() {
                        match ch {
                            '\\' => match chars.next() {
                                Some((_, e)) => name.push(e),
                                None => break,
                            },
                            ch if ch == q => {
                                end = Some(i + 1);
                                break;
                            }
                            ch => name.push(ch),
                        }
                    }
                    let end = end.ok_or_else(|| bad("unterminated quoted name"))?;
                    let after = &inner[end + 1..];
                    rest = after.strip_prefix(']').ok_or_else(|| bad("quoted name not followed by ]"))?;
                    segs.push(Seg::Key(name));
                } else {
                    let close = inner.find(']').ok_or_else(|| bad("unclosed ["))?;
                    let index = inner[..close].parse::<u64>().map_err(|_| bad("index that is not a number"))?;
                    segs.push(Seg::Index(index));
                    rest = &inner[close + 1..];
                }
            }
            _ => return Err(bad("unexpected character")),
        }
    }
    Ok(segs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(args: &[Value]) -> (String, Vec<String>) {
        let mut w = ArgsWriter::default();
        let mut out = String::new();
        let mut errors = Vec::new();
        for a in args {
            if let Err(e) = w.push(a, &mut out) {
                errors.push(e.0);
            }
        }
        w.finish(&mut out);
        (out, errors)
    }

    #[test]
    fn nested_paths_rebuild_the_object_in_order() {
        let (text, errors) = write(&[
            json!({"jsonPath": "$.recipe.ingredients[0].amount", "stringValue": "16 ", "willContinue": true}),
            json!({"jsonPath": "$.recipe.ingredients[0].amount", "stringValue": "oz"}),
            json!({"jsonPath": "$.recipe.ingredients[0].name", "stringValue": "a \"b\""}),
            json!({"jsonPath": "$.recipe.ingredients[1].price", "numberValue": 0.5}),
            json!({"jsonPath": "$.recipe.name", "stringValue": "L", "willContinue": true}),
            json!({"jsonPath": "$['odd key'].x", "boolValue": true}),
            json!({"jsonPath": "$.n", "nullValue": "NULL_VALUE"}),
        ]);
        assert!(errors.is_empty(), "{errors:?}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            json!({"recipe": {"ingredients": [{"amount": "16 oz", "name": "a \"b\""}, {"price": 0.5}], "name": "L"},
                "odd key": {"x": true}, "n": null})
        );
    }

    #[test]
    fn no_argument_is_an_empty_object() {
        assert_eq!(write(&[]).0, "{}");
    }

    #[test]
    fn out_of_order_or_malformed_paths_are_skipped_and_the_text_stays_valid() {
        let (text, errors) = write(&[
            json!({"jsonPath": "$.a.x", "numberValue": 1}),
            json!({"jsonPath": "$.b", "numberValue": 2}),
            json!({"jsonPath": "$.a.y", "numberValue": 3}),
            json!({"jsonPath": "$.b", "numberValue": 4}),
            json!({"jsonPath": "$.c[1]", "numberValue": 5}),
            json!({"jsonPath": "a.b", "numberValue": 6}),
            json!({"jsonPath": "$", "numberValue": 7}),
            json!({"jsonPath": "$[0]", "numberValue": 8}),
            json!({"jsonPath": "$.d[x]", "numberValue": 9}),
            json!({"jsonPath": "$.e"}),
            json!({"stringValue": "x"}),
            json!({"jsonPath": "$.b.z", "numberValue": 10}),
        ]);
        assert_eq!(errors.len(), 10, "{errors:?}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), json!({"a": {"x": 1}, "b": 2}));
    }

    #[test]
    fn path_syntax() {
        assert_eq!(
            parse_path(r#"$.a["b\"c"][12]['d']"#).unwrap(),
            [Seg::Key("a".into()), Seg::Key("b\"c".into()), Seg::Index(12), Seg::Key("d".into())]
        );
        for bad in ["", "$.", "$[", "$['a'", "$[1", "$x", "$['a'x]"] {
            assert!(parse_path(bad).is_err(), "{bad}");
        }
    }
}
