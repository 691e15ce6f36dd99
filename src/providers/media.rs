//! Media parts: bytes that a provider streams as base64 text (audio,
//! images), decoded as they arrive (append-bytes).
//!
//! [`Base64Stream`] decodes one base64 text given in pieces split anywhere:
//! the characters of an unfinished 4-character quantum are carried to the
//! next piece, so the bytes do not depend on where the text was cut. A
//! quantum with `=` padding ends a run and the next one starts fresh (a
//! provider that pads each delta on its own gives the same bytes as one
//! that does not). Both alphabets are read (standard `+/` and URL-safe
//! `-_`); CR and LF are skipped. At [`Base64Stream::finish`] an unpadded
//! tail of 2 or 3 characters is decoded as if padded.
//!
//! Invalid text (a character outside the alphabets, misplaced padding, a
//! lone final character) is an [`InvalidBase64`] naming the character
//! offset: nothing of that piece is decoded, and the stream stays failed
//! (the bytes after it could not be aligned).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;

/// Why a base64 text could not be decoded: at which character of the whole
/// text (counted from 0, CR/LF included) and what was found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidBase64 {
    /// Character offset in the whole text.
    pub(crate) offset: usize,
    /// What is wrong.
    pub(crate) reason: String,
}

/// A streaming base64 decoder that carries an unfinished quantum between
/// pieces; its memory is the last piece's decoded bytes plus 3 characters.
#[derive(Debug, Default)]
pub(crate) struct Base64Stream {
    /// Characters of an unfinished quantum (standard alphabet).
    carry: Vec<u8>,
    /// Normalised characters of the current piece (reused).
    chars: Vec<u8>,
    /// The bytes of the last piece (reused).
    out: Vec<u8>,
    /// Characters received so far (for error offsets).
    seen: usize,
    failed: bool,
}

/// The tail engine: an unpadded final quantum accepted.
const TAIL: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

impl Base64Stream {
    /// Whether an earlier piece was invalid (nothing more is decoded).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Heap bytes held.
    pub(crate) fn capacity(&self) -> usize {
        self.carry.capacity() + self.chars.capacity() + self.out.capacity()
    }

    /// Decodes the next piece; returns its whole bytes (possibly none: an
    /// unfinished quantum is carried). After an error every call returns
    /// no bytes.
    pub(crate) fn push(&mut self, text: &str) -> Result<&[u8], InvalidBase64> {
        self.out.clear();
        if self.failed {
            return Ok(&self.out);
        }
        let start = self.seen - self.carry.len();
        self.chars.clear();
        self.chars.extend_from_slice(&self.carry);
        self.carry.clear();
        for (i, b) in text.bytes().enumerate() {
            let c = match b {
                b'\r' | b'\n' => continue,
                b'-' => b'+',
                b'_' => b'/',
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' | b'=' => b,
                _ => {
                    return Err(self.fail(self.seen + i, format!("{:?} is not a base64 character", char_at(text, i))));
                }
            };
            self.chars.push(c);
        }
        self.seen += text.len();
        let whole = self.chars.len() / 4 * 4;
        let mut run = 0;
        let mut q = 0;
        while q < whole {
            let quantum = &self.chars[q..q + 4];
            if quantum.contains(&b'=') {
                let end = q + 4;
                if let Err(e) = STANDARD.decode_vec(&self.chars[run..end], &mut self.out) {
                    return Err(self.fail(start + run, e.to_string()));
                }
                run = end;
            }
            q += 4;
        }
        if run < whole {
            if let Err(e) = STANDARD.decode_vec(&self.chars[run..whole], &mut self.out) {
                return Err(self.fail(start + run, e.to_string()));
            }
        }
        self.carry.extend_from_slice(&self.chars[whole..]);
        Ok(&self.out)
    }

    /// Ends the text: decodes an unfinished final quantum (2 or 3
    /// characters: unpadded; 1: invalid).
    pub(crate) fn finish(&mut self) -> Result<&[u8], InvalidBase64> {
        self.out.clear();
        if self.failed || self.carry.is_empty() {
            return Ok(&self.out);
        }
        let at = self.seen - self.carry.len();
        let carry = std::mem::take(&mut self.carry);
        if let Err(e) = TAIL.decode_vec(&carry, &mut self.out) {
            self.out.clear();
            let reason = if carry.len() == 1 { "a lone final character".to_owned() } else { e.to_string() };
            return Err(self.fail(at, reason));
        }
        Ok(&self.out)
    }

