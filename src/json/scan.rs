//! Byte scanners for string content, and the one table of JSON's one-letter escapes.

use memchr::memchr2;

/// Length of the prefix of `bytes` made of printable ASCII other than `"` and `\\`, eight bytes
/// at a time (SWAR). In each `has_zero`-style mask a false positive can only sit above a true one
/// (borrows propagate upward), so the lowest set bit marks the first special byte exactly.
#[inline]
pub(crate) fn ascii_plain_prefix(bytes: &[u8]) -> usize {
    // Any byte >= 0x80, < 0x20 (bits 5 and 6 clear), == '"' or == '\\'.
    let special = |w: u64| {
        (w & HIGH)
            | has_zero(w & 0x6060_6060_6060_6060)
            | has_zero(w ^ (ONES * b'"' as u64))
            | has_zero(w ^ (ONES * b'\\' as u64))
    };
    first_special_to_end(bytes, special)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `v` that is zero (and possibly of bytes above one: a false
/// positive can only sit above a true one, so the lowest set bit marks the first zero exactly).
#[inline(always)]
fn has_zero(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGH
}

/// The index of the first byte of `bytes` whose high bit `special` sets in the mask of the
/// eight-byte word it is in (a lowest set bit marks its byte exactly), or its length. The short
/// tail (fewer than eight bytes) is made a word by `tail`, padded with `"` (special to every
/// caller).
#[inline(always)]
fn first_special(bytes: &[u8], special: impl Fn(u64) -> u64, tail: fn(&[u8]) -> u64) -> usize {
    let j = match first_special_in_words(bytes, &special) {
        Ok(at) => return at,
        Err(j) => j,
    };
    let m = special(tail(&bytes[j..]));
    (j + (m.trailing_zeros() / 8) as usize).min(bytes.len())
}

/// The index of the first special byte of `bytes`' whole eight-byte words (as [`first_special`]
/// reads them), or `Err` with where the words end when none has one.
#[inline(always)]
fn first_special_in_words(bytes: &[u8], special: &impl Fn(u64) -> u64) -> Result<usize, usize> {
    let mut j = 0;
    for w in bytes.chunks_exact(8) {
        let m = special(word(w));
        if m != 0 {
            return Ok(j + (m.trailing_zeros() / 8) as usize);
        }
        j += 8;
    }
    Err(j)
}

/// Eight bytes as a little-endian word (0 for any other length: never asked).
#[inline(always)]
fn word(b: &[u8]) -> u64 {
    b.try_into().map_or(0, u64::from_le_bytes)
}

/// [`first_special`] for a text whose scan runs to its end as a rule (a whole string, a fragment):
/// the bytes after the last whole word are read as the text's last eight bytes, overlapping the
/// word before them, with no branch on their count. Those overlapped bytes were found plain, so
/// they mark nothing (and below the first special byte a `has_zero` mask has no false positive):
/// a mask of zero gives the length. A text shorter than eight bytes goes to `first_special`.
#[inline(always)]
fn first_special_to_end(bytes: &[u8], special: impl Fn(u64) -> u64) -> usize {
    let Some(last) = bytes.len().checked_sub(8) else {
        return first_special(bytes, special, padded);
    };
    if let Ok(at) = first_special_in_words(bytes, &special) {
        return at;
    }
    let m = special(word(&bytes[last..]));
    last + (m.trailing_zeros() / 8) as usize
}

/// `tail` (fewer than eight bytes) as the low bytes of a word, the others `"`: by loads, not a
/// copy (a variable-length copy is a call to `memcpy`). What [`first_special_to_end`] reads a text
/// shorter than eight bytes with (a short delta, a fragment's last bytes).
#[inline(always)]
fn padded(tail: &[u8]) -> u64 {
    let (mut w, mut k) = (0u64, 0usize);
    if tail.len() & 4 != 0 {
        w = u64::from(tail[..4].try_into().map_or(0, u32::from_le_bytes));
        k = 4;
    }
    if tail.len() & 2 != 0 {
        w |= u64::from(tail[k..k + 2].try_into().map_or(0, u16::from_le_bytes)) << (8 * k);
        k += 2;
    }
    if tail.len() & 1 != 0 {
        w |= u64::from(tail[k]) << (8 * k);
        k += 1;
    }
    w | (ONES * u64::from(b'"')) << (8 * k)
}

/// Index of the first byte of `bytes` that ends a JSON string's plain run: `"`, `\\` or a control
/// character (< 0x20), or its length. Other bytes (UTF-8 included) pass. Eight bytes at a time
/// (SWAR): in a `has_zero`-style mask a false positive can only sit above a true one, so the
/// lowest set bit marks the first such byte exactly.
#[inline]
pub(crate) fn json_plain_prefix(bytes: &[u8]) -> usize {
    // The tail copied into a padded word: by loads (`padded`) measured worse here (the keys'
    // reader grew; their runs end in a word, rarely in the tail).
    let copied = |tail: &[u8]| {
        let mut word = [b'"'; 8];
        word[..tail.len()].copy_from_slice(tail);
        u64::from_le_bytes(word)
    };
    first_special(bytes, json_special, copied)
}

/// [`json_plain_prefix`] for a text whose scan runs to its end as a rule (a string's whole text
/// between its quotes, decoded): the short tail, reached by every such text, read by one load
/// overlapping the last word ([`first_special_to_end`]) instead of copied by a call to `memcpy`.
#[inline]
pub(crate) fn json_plain_prefix_whole(bytes: &[u8]) -> usize {
    first_special_to_end(bytes, json_special)
}

/// The high bit of each byte of `w` that ends a JSON string's plain run (`"`, `\\`, a control
/// character), in the `has_zero` form [`first_special`] reads.
#[inline(always)]
fn json_special(w: u64) -> u64 {
    // < 0x20: bits 5, 6 and 7 all clear.
    has_zero(w & 0xE0E0_E0E0_E0E0_E0E0) | has_zero(w ^ (ONES * b'"' as u64)) | has_zero(w ^ (ONES * b'\\' as u64))
}

/// Index of the first `"` or `\` in `bytes` (or its length). Short inputs (the typical
/// streamed fragment) are scanned directly, which beats the setup cost of a vectorized search.
#[inline]
pub(crate) fn find_quote_or_backslash(bytes: &[u8]) -> usize {
    if bytes.len() <= 32 {
        bytes.iter().position(|&b| b == b'"' || b == b'\\').unwrap_or(bytes.len())
    } else {
        memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len())
    }
}

/// The character a one-letter JSON escape stands for (`n` in `\n` → newline); `None` for any
/// other byte (`u` starts a `\u` escape, handled by the callers).
#[inline]
pub(crate) fn escape_char(letter: u8) -> Option<char> {
    Some(match letter {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_prefix_matches_naive_scan() {
        // Every byte value at every position of a 20-byte plain run.
        for special in 0..=255u8 {
            for at in 0..20 {
                let mut bytes = vec![b'a'; 20];
                bytes[at] = special;
                let naive = bytes.iter().position(|&b| !(0x20..0x80).contains(&b) || b == b'"' || b == b'\\');
                assert_eq!(ascii_plain_prefix(&bytes), naive.unwrap_or(20), "byte {special:#x} at {at}");
                assert_eq!(
                    find_quote_or_backslash(&bytes),
                    bytes.iter().position(|&b| b == b'"' || b == b'\\').unwrap_or(20)
                );
            }
        }
        for special in 0..=255u8 {
            for len in 0..20 {
                for at in 0..=len {
                    let mut bytes = vec![0xC3u8; len];
                    if at < len {
                        bytes[at] = special;
                    }
                    let naive = bytes.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\').unwrap_or(len);
                    assert_eq!(json_plain_prefix(&bytes), naive, "byte {special:#x} at {at} of {len}");
                    assert_eq!(json_plain_prefix_whole(&bytes), naive, "byte {special:#x} at {at} of {len}");
                }
            }
        }
        // Every length (the tail read as the last word, or padded), a special byte anywhere and
        // a second one after it.
        for special in [0u8, 0x1F, b'"', b'\\', 0x7F, 0x80, 0xFF, b'a'] {
            for len in 0..26 {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    if at < len {
                        bytes[at] = special;
                    }
                    if at + 3 < len {
                        bytes[at + 3] = b'"';
                    }
                    let ascii = bytes.iter().position(|&b| !(0x20..0x80).contains(&b) || b == b'"' || b == b'\\');
                    assert_eq!(ascii_plain_prefix(&bytes), ascii.unwrap_or(len), "byte {special:#x} at {at} of {len}");
                    let json = bytes.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\');
                    assert_eq!(json_plain_prefix(&bytes), json.unwrap_or(len), "byte {special:#x} at {at} of {len}");
                    assert_eq!(
                        json_plain_prefix_whole(&bytes),
                        json.unwrap_or(len),
                        "byte {special:#x} at {at} of {len}"
                    );
                }
            }
        }
        let long = vec![b'x'; 100];
        assert_eq!(find_quote_or_backslash(&long), 100);
    }
}

/// An estimate (an upper bound in practice) of the heap bytes a
/// `serde_json::Value` tree of the JSON text `bytes` costs, in one pass
/// without building it: each array and object its own allocations, each
/// element or member its slot (an `IndexMap` entry for a member), each
/// string its text. Amplifying shapes show: `[[[[]]]]` costs ~40× its
/// text, `[0,0,…]` ~30×, a long string ~1×. Linear in `bytes`; string
/// contents are skipped a word at a time.
pub(crate) fn estimate_value_bytes(bytes: &[u8]) -> usize {
    const VALUE: usize = 32;
    let mut total = VALUE;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // A string: its text (keys included), skipped to its end.
                let start = i + 1;
                let mut j = start;
                loop {
                    j += find_quote_or_backslash(&bytes[j..]);
                    match bytes.get(j) {
                        Some(b'\\') => j += 2,
                        _ => break,
                    }
                }
                total += j.min(bytes.len()) - start;
                i = j + 1;
                continue;
            }
            // A container's own allocations (a vector's first slots; a map's
            // entries vector and hash table).
            b'[' => total += 4 * VALUE + 16,
            b'{' => total += 320,
            // Another member of an object: an entry (hash, key, value) with
            // growth slack, its index, the key's allocation.
            b':' => total += 2 * (8 + 24 + VALUE) + 24 + 8,
            // Another element (counted twice for a member, which is fine:
            // an estimate errs high).
            b',' => total += 2 * VALUE,
            _ => {}
        }
        i += 1;
    }
    total
}

