//! The members of an event the hot path reads (its head): from the exact
//! bytes when written compactly, by serde_json otherwise.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::items::{delta_item_type, Item};
use crate::providers::fastpath::{is_object, Cursor, Seen};
use crate::providers::raw::{quick_allowed, quick_taken};
use crate::providers::view::JsonStr;

/// The members of an event the hot path reads, borrowed and unchecked: a
/// member of the wrong type never fails the whole event (see [`Head`]).
#[derive(Deserialize)]
struct RawHead<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<&'a RawValue>,
    #[serde(default, borrow)]
    output_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    content_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    summary_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    command_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    delta: Option<&'a RawValue>,
    #[serde(default, borrow)]
    sequence_number: Option<&'a RawValue>,
}

// The head's members, one bit each: in [`Head::bad`] and [`members_used`].
pub(super) const OUTPUT_INDEX: u8 = 1;
pub(super) const CONTENT_INDEX: u8 = 2;
pub(super) const SUMMARY_INDEX: u8 = 4;
pub(super) const DELTA: u8 = 8;
pub(super) const SEQUENCE_NUMBER: u8 = 16;
pub(super) const TYPE: u8 = 32;
pub(super) const COMMAND_INDEX: u8 = 64;

/// The checked members: `None` when absent (or `null`) or of the wrong type;
/// `bad` says which were of the wrong type.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Head<'a> {
    pub(super) ty: Cow<'a, str>,
    pub(super) output_index: Option<u64>,
    pub(super) content_index: Option<u64>,
    pub(super) summary_index: Option<u64>,
    pub(super) command_index: Option<u64>,
    pub(super) delta: Option<JsonStr<'a>>,
    /// Any size: digits beyond `u128` saturate.
    pub(super) sequence_number: Option<u128>,
    pub(super) bad: u8,
}

impl<'a> Head<'a> {
    /// The head of an event: read against the shape of the event before
    /// ([`Shape`]) or from its exact bytes when written compactly
    /// ([`quick_shaped`](Self::quick_shaped)), else by serde_json; `None` when
    /// the data is not a JSON object, or names a member of the head twice.
    pub(super) fn parse(data: &'a str, shape: &mut Shape) -> Option<Self> {
        if quick_allowed() {
            if let Some(h) = shape.read(data).or_else(|| Self::quick_shaped(data, shape)) {
                quick_taken();
                return Some(h);
            }
        }
        Self::slow(data)
    }

    /// The fast path: a compact object whose head members are plain
    /// strings, unsigned integers of at most 18 digits or `null`, and whose
    /// other members are scalars or empty (`"logprobs":[]`), read with the
    /// [fast-path toolkit](crate::providers::fastpath); the same head serde_json gives
    /// ([`slow`](Self::slow)), or `None` (anything else, a member of the
    /// wrong type included: the slow path names it). The event's shape is
    /// kept in `shape` (when it has one: see [`Shape`]) for the next events.
    pub(super) fn quick_shaped(data: &'a str, shape: &mut Shape) -> Option<Self> {
        shape.clear();
        let record = data.len() <= MAX_SHAPE_BYTES;
        let mut h = Head::default();
        let mut seen = Seen::default();
        let mut c = Cursor::new(data);
        c.object(|key, c| {
            let start = c.pos();
            let bit = head_bit(key);
            match bit {
                Some(bit) => h.read(bit, c, &mut seen)?,
                None => drop(c.skip()?),
            }
            if record {
                shape.note(data, key, bit, start..c.pos());
            }
            Some(())
        })?;
        c.end()?;
        if record && shape.usable {
            shape.keep(data, &h);
        }
        Some(h)
    }

    /// [`quick_shaped`](Self::quick_shaped) with no shape kept.
    #[cfg(test)]
    pub(super) fn quick(data: &'a str) -> Option<Self> {
        Self::quick_shaped(data, &mut Shape::default())
    }