    fn fail(&mut self, offset: usize, reason: String) -> InvalidBase64 {
        self.failed = true;
        self.out.clear();
        self.carry.clear();
        InvalidBase64 { offset, reason }
    }
}

fn char_at(text: &str, i: usize) -> char {
    text.get(i..).and_then(|s| s.chars().next()).unwrap_or('\u{FFFD}')
}

/// The MIME type of an audio `format` as OpenAI names it (`pcm16` →
/// `audio/pcm`, `mp3` → `audio/mpeg`, …; unknown: `audio/<format>`).
pub(crate) fn audio_mime(format: &str) -> String {
    match format {
        "pcm16" | "pcm" => "audio/pcm".to_owned(),
        "mp3" => "audio/mpeg".to_owned(),
        "opus" => "audio/opus".to_owned(),
        "g711_ulaw" => "audio/basic".to_owned(),
        "g711_alaw" => "audio/x-alaw-basic".to_owned(),
        other => format!("audio/{other}"),
    }
}

/// The MIME type of an image `output_format` (`png`, `jpeg`, `webp`).
pub(crate) fn image_mime(format: &str) -> String {
    match format {
        "jpg" => "image/jpeg".to_owned(),
        other => format!("image/{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in(pieces: &[&str]) -> Result<Vec<u8>, InvalidBase64> {
        let mut s = Base64Stream::default();
        let mut out = Vec::new();
        for p in pieces {
            out.extend_from_slice(s.push(p)?);
        }
        out.extend_from_slice(s.finish()?);
        Ok(out)
    }

    #[test]
    fn any_split_decodes_the_same_bytes() {
        let bytes: Vec<u8> = (0..=255u8).chain(0..17).collect();
        let text = STANDARD.encode(&bytes);
        for a in 0..text.len() {
            for b in a..text.len() {
                let got = decode_in(&[&text[..a], &text[a..b], &text[b..]]).unwrap();
                assert_eq!(got, bytes, "split at {a}, {b}");
            }
        }
    }

    #[test]
    fn pieces_padded_on_their_own_and_unpadded_tails_decode() {
        let parts: [&[u8]; 3] = [b"ab", b"cde", b"f"];
        let padded: Vec<String> = parts.iter().map(|p| STANDARD.encode(p)).collect();
        let refs: Vec<&str> = padded.iter().map(String::as_str).collect();
        assert_eq!(decode_in(&refs).unwrap(), b"abcdef");
        // Concatenated, then cut inside a padded quantum.
        let joined = padded.concat();
        assert_eq!(decode_in(&[&joined[..3], &joined[3..9], &joined[9..]]).unwrap(), b"abcdef");
        assert_eq!(decode_in(&["YW", "Jj"]).unwrap(), b"abc");
        assert_eq!(decode_in(&["YWI"]).unwrap(), b"ab");
        // Non-zero trailing bits are not canonical base64.
        assert!(decode_in(&["YWJ"]).is_err());
        // URL-safe alphabet and line breaks.
        assert_eq!(decode_in(&["-_8=\r\n"]).unwrap(), [0xfb, 0xff]);
    }

    #[test]
    fn invalid_text_is_an_error_with_its_offset_and_stays_failed() {
        let mut s = Base64Stream::default();
        assert_eq!(s.push("QUJD").unwrap(), b"ABC");
        let e = s.push("QU*D").unwrap_err();
        assert_eq!(e.offset, 6);
        assert!(s.failed());
        assert!(s.push("QUJD").unwrap().is_empty());
        assert!(s.finish().unwrap().is_empty());
        assert_eq!(decode_in(&["QUJDR"]).unwrap_err().offset, 4);
        assert!(decode_in(&["Q=JD"]).is_err());
        assert!(decode_in(&["é"]).is_err());
    }

    #[test]
    fn mime_names() {
        assert_eq!(audio_mime("pcm16"), "audio/pcm");
        assert_eq!(audio_mime("wav"), "audio/wav");
        assert_eq!(image_mime("png"), "image/png");
        assert_eq!(image_mime("jpeg"), "image/jpeg");
    }
}