/// The heap bytes a `serde_json::Value` tree holds, counted as
/// [`estimate_value_bytes`] estimates them (so a tree's count never exceeds
/// the estimate of its text): each array its slots, each object its
/// entries and index, each string and key its allocation. Time linear in
/// the number of nodes (a string's contents are not read); no recursion,
/// so any depth is safe.
pub(crate) fn value_heap_bytes(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    const VALUE: usize = 32;
    let mut total = 0;
    let mut stack: Vec<&Value> = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => total += s.capacity(),
            Value::Array(a) => {
                total += a.capacity() * VALUE + 16;
                stack.extend(a.iter().filter(|e| matches!(e, Value::String(_) | Value::Array(_) | Value::Object(_))));
            }
            Value::Object(m) => {
                total += 64 + m.len() * (8 + 24 + VALUE + 8);
                for (k, e) in m {
                    total += k.capacity();
                    if matches!(e, Value::String(_) | Value::Array(_) | Value::Object(_)) {
                        stack.push(e);
                    }
                }
            }
            _ => {}
        }
    }
    total
}

/// [`value_heap_bytes`] of each member of a map, plus the map's own entries.
pub(crate) fn map_heap_bytes(map: &serde_json::Map<String, serde_json::Value>) -> usize {
    64 + map.iter().map(|(k, v)| 8 + 24 + 32 + 8 + k.capacity() + value_heap_bytes(v)).sum::<usize>()
}

