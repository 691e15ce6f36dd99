//! Byte scanners for string content.

use memchr::memchr2;

/// Whether a byte is printable ASCII other than `"` and `\` (string content needing no work).
const fn plain_ascii_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x80 {
        table[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    table
}
static PLAIN_ASCII: [bool; 256] = plain_ascii_table();

/// Length of the prefix of `bytes` made of printable ASCII other than `"` and `\`: eight bytes
/// at a time (SWAR), then byte by byte.
#[inline]
pub(crate) fn ascii_plain_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut j = 0;
    while let Some(chunk) = bytes.get(j..j + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Any byte >= 0x80, < 0x20, == '"' or == '\\'.
        let special = (w & HIGH)
            | has_zero(w & 0x6060_6060_6060_6060)
            | has_zero(w ^ (ONES * b'"' as u64))
            | has_zero(w ^ (ONES * b'\\' as u64));
        if special != 0 {
            break;
        }
        j += 8;
    }
    while j < bytes.len() && PLAIN_ASCII[bytes[j] as usize] {
        j += 1;
    }
    j
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
        let long = vec![b'x'; 100];
        assert_eq!(find_quote_or_backslash(&long), 100);
    }
}