    /// Reads head member `bit`'s value (or `null`) from the cursor, as
    /// [`quick_shaped`](Self::quick_shaped) does: `None` when the member came before, or
    /// is not of its type as written compactly.
    #[inline(always)]
    fn read(&mut self, bit: u8, c: &mut Cursor<'a>, seen: &mut Seen) -> Option<()> {
        seen.first(u32::from(bit))?;
        if c.is_null()? {
            return Some(());
        }
        match bit {
            TYPE => self.ty = Cow::Borrowed(c.plain()?),
            OUTPUT_INDEX => self.output_index = Some(c.uint()?),
            CONTENT_INDEX => self.content_index = Some(c.uint()?),
            SUMMARY_INDEX => self.summary_index = Some(c.uint()?),
            COMMAND_INDEX => self.command_index = Some(c.uint()?),
            DELTA => self.delta = Some(c.string()?),
            _ => self.sequence_number = Some(u128::from(c.uint()?)),
        }
        Some(())
    }

    /// An event the fold parses whole (`whole(type)`, the type its first
    /// member, as providers write it): its head as
    /// [`quick_shaped`](Self::quick_shaped) reads it and the event's `Value` (what `serde_json` gives for the
    /// whole data), in one pass: every member other than the head's is
    /// parsed by serde_json where it is, not stepped over first. What the
    /// fold already holds as text for an event of that type (`known(type)`,
    /// see [`Known`]) is not parsed again: it is left out of the value, and
    /// [`Whole`] says where. `None` (the caller reads the head and parses
    /// as for any event) for any other type, or anything `quick_shaped` declines,
    /// or a member serde_json refuses (a lone surrogate escape: the lenient
    /// parse then warns), or `response` named twice, or a member named
    /// twice in a `response` read member by member.
    pub(super) fn quick_whole<'k>(
        data: &'a str,
        whole: impl Fn(&str) -> bool,
        known: impl FnOnce(&str) -> Known<'k>,
    ) -> Option<Whole<'a>> {
        let mut probe = Cursor::new(data);
        probe.eat(b'{')?;
        if probe.key()? != "type" {
            return None;
        }
        let ty = probe.plain()?;
        if !whole(ty) {
            return None;
        }
        let known = known(ty);
        let mut h = Head::default();
        let mut seen = Seen::default();
        let mut members = Map::new();
        let mut out = Whole::default();
        let mut c = Cursor::new(data);
        c.object(|key, c| {
            let start = c.pos();
            let Some(bit) = head_bit(key) else {
                let (value, end) = match key {
                    "response" => {
                        if out.read.response.is_some() {
                            return None;
                        }
                        if let Some(end) = repeats(data, start, known.repeat) {
                            *c = Cursor::at(data, end);
                            out.read.response = Some(start..end);
                            out.read.response_known = true;
                            return Some(());
                        }
                        let read = match known.record || !known.members.is_empty() || !known.items.is_empty() {
                            true => read_response(data, start, &known, &mut out.read)?,
                            false => value_at(data, start)?,
                        };
                        out.read.response = Some(start..read.1);
                        read
                    }
                    "item" => {
                        let read = value_at(data, start)?;
                        out.read.item = Some(start..read.1);
                        read
                    }
                    _ => value_at(data, start)?,
                };
                *c = Cursor::at(data, end);
                members.insert(key.to_owned(), value);
                return Some(());
            };
            h.read(bit, c, &mut seen)?;
            // The head member's value, from the text just read.
            members.insert(key.to_owned(), serde_json::from_str(&data[start..c.pos()]).ok()?);
            Some(())
        })?;
        c.end()?;
        out.head = h;
        out.read.value = Some(Value::Object(members));
        Some(out)
    }

    /// The slow path: any JSON object, by serde_json; a head member of the
    /// wrong type is `None` and flagged in `bad`.
    pub(super) fn slow(data: &'a str) -> Option<Self> {
        // (A derived struct would also take an array, by position.)
        if !is_object(data.as_bytes()) {
            return None;
        }
        let raw: RawHead<'a> = serde_json::from_str(data).ok()?;
        let mut h = Head::default();
        let index = |r: Option<&RawValue>, bit: u8, bad: &mut u8| {
            let r = r?;
            let n = r.get().parse::<u64>().ok();
            if n.is_none() {
                *bad |= bit;
            }
            n
        };
        h.output_index = index(raw.output_index, OUTPUT_INDEX, &mut h.bad);
        h.content_index = index(raw.content_index, CONTENT_INDEX, &mut h.bad);
        h.summary_index = index(raw.summary_index, SUMMARY_INDEX, &mut h.bad);
        h.command_index = index(raw.command_index, COMMAND_INDEX, &mut h.bad);
        if let Some(r) = raw.delta {
            h.delta = JsonStr::from_raw(r.get());
            if h.delta.is_none() {
                h.bad |= DELTA;
            }
        }
        if let Some(r) = raw.sequence_number {
            let t = r.get();
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                h.sequence_number = Some(t.parse::<u128>().unwrap_or(u128::MAX));
            } else {
                h.bad |= SEQUENCE_NUMBER;
            }
        }
        if let Some(r) = raw.ty {
            match serde_json::from_str::<&'a str>(r.get()) {
                Ok(t) => h.ty = Cow::Borrowed(t),
                Err(_) => match serde_json::from_str::<String>(r.get()) {
                    Ok(t) => h.ty = Cow::Owned(t),
                    Err(_) => h.bad |= TYPE,
                },
            }
        }
        Some(h)
    }

    /// The names of the `bits` members that were of the wrong type.
    pub(super) fn bad_names(&self, bits: u8) -> String {
        let names = [
            (OUTPUT_INDEX, "output_index"),
            (CONTENT_INDEX, "content_index"),
            (SUMMARY_INDEX, "summary_index"),
            (COMMAND_INDEX, "command_index"),
            (DELTA, "delta"),
            (SEQUENCE_NUMBER, "sequence_number"),
            (TYPE, "type"),
        ];
        let bad: Vec<&str> = names.iter().filter(|(b, _)| self.bad & bits & b != 0).map(|(_, n)| *n).collect();
        bad.join(", ")
    }
}