#[cfg(test)]
mod estimate_tests {
    use super::estimate_value_bytes;

    /// The estimate errs high of what a tree really costs, and is linear.
    #[test]
    fn the_estimate_bounds_the_amplifying_shapes() {
        let nested = format!("[{}]", vec!["[[[[[]]]]]"; 1000].join(","));
        let numbers = format!("[{}]", vec!["0"; 10_000].join(","));
        let keys = format!("{{{}}}", (0..1000).map(|i| format!("\"k{i}\":0")).collect::<Vec<_>>().join(","));
        let string = format!("\"{}\\\"{}\"", "a".repeat(50_000), "b".repeat(50_000));
        assert!(estimate_value_bytes(nested.as_bytes()) > 30 * nested.len());
        assert!(estimate_value_bytes(numbers.as_bytes()) > 25 * numbers.len());
        assert!(estimate_value_bytes(keys.as_bytes()) > 15 * keys.len());
        let s = estimate_value_bytes(string.as_bytes());
        assert!((100_000..100_200).contains(&s), "{s}");
    }

    /// What a parsed tree is counted at stays within its text's estimate, and
    /// grows with what the tree holds.
    #[test]
    fn a_trees_count_is_within_its_estimate() {
        let docs = [
            format!("[{}]", vec!["[[[[[]]]]]"; 1000].join(",")),
            format!("[{}]", vec!["0"; 10_000].join(",")),
            format!("{{{}}}", (0..1000).map(|i| format!("\"k{i}\":{{\"a\":[\"x\"]}}")).collect::<Vec<_>>().join(",")),
            format!("{{\"s\":\"{}\"}}", "a".repeat(50_000)),
        ];
        for doc in &docs {
            let value: serde_json::Value = serde_json::from_str(doc).unwrap();
            let counted = super::value_heap_bytes(&value);
            assert!(counted <= estimate_value_bytes(doc.as_bytes()), "{counted} {}", &doc[..20]);
            assert!(counted >= doc.len() / 4, "{counted} {}", &doc[..20]);
        }
    }
}