/// The longest event whose shape is kept ([`Shape`]).
const MAX_SHAPE_BYTES: usize = 1024;

/// The shape of the last event the fast path read (at most
/// [`MAX_SHAPE_BYTES`]): its text, and where in it are the values that
/// change from event to event of a stream — its `sequence_number`, its
/// `delta` and the strings of the members the head does not read
/// (`obfuscation`; not `item_id`, the same for a part's deltas). An event
/// whose text is that one but in those places (the next
/// `output_text.delta` of the same part) is read by comparing the rest and
/// reading only those values: its other members are the ones already read,
/// byte for byte.
#[derive(Debug, Default)]
pub(super) struct Shape {
    /// The kept event's text; empty: no shape kept.
    text: String,
    /// The places of the changing values, in order, with the head member
    /// each is (its bit), or `0`: a string the head does not read.
    holes: Vec<(Range<usize>, u8)>,
    /// Where the event's type is in `text` (before the first hole), if it
    /// has one.
    ty: Option<Range<usize>>,
    /// The head members read from the text that is compared.
    output_index: Option<u64>,
    content_index: Option<u64>,
    summary_index: Option<u64>,
    command_index: Option<u64>,
    /// While recording: whether the event can be kept (its type before any
    /// hole).
    usable: bool,
}

impl Shape {
    fn clear(&mut self) {
        self.text.clear();
        self.holes.clear();
        self.ty = None;
        self.usable = true;
    }

    /// While [`Head::quick_shaped`] reads: member `key`, `bit` (or `None`:
    /// not the head's), whose value is at `at` in `data`.
    #[inline]
    fn note(&mut self, data: &str, key: &str, bit: Option<u8>, at: Range<usize>) {
        let changing = match bit {
            Some(TYPE) => {
                match data.as_bytes()[at.start] {
                    b'"' if self.holes.is_empty() => self.ty = Some(at.start + 1..at.end - 1),
                    b'"' => self.usable = false,
                    _ => {}
                }
                return;
            }
            Some(SEQUENCE_NUMBER | DELTA) => data.as_bytes()[at.start] != b'n',
            Some(_) => false,
            // The item a part's deltas belong to: the same for all of them
            // (compared with the rest).
            None if key == "item_id" => false,
            None => data.as_bytes()[at.start] == b'"',
        };
        if changing {
            self.holes.push((at, bit.unwrap_or(0)));
        }
    }

    /// After [`Head::quick_shaped`] read `data` as `head`: the shape kept.
    fn keep(&mut self, data: &str, head: &Head<'_>) {
        self.text.push_str(data);
        self.output_index = head.output_index;
        self.content_index = head.content_index;
        self.summary_index = head.summary_index;
        self.command_index = head.command_index;
    }

    /// The head of `data` when it is the kept text but in its holes (the
    /// head [`Head::quick_shaped`] gives), else `None`.
    fn read<'a>(&self, data: &'a str) -> Option<Head<'a>> {
        if self.text.is_empty() {
            return None;
        }
        let (old, new) = (self.text.as_bytes(), data.as_bytes());
        let mut h = Head {
            output_index: self.output_index,
            content_index: self.content_index,
            summary_index: self.summary_index,
            command_index: self.command_index,
            ..Head::default()
        };
        let (mut o, mut n) = (0, 0);
        for (at, bit) in &self.holes {
            let same = &old[o..at.start];
            if !new.get(n..)?.starts_with(same) {
                return None;
            }
            let mut c = Cursor::at(data, n + same.len());
            match *bit {
                SEQUENCE_NUMBER => h.sequence_number = Some(u128::from(c.uint()?)),
                DELTA => h.delta = Some(c.string()?),
                // (Ids and obfuscation: short plain strings.)
                _ if c.plain().is_some() => {}
                _ => {
                    if c.peek()? != b'"' {
                        return None;
                    }
                    c.skip()?;
                }
            }
            n = c.pos();
            o = at.end;
        }
        if new.get(n..)? != &old[o..] {
            return None;
        }
        if let Some(ty) = &self.ty {
            h.ty = Cow::Borrowed(data.get(ty.clone())?);
        }
        Some(h)
    }

    /// The bytes it holds.
    pub(super) fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.holes.capacity() * core::mem::size_of::<(Range<usize>, u8)>()
    }
}

/// The bit of the head member `key` names, if it names one.
#[inline(always)]
fn head_bit(key: &str) -> Option<u8> {
    Some(match key {
        "type" => TYPE,
        "output_index" => OUTPUT_INDEX,
        "content_index" => CONTENT_INDEX,
        "summary_index" => SUMMARY_INDEX,
        "command_index" => COMMAND_INDEX,
        "delta" => DELTA,
        "sequence_number" => SEQUENCE_NUMBER,
        _ => return None,
    })
}

/// The JSON value whose text starts at `at` in `data`, by serde_json, and
/// the offset where its text ends.
fn value_at(data: &str, at: usize) -> Option<(Value, usize)> {
    let mut values = serde_json::Deserializer::from_str(&data[at..]).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((value, at + values.byte_offset()))
}

/// Whether the text at `at` in `data` is the JSON value `text` (a value's
/// text followed by the end of its member or element is that value, whatever
/// follows): where it ends, if so.
fn repeats(data: &str, at: usize, text: &str) -> Option<usize> {
    let end = at + text.len();
    let ends = matches!(data.as_bytes().get(end), Some(b',' | b'}' | b']'));
    (!text.is_empty() && ends && data.as_bytes()[at..].starts_with(text.as_bytes())).then_some(end)
}

/// A `response` object read member by member ([`Head::quick_whole`] with
/// [`Known::record`], `members` or `items`), as serde_json reads it, but
/// for what `known` holds: a member repeating the known member of its key
/// is left out, an element of `output` repeating the known item at its
/// index is `null` ([`EventRead::reused`]). With `record`, the members' places
/// are kept ([`EventRead::members`]). `None` when a member is named twice (as
/// when anything is not compact).
fn read_response(data: &str, at: usize, known: &Known<'_>, out: &mut EventRead) -> Option<(Value, usize)> {
    // A response read for the first time has all its members (about 30 in
    // the recordings): room for them at once, not grown four times.
    let mut map = if known.record { Map::with_capacity(RESPONSE_ROOM) } else { Map::new() };
    let mut met: u64 = 0;
    let mut next = 0;
    let names = |i: usize| &known.text[known.members[i].0.clone()];
    let mut c = Cursor::at(data, at);
    c.object(|key, c| {
        let start = c.pos();
        // The known member of that key: the one after the last met, or any
        // (never `output`, which the fold keeps apart).
        let found = match next < known.members.len() && names(next) == key {
            _ if key == "output" => None,
            true => Some(next),
            false => (0..known.members.len()).find(|&i| names(i) == key),
        };
        if let Some(i) = found {
            let bit = 1u64.checked_shl(u32::try_from(i).ok()?)?;
            if met & bit != 0 {
                return None;
            }
            met |= bit;
            next = i + 1;
            if let Some(end) = repeats(data, start, &known.text[known.members[i].1.clone()]) {
                *c = Cursor::at(data, end);
                return Some(());
            }
        }
        let (value, end) = match key {
            "output" if !known.items.is_empty() => read_output(data, start, known.items, &mut out.reused)?,
            _ => value_at(data, start)?,
        };
        if known.record {
            // Compact: `"key":` just before the value.
            let key_at = start - at - 2 - key.len();
            out.members.push((key_at..key_at + key.len(), start - at..end - at));
        }
        if map.insert(key.to_owned(), value).is_some() {
            return None;
        }
        *c = Cursor::at(data, end);
        Some(())
    })?;
    if out.members.len() > MAX_MEMBERS {
        out.members.clear();
    }
    Some((Value::Object(map), c.pos()))
}

/// The room a `response` read for the first time is given (the recorded
/// responses have 19–35 members, most 29–35).
const RESPONSE_ROOM: usize = 36;

/// The most members of a `response` kept by place ([`Known::members`]).
pub(super) const MAX_MEMBERS: usize = 64;

/// A response's `output` list, its elements repeating the known items'
/// texts at their index left `null` (their indexes pushed to `reused`).
fn read_output(data: &str, at: usize, items: &[Item], reused: &mut Vec<usize>) -> Option<(Value, usize)> {
    let mut list = Vec::new();
    let mut c = Cursor::at(data, at);
    c.eat(b'[')?;
    if c.eat(b']').is_some() {
        return Some((Value::Array(list), c.pos()));
    }
    loop {
        let start = c.pos();
        let end = match items.get(list.len()).and_then(|item| repeats(data, start, &item.final_text)) {
            Some(end) => {
                reused.push(list.len());
                list.push(Value::Null);
                end
            }
            None => {
                let (value, end) = value_at(data, start)?;
                list.push(value);
                end
            }
        };
        c = Cursor::at(data, end);
        match c.peek()? {
            b',' => c.eat(b',')?,
            b']' => {
                c.eat(b']')?;
                return Some((Value::Array(list), c.pos()));
            }
            _ => return None,
        }
    }
}

/// What the fold holds as text, for an event read whole
/// ([`Head::quick_whole`]): what repeats it is not parsed again.
#[derive(Default, Clone, Copy)]
pub(super) struct Known<'k> {
    /// The text of the `response` the last lifecycle event merged: a
    /// `response` repeating it is left out of the value
    /// ([`EventRead::response_known`]).
    pub(super) repeat: &'k str,
    /// Read the `response` member by member, keeping its members' places
    /// ([`EventRead::members`]).
    pub(super) record: bool,
    /// The text [`members`](Self::members) are places in.
    pub(super) text: &'k str,
    /// The members of a `response` merged before (`(key, value)` places in
    /// [`text`](Self::text), at most [`MAX_MEMBERS`], none twice): a member
    /// of `response` repeating the one of its key is left out of the value
    /// (the folded one is that value).
    pub(super) members: &'k [(Range<usize>, Range<usize>)],
    /// The items, in output order, with the text of their final version
    /// ([`Item::final_text`], empty when not known): an element of
    /// `response.output` repeating the text of the item at its index is
    /// left `null` ([`EventRead::reused`]).
    pub(super) items: &'k [Item],
}

/// An event read whole with its head ([`Head::quick_whole`]).
#[derive(Debug, Default)]
pub(super) struct Whole<'a> {
    pub(super) head: Head<'a>,
    /// The rest of what was read.
    pub(super) read: EventRead,
}

/// What an event read whole gave besides its head: its value and where its
/// large members' texts are. The fold holds it while the event's handler
/// runs (each handler takes what it reads).
#[derive(Debug, Default)]
pub(super) struct EventRead {
    /// The event as serde_json parses it, but for what the fold held
    /// (without `response` when `response_known`, without the members and
    /// with the `null` elements said below); `None` once taken.
    pub(super) value: Option<Value>,
    /// Where the text of the event's `response` member is in its data, if
    /// it has one.
    pub(super) response: Option<Range<usize>>,
    /// `response` is the text the caller knew ([`Known::repeat`]): not
    /// parsed, not in `value`.
    pub(super) response_known: bool,
    /// Where the text of the event's `item` member is, if it has one.
    pub(super) item: Option<Range<usize>>,
    /// With [`Known::record`]: the places of the `response`'s members (key,
    /// value) in its text; none when it had more than [`MAX_MEMBERS`].
    pub(super) members: Vec<(Range<usize>, Range<usize>)>,
    /// The indexes of `response.output`'s elements left `null`: each is the
    /// final version of the known item at its index ([`Known::items`]).
    pub(super) reused: Vec<usize>,
}

/// The members of [`Head`] an event of type `ty` reads (bits): one of them
/// of the wrong type makes the event ignored.
pub(super) fn members_used(ty: &str) -> u8 {
    match ty {
        "response.output_text.delta" | "response.refusal.delta" | "response.reasoning_text.delta" => {
            OUTPUT_INDEX | CONTENT_INDEX | DELTA
        }
        "response.reasoning_summary_text.delta" => OUTPUT_INDEX | SUMMARY_INDEX | DELTA,
        "response.content_part.added" | "response.content_part.done" => OUTPUT_INDEX | CONTENT_INDEX,
        "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done" => {
            OUTPUT_INDEX | SUMMARY_INDEX
        }
        _ if delta_item_type(ty).is_some() => OUTPUT_INDEX | DELTA,
        "response.shell_call_command.delta" => OUTPUT_INDEX | COMMAND_INDEX | DELTA,
        "response.shell_call_command.added" | "response.shell_call_command.done" => OUTPUT_INDEX | COMMAND_INDEX,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path gives exactly serde_json's head, or declines.
    #[test]
    fn quick_head_is_serde_json_or_nothing() {
        let strings = crate::providers::view::TRICKY_JSON_STRINGS;
        let numbers =
            ["0", "7", "01", "-1", "1e2", "1.0", "null", "\"3\"", "123456789012345678", "1234567890123456789"];
        let mut docs = Vec::new();
        for v in strings {
            for n in numbers {
                for body in [
                    format!(
                        r#""type":"response.output_text.delta","sequence_number":{n},"item_id":"msg_1","output_index":0,"content_index":{n},"delta":{v},"logprobs":[]"#
                    ),
                    format!(
                        r#""type":"response.reasoning_summary_text.delta","summary_index":{n},"delta":{v},"obfuscation":{v}"#
                    ),
                    format!(r#""type":"response.function_call_arguments.delta","output_index":{n},"delta":{v}"#),
                    format!(
                        r#""type":"response.shell_call_command.added","command_index":{n},"command":{v},"ok":true"#
                    ),
                    format!(r#""type":{v},"sequence_number":{n},"x":{{}},"y":false"#),
                    format!(r#""type":"response.created","response":{{"id":{v}}},"sequence_number":{n}"#),
                    format!(
                        r#""type":"response.output_item.done","output_index":{n},"item":{{"id":{v},"content":[{{"text":{v},"n":[{n},1.5e3,true,null]}}]}},"sequence_number":7"#
                    ),
                    format!(
                        r#""type":"response.completed","response": {{ "output" : [ {v} ] }} ,"sequence_number":{n}"#
                    ),
                    format!(r#""type":"response.in_progress","response":{{"a":{v}}},"response":{{"b":{n}}},"x":{v}"#),
                    format!(r#""type":"response.in_progress","response":{{"a":1}},"sequence_number":{n},"type":{v}"#),
                    format!(r#""type":"response.output_text.delta","delta":{v},"delta":{v}"#),
                    format!(r#""type":null,"delta":null,"output_index":{n}"#),
                    format!(r#""delta":{n},"type":"error""#),
                ] {
                    docs.push(format!("{{{body}}}"));
                    docs.push(format!("{{{body}}} "));
                    docs.push(format!(" {{{body}}}"));
                    docs.push(format!("{{{body},\"sequence_number\":1}}"));
                    docs.push(format!("[{body}]"));
                }
            }
        }
        docs.push("{}".to_owned());
        docs.push("[]".to_owned());
        let mut quick = 0;
        let mut shaped = 0;
        let mut shape = Shape::default();
        for doc in &docs {
            if let Some(h) = Head::quick(doc) {
                quick += 1;
                assert_eq!(Some(h), Head::slow(doc), "{doc}");
            }
            // Read against the shape the documents before left (the same
            // members with other values, or other members).
            if let Some(h) = shape.read(doc) {
                shaped += 1;
                assert_eq!(Some(h), Head::slow(doc), "{doc} against {}", shape.text);
            }
            assert_eq!(Head::parse(doc, &mut shape), Head::slow(doc), "{doc}");
        }
        // A document read against the last shape kept, for every pair.
        for kept in docs.iter().step_by(7) {
            let mut shape = Shape::default();
            if Head::quick_shaped(kept, &mut shape).is_none() || shape.text.is_empty() {
                continue;
            }
            for doc in &docs {
                if let Some(h) = shape.read(doc) {
                    shaped += 1;
                    assert_eq!(Some(h), Head::slow(doc), "{doc} against {kept}");
                }
            }
        }
        assert!(shaped > 300, "{shaped} read by shape of {}", docs.len());
        // A part's deltas as sent: each read against the one before.
        let mut shape = Shape::default();
        let mut shaped = 0;
        let mut deltas = 0;
        for (i, v) in strings.iter().enumerate() {
            let doc = format!(
                r#"{{"type":"response.output_text.delta","sequence_number":{},"item_id":"msg_1","output_index":0,"content_index":1,"delta":{v},"logprobs":[],"obfuscation":"o{i}"}}"#,
                i * 37
            );
            let Some(expected) = Head::slow(&doc) else { continue };
            deltas += 1;
            shaped += usize::from(shape.read(&doc).is_some());
            assert_eq!(Head::parse(&doc, &mut shape), Some(expected), "{doc}");
        }
        assert!(shaped * 2 > deltas, "{shaped} of {deltas} deltas read by shape");
        // One document in five is compact; of those, the plain ones.
        assert!(quick > docs.len() / 20, "{quick} of {}", docs.len());
        // Read whole: the head `slow` gives and serde_json's value of the
        // data, or declined.
        let mut whole = 0;
        let mut known = 0;
        let mut last_response = String::new();
        for doc in &docs {
            let expected = serde_json::from_str::<Value>(doc).ok();
            if let Some(w) = Head::quick_whole(doc, |t| t.starts_with("response."), |_| Known::default()) {
                whole += 1;
                assert!(!w.read.response_known);
                assert_eq!(Some(w.head), Head::slow(doc), "{doc}");
                assert_eq!(w.read.value.as_ref(), expected.as_ref(), "{doc}");
                // The response's text is its value.
                let response = w.read.response.map(|r| serde_json::from_str::<Value>(&doc[r]).unwrap());
                assert_eq!(response.as_ref(), w.read.value.as_ref().and_then(|v| v.get("response")), "{doc}");
            }
            // Read again knowing the last response's text: left out when it
            // is that text, the rest the same.
            if let Some(w) = Head::quick_whole(
                doc,
                |t| t.starts_with("response."),
                |t| match t != "response.x" {
                    true => Known { repeat: &last_response, ..Known::default() },
                    false => Known::default(),
                },
            ) {
                let mut expected = expected.clone().unwrap();
                if w.read.response_known {
                    known += 1;
                    assert_eq!(w.read.response.clone().map(|r| &doc[r]), Some(last_response.as_str()));
                    let was = expected.as_object_mut().unwrap().shift_remove("response").unwrap();
                    assert_eq!(was, serde_json::from_str::<Value>(&last_response).unwrap(), "{doc}");
                }
                assert_eq!(Some(w.head), Head::slow(doc), "{doc}");
                assert_eq!(w.read.value, Some(expected), "{doc}");
                if let Some(r) = w.read.response {
                    last_response = doc[r].to_owned();
                }
            }
        }
        assert!(whole > docs.len() / 50, "{whole} of {}", docs.len());
        assert!(known > whole / 20, "{known} of {whole}");
        let live = r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"Ab3"}"#;
        assert!(Head::quick(live).is_some_and(|h| h.delta.is_some() && h.sequence_number == Some(4)));
    }
}
