//! The live render of a provider stream, and everything else `fold` writes
//! while the stream runs (JSON Lines, warnings, the spinner).
//!
//! Text streams as it arrives (reasoning dimmed, refusals red when the
//! render goes to a terminal). Tool calls are one line each,
//! `[tool call] NAME ARGUMENTS`: on a terminal every open call's line is
//! updated in place as its arguments stream (parallel calls do not
//! interleave), cut to the terminal's width until the calls end, then
//! printed whole; elsewhere each line is printed once the calls that
//! streamed together have ended. Text that arrives while tool calls stream
//! is printed after them.
//!
//! On a terminal a status (the spinner, the Esc hint) is drawn after the
//! cursor and erased before anything else is written. In raw mode the
//! terminal no longer turns `\n` into a new line at column 0, so every
//! `\n` written to a terminal becomes `\r\n`.
//!
//! Everything the provider controls (text, reasoning, tool names and
//! arguments, part types, error and warning messages) goes through
//! [`printable`] before it is written: its control characters (ESC, BEL, CR,
//! backspace, DEL, the C1 controls such as U+009B CSI and U+009D OSC) are
//! shown as `\u{1b}` and never reach the terminal, so a stream cannot set
//! the window title (OSC 0), write the clipboard (OSC 52), clear the screen
//! (CSI 2J) or overwrite what was shown. The only escape sequences written
//! are the render's own.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use ssefold::providers::{PartKind, PartOutcome, StreamEvent};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// One of the two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fd {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Where things go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Where the live render goes (`None`: no live render).
    pub render: Option<Fd>,
    /// Whether standard output is a terminal.
    pub stdout_tty: bool,
    /// Whether standard error is a terminal.
    pub stderr_tty: bool,
    /// The terminal's width in columns.
    pub width: usize,
}

impl Layout {
    fn is_tty(&self, fd: Fd) -> bool {
        match fd {
            Fd::Stdout => self.stdout_tty,
            Fd::Stderr => self.stderr_tty,
        }
    }

    /// Whether the render goes to a terminal (colors, in-place updates).
    pub fn render_tty(&self) -> bool {
        self.render.is_some_and(|fd| self.is_tty(fd))
    }

    /// The terminal the status (spinner, Esc hint) is drawn on: the
    /// render's when it is a terminal, else standard error's.
    pub fn status_fd(&self) -> Option<Fd> {
        match self.render {
            Some(fd) if self.is_tty(fd) => Some(fd),
            _ if self.stderr_tty => Some(Fd::Stderr),
            _ => None,
        }
    }
}

/// Text the provider controls, made safe to write to a terminal: every
/// control character (Unicode `Cc`: C0, DEL, C1) is written as `\u{…}`,
/// except, with `lines`, line feed and tab (text keeps its layout). With
/// `lines`, a carriage return before a line feed or at the end of `s` (a
/// CRLF split between two deltas) is dropped: a CR elsewhere would move the
/// cursor back over what was shown, so it is escaped.
pub fn printable(s: &str, lines: bool) -> Cow<'_, str> {
    let escape = |c: char| c.is_control() && !(lines && (c == '\n' || c == '\t'));
    if !s.chars().any(escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if lines && c == '\r' && matches!(chars.peek(), None | Some('\n')) {
            continue;
        }
        if escape(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A JSON text for a terminal: the C1 controls and DEL, which JSON writers
/// leave as they are (only C0 must be escaped in JSON), written as `\u00XX`
/// escapes: the same JSON value, and nothing a terminal takes for a
/// control. (They can only occur inside JSON strings, where `\u00XX` means
/// the same character.)
pub fn json_printable(s: &str) -> Cow<'_, str> {
    // DEL is 0x7F; U+0080..=U+009F are 0xC2 0x80..=0x9F in UTF-8: a line without 0x7F or 0xC2 (nearly every
    // line, however long) is returned as it is after one memchr pass.
    let escape = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    let Some(first) = memchr::memchr2(0x7f, 0xc2, s.as_bytes()) else {
        return Cow::Borrowed(s);
    };
    if !s[first..].chars().any(escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if escape(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A tool call of the open region.
#[derive(Debug)]
struct Call {
    part: u32,
    name: String,
    args: String,
    open: bool,
    /// `[invalid arguments: …]` or `[incomplete]`, once ended so.
    outcome: Option<(&'static str, String)>,
}

/// The live render and the other writes of `fold`. See the module docs.
pub struct Renderer {
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
    layout: Layout,
    raw: bool,
    kinds: HashMap<u32, PartKind>,
    /// The render's cursor is at the start of a line.
    at_line_start: bool,
    /// The tool calls streaming together (kept until all have ended).
    calls: Vec<Call>,
    /// Rows of the tool-call region on the terminal now.
    region_rows: usize,
    /// Text that arrived while tool calls streamed, printed after them.
    held: String,
    /// The status on the terminal now (drawn after the cursor).
    status: Option<String>,
    /// The terminal cursor's column (tracked from what is written).
    col: usize,
    status_drawn: bool,
    /// The region changed since it was last drawn.
    dirty: bool,
}

impl Renderer {
    /// A renderer writing to the given streams, laid out as `layout` says.
    pub fn new(stdout: Box<dyn Write>, stderr: Box<dyn Write>, layout: Layout) -> Self {
        Renderer {
            stdout,
            stderr,
            layout,
            raw: false,
            kinds: HashMap::new(),
            at_line_start: true,
            calls: Vec::new(),
            region_rows: 0,
            held: String::new(),
            status: None,
            col: 0,
            status_drawn: false,
            dirty: false,
        }
    }

    /// The terminal is (or is no longer) in raw mode.
    pub fn set_raw(&mut self, raw: bool) {
        self.raw = raw;
    }

    /// Writes `s` to `fd` (`\n` as `\r\n` on a terminal in raw mode).
    fn put(&mut self, fd: Fd, s: &str) -> io::Result<()> {
        if self.layout.is_tty(fd) {
            self.col = column_after(self.col, s, self.layout.width);
        }
        self.write_raw(fd, s)
    }

    /// Writes `s` to `fd` as [`put`](Self::put), without moving the
    /// tracked column (for what the cursor comes back from).
    fn write_raw(&mut self, fd: Fd, s: &str) -> io::Result<()> {
        let crlf = self.raw && self.layout.is_tty(fd);
        let out = match fd {
            Fd::Stdout => &mut self.stdout,
            Fd::Stderr => &mut self.stderr,
        };
        if crlf && s.contains('\n') {
            out.write_all(s.replace('\n', "\r\n").as_bytes())
        } else {
            out.write_all(s.as_bytes())
        }
    }

    /// Flushes both streams.
    pub fn flush(&mut self) -> io::Result<()> {
        self.stdout.flush()?;
        self.stderr.flush()
    }

    /// Writes render text (tracking the line start).
    fn text(&mut self, s: &str) -> io::Result<()> {
        let Some(fd) = self.layout.render else { return Ok(()) };
        if !s.is_empty() {
            self.at_line_start = s.ends_with('\n');
        }
        self.put(fd, s)
    }

    fn styled(&self, code: &str, s: &str) -> String {
        if self.layout.render_tty() && !s.is_empty() {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }

    fn newline(&mut self) -> io::Result<()> {
        if self.at_line_start {
            Ok(())
        } else {
            self.text("\n")
        }
    }

    /// Erases the status, if drawn (the cursor is where it was before).
    fn clear_status(&mut self) -> io::Result<()> {
        if self.status_drawn {
            self.status_drawn = false;
            if let Some(fd) = self.layout.status_fd() {
                self.put(fd, "\x1b[K")?;
            }
        }
        Ok(())
    }

    /// Draws the status after the cursor, cut to what fits on the cursor's
    /// row (then erasing it to the end of the row removes it whole).
    fn draw_status(&mut self) -> io::Result<()> {
        if let (Some(fd), Some(s)) = (self.layout.status_fd(), self.status.clone()) {
            let s = cut_end(&s, self.layout.width.saturating_sub(self.col + 2));
            if s.is_empty() {
                return Ok(());
            }
            self.write_raw(fd, &format!("\x1b7 \x1b[2m{s}\x1b[0m\x1b8"))?;
            self.status_drawn = true;
        }
        Ok(())
    }

    /// Moves the cursor back to the first column of the tool-call region,
    /// to draw over it (each row drawn ends with an erase to its end, and
    /// the region never shrinks while it is open).
    fn rewind_region(&mut self) -> io::Result<()> {
        if let (Some(fd), rows @ 1..) = (self.layout.render, self.region_rows) {
            let up = if rows > 1 { format!("\x1b[{}A", rows - 1) } else { String::new() };
            self.put(fd, &format!("\r{up}"))?;
            self.region_rows = 0;
            self.at_line_start = true;
        }
        Ok(())
    }

    /// Erases the tool-call region from the terminal.
    fn erase_region(&mut self) -> io::Result<()> {
        if let (Some(fd), 1..) = (self.layout.render, self.region_rows) {
            self.rewind_region()?;
            self.put(fd, "\x1b[J")?;
        }
        Ok(())
    }

    /// Draws the open region, each call on one row cut to the width.
    fn draw_region(&mut self) -> io::Result<()> {
        let lines: Vec<String> = self.calls.iter().map(|c| self.call_line(c, Some(self.layout.width))).collect();
        let text = lines.join("\x1b[K\n") + "\x1b[K";
        self.text(&text)?;
        self.region_rows = lines.len();
        self.dirty = false;
        Ok(())
    }

    /// `[tool call] NAME ARGS [outcome]`; with `width`, on one row of at
    /// most `width - 1` columns (line breaks shown as spaces, the start of
    /// long arguments elided).
    fn call_line(&self, c: &Call, width: Option<usize>) -> String {
        let outcome = c.outcome.as_ref().map(|(code, s)| format!(" {}", self.styled(code, s))).unwrap_or_default();
        let label = self.styled("36", "[tool call] ");
        let Some(width) = width else {
            let name = self.styled("36;1", &format!("{} ", c.name));
            return format!("{label}{name}{}{outcome}", self.styled("36", &printable(&c.args, true)));
        };
        let room = width.saturating_sub(1 + "[tool call] ".len());
        let name = cut_end(&format!("{} ", c.name), room);
        let room = room.saturating_sub(name.width() + c.outcome.as_ref().map_or(0, |(_, s)| s.width() + 1));
        let args: String = c.args.chars().map(|ch| if ch.is_control() { ' ' } else { ch }).collect();
        let shown = if args.width() <= room { args } else { elide_start(&args, room) };
        let outcome = if room == 0 { String::new() } else { outcome };
        format!("{label}{}{}{outcome}", self.styled("36;1", &name), self.styled("36", &shown))
    }

    /// All calls of the region ended: print them whole, then the text held
    /// back while they streamed.
    fn commit_region(&mut self) -> io::Result<()> {
        if self.calls.is_empty() {
            return Ok(());
        }
        self.rewind_region()?;
        let end = if self.layout.render_tty() { "\x1b[K\n" } else { "\n" };
        let lines: Vec<String> = self.calls.iter().map(|c| self.call_line(c, None)).collect();
        self.calls.clear();
        for line in lines {
            self.text(&line)?;
            self.text(end)?;
        }
        let held = std::mem::take(&mut self.held);
        self.text(&held)
    }

    /// Renders one normalized event.
    pub fn event(&mut self, e: &StreamEvent<'_>) -> io::Result<()> {
        if self.layout.render.is_none() {
            return Ok(());
        }
        self.clear_status()?;
        match *e {
            StreamEvent::PartStart { part, kind: PartKind::ToolCall, .. } => {
                self.kinds.insert(part, PartKind::ToolCall);
                if self.calls.is_empty() {
                    self.newline()?;
                }
                self.calls.push(Call { part, name: String::new(), args: String::new(), open: true, outcome: None });
                self.dirty = true;
            }
            StreamEvent::PartStart { part, kind, provider_type, .. } => {
                self.kinds.insert(part, kind);
                let provider_type = printable(provider_type, false);
                let label = match kind {
                    PartKind::Reasoning => Some(("2", "[thinking] ".to_owned())),
                    PartKind::Refusal => Some(("31", "[refusal] ".to_owned())),
                    PartKind::Other => Some(("2", format!("[{provider_type}]\n"))),
                    // The bytes are not shown; an audio transcript follows as text.
                    PartKind::Media => Some(("2", format!("[{provider_type}] "))),
                    _ => None,
                };
                if let Some((code, label)) = label {
                    let label = self.styled(code, &label);
                    self.show_text(&label, true)?;
                }
            }
            StreamEvent::TextDelta { part, text } => {
                let text = printable(text, true);
                let s = match self.kinds.get(&part) {
                    Some(PartKind::Reasoning) => self.styled("2", &text),
                    _ => text.into_owned(),
                };
                self.show_text(&s, false)?;
            }
            StreamEvent::PartMetadata { part, key: "name", value } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.part == part) {
                    c.name = printable(value.as_str().unwrap_or("?"), false).into_owned();
                    self.dirty = true;
                }
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.part == part) {
                    c.args.push_str(json);
                    self.dirty = true;
                }
            }
            StreamEvent::PartEnd { part, kind, outcome, .. } => {
                let note = match outcome {
                    PartOutcome::InvalidArguments { error, .. } => {
                        Some(("31", format!("[invalid arguments: {}]", printable(error, false))))
                    }
                    PartOutcome::Incomplete => Some(("33", "[incomplete]".to_owned())),
                    _ => None,
                };
                if let Some(c) = self.calls.iter_mut().find(|c| c.part == part && c.open) {
                    c.open = false;
                    c.outcome = note;
                    self.dirty = true;
                    if self.calls.iter().all(|c| !c.open) {
                        self.commit_region()?;
                    }
                } else {
                    if let Some((code, s)) = note {
                        self.show_text("", true)?;
                        let s = self.styled(code, &s);
                        self.text(&s)?;
                    }
                    if kind != PartKind::Text {
                        self.show_text("", true)?;
                    }
                }
            }
            StreamEvent::TurnReset => {
                self.commit_region()?;
                self.newline()?;
                let s = self.styled("33", "[the answer restarted]\n");
                self.text(&s)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Text of a part: printed now, or held while tool calls stream;
    /// `line` starts it on a line of its own.
    fn show_text(&mut self, s: &str, line: bool) -> io::Result<()> {
        if !self.calls.is_empty() {
            if line && !self.held.is_empty() && !self.held.ends_with('\n') {
                self.held.push('\n');
            }
            self.held.push_str(s);
            return Ok(());
        }
        if line {
            self.newline()?;
        }
        self.text(s)
    }

    /// A line on standard output (a JSON Lines record, the message: JSON,
    /// written through [`json_printable`]).
    pub fn stdout_line(&mut self, line: &str) -> io::Result<()> {
        self.clear_status()?;
        let line = json_printable(line);
        self.put(Fd::Stdout, &line)?;
        self.put(Fd::Stdout, "\n")
    }

    /// A line on standard error (`ssefold fold: …`), on a line of its own
    /// when the render goes there too (to standard error, or to the
    /// terminal standard error also writes to). The line may quote the
    /// provider (an error's message): it is written through [`printable`].
    pub fn note(&mut self, line: &str) -> io::Result<()> {
        self.clear_status()?;
        let line = printable(line, true).into_owned();
        let line = line.as_str();
        let shared = match self.layout.render {
            Some(Fd::Stderr) => true,
            Some(Fd::Stdout) => self.layout.stdout_tty && self.layout.stderr_tty,
            None => false,
        };
        if shared {
            self.erase_region()?;
            self.newline()?;
            self.stdout.flush()?;
        }
        self.put(Fd::Stderr, line)?;
        self.put(Fd::Stderr, "\n")?;
        self.stderr.flush()?;
        if shared && self.layout.render_tty() && !self.calls.is_empty() {
            self.draw_region()?;
        }
        Ok(())
    }

    /// Brings the terminal up to date: the tool-call region (when it
    /// changed) and the status `status` (the spinner or the Esc hint).
    pub fn refresh(&mut self, status: Option<String>) -> io::Result<()> {
        let redraw = self.dirty && self.layout.render_tty() && !self.calls.is_empty();
        if !redraw && status == self.status && (self.status_drawn || status.is_none()) {
            return self.flush();
        }
        self.clear_status()?;
        if redraw {
            self.rewind_region()?;
            self.draw_region()?;
        }
        self.status = status;
        self.draw_status()?;
        self.flush()
    }

    /// Ends the render: the status erased, open tool calls printed, the
    /// cursor at the start of a line.
    pub fn finish(&mut self) -> io::Result<()> {
        self.clear_status()?;
        self.status = None;
        self.commit_region()?;
        self.newline()?;
        self.flush()
    }
}

/// The cursor's column after writing `s` from column `col` on a terminal
/// `width` columns wide (escape sequences take no room; long rows wrap).
fn column_after(mut col: usize, s: &str, width: usize) -> usize {
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\r' => col = 0,
            '\x1b' => {
                // CSI: parameters up to a final letter; else one character (ESC 7, ESC 8).
                if chars.next() == Some('[') {
                    for d in chars.by_ref() {
                        if d.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            c => {
                let w = c.width().unwrap_or(0);
                col = if col + w > width { w } else { col + w };
            }
        }
    }
    col
}

/// The start of `s` that fits in `cols` columns.
fn cut_end(s: &str, cols: usize) -> String {
    let mut used = 0;
    s.chars()
        .take_while(|ch| {
            used += ch.width().unwrap_or(0);
            used <= cols
        })
        .collect()
}

/// `…` and the end of `s`, in at most `cols` columns (empty when `cols` is 0).
fn elide_start(s: &str, cols: usize) -> String {
    if cols == 0 {
        return String::new();
    }
    let mut tail = Vec::new();
    let mut used = 1;
    for ch in s.chars().rev() {
        let w = ch.width().unwrap_or(0);
        if used + w > cols {
            break;
        }
        used += w;
        tail.push(ch);
    }
    std::iter::once('…').chain(tail.into_iter().rev()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    use ssefold::providers::{Provider, Stream};

    /// A writer whose bytes the test can read.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.borrow().clone()).unwrap()
        }
    }

    fn render(fixture: &str, layout: Layout) -> (String, String) {
        let (out, err) = (Shared::default(), Shared::default());
        let mut r = Renderer::new(Box::new(out.clone()), Box::new(err.clone()), layout);
        let bytes = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(fixture)).unwrap();
        let mut s = Stream::new(Provider::Auto);
        // Byte by byte: the render is refreshed between every event.
        for b in bytes.chunks(1) {
            s.feed(b, |e| r.event(e).unwrap()).unwrap();
            r.refresh(None).unwrap();
        }
        s.finish(|e| r.event(e).unwrap()).unwrap();
        r.finish().unwrap();
        (out.text(), err.text())
    }

    const PIPE: Layout = Layout { render: Some(Fd::Stderr), stdout_tty: false, stderr_tty: false, width: 80 };

    #[test]
    fn parallel_tool_calls_are_one_line_each() {
        let (out, err) = render("tests/fixtures/openai_chat/parallel_tools.sse", PIPE);
        assert_eq!(out, "");
        let calls: Vec<&str> = err.lines().filter(|l| l.starts_with("[tool call]")).collect();
        assert_eq!(calls.len(), 2, "{err}");
        for line in &calls {
            let args = line.splitn(4, ' ').nth(3).unwrap();
            serde_json::from_str::<serde_json::Value>(args).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
        assert!(!err.contains('\x1b'), "no escapes off a terminal: {err:?}");
    }

    #[test]
    fn on_a_terminal_calls_are_redrawn_in_place_on_rows_of_their_own() {
        let tty = Layout { render: Some(Fd::Stdout), stdout_tty: true, stderr_tty: true, width: 40 };
        let (out, _) = render("tests/fixtures/openai_chat/parallel_tools.sse", tty);
        // Every redraw goes back to the region's first row (one row up for
        // two calls) and draws over it; no live row is wider than 39.
        let last = out.rfind("\r\x1b[1A").unwrap();
        assert!(out[..last].contains("\r\x1b[1A"), "redrawn more than once: {out:?}");
        for frame in out[..last].split('\r') {
            for row in frame.split('\n') {
                let plain = strip(row);
                assert!(plain.width() < 40, "{plain:?}");
            }
        }
        // The final lines are whole, each erasing what the live row left.
        let tail = &out[last..];
        let calls: Vec<String> = tail.split("\x1b[K\n").map(strip).filter(|l| l.contains("[tool call]")).collect();
        assert_eq!(calls.len(), 2, "{tail:?}");
        assert!(calls.iter().all(|c| c.ends_with('}')), "{calls:?}");
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() || d == '7' || d == '8' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn the_column_is_tracked_through_escapes_wide_chars_and_wrapping() {
        assert_eq!(column_after(0, "ab\x1b[36;1mc\x1b[0m", 80), 3);
        assert_eq!(column_after(5, "x\nab", 80), 2);
        assert_eq!(column_after(0, "漢字", 80), 4);
        assert_eq!(column_after(0, &"a".repeat(85), 80), 5);
        assert_eq!(column_after(3, "\x1b7 x\x1b8\r", 80), 0);
    }

    #[test]
    fn a_note_starts_a_line_of_its_own_in_the_render_it_shares() {
        let (out, err) = (Shared::default(), Shared::default());
        let mut r = Renderer::new(Box::new(out.clone()), Box::new(err.clone()), PIPE);
        let start = StreamEvent::PartStart {
            part: 0,
            kind: PartKind::Text,
            choice: 0,
            index: 0,
            provider_type: "text",
            tool_call: None,
        };
        r.event(&start).unwrap();
        r.event(&StreamEvent::TextDelta { part: 0, text: "half a" }).unwrap();
        r.note("ssefold fold: warning x: y").unwrap();
        r.event(&StreamEvent::TextDelta { part: 0, text: " line" }).unwrap();
        r.finish().unwrap();
        assert_eq!(err.text(), "half a\nssefold fold: warning x: y\n line\n");
        assert_eq!(out.text(), "");
    }

    #[test]
    fn long_lines_are_cut_to_the_width() {
        assert_eq!(cut_end("ab漢c", 3), "ab");
        assert_eq!(elide_start("abcdef", 4), "…def");
        assert_eq!(elide_start("ab漢", 3), "…漢");
        assert_eq!(elide_start("abc", 0), "");
    }

    #[test]
    fn the_status_is_drawn_after_the_cursor_and_erased_before_output() {
        let tty = Layout { render: Some(Fd::Stdout), stdout_tty: true, stderr_tty: true, width: 80 };
        let (out, err) = (Shared::default(), Shared::default());
        let mut r = Renderer::new(Box::new(out.clone()), Box::new(err.clone()), tty);
        r.set_raw(true);
        r.refresh(Some("⠋".into())).unwrap();
        r.refresh(Some("⠋".into())).unwrap();
        assert_eq!(out.text(), "\x1b7 \x1b[2m⠋\x1b[0m\x1b8", "drawn once");
        r.note("ssefold fold: warning x: y").unwrap();
        assert_eq!(err.text(), "ssefold fold: warning x: y\r\n", "raw mode: CR LF");
        assert!(out.text().ends_with("\x1b8\x1b[K"));
    }

    /// An Anthropic stream whose text, thinking, tool name, tool arguments
    /// and error try to drive the terminal: OSC 0 (title), OSC 52
    /// (clipboard), CSI 2J (clear), a C1 CSI, BEL, a lone CR, backspace
    /// (`cli/tests/fixtures/hostile_terminal.sse`, which `cli_escapes` runs
    /// through the binary).
    const HOSTILE_STREAM: &[u8] = include_bytes!("../tests/fixtures/hostile_terminal.sse");

    fn render_bytes(bytes: &[u8], layout: Layout) -> (String, String) {
        let (out, err) = (Shared::default(), Shared::default());
        let mut r = Renderer::new(Box::new(out.clone()), Box::new(err.clone()), layout);
        let mut s = Stream::new(Provider::Auto);
        for b in bytes.chunks(7) {
            let _ = s.feed(b, |e| r.event(e).unwrap());
            r.refresh(Some("⠋".into())).unwrap();
        }
        r.note("ssefold fold: provider error api_error: boom \x1b]0;err\x07 \u{9d}52;c;QQ==\u{9c}").unwrap();
        r.finish().unwrap();
        (out.text(), err.text())
    }

    /// The escape sequences the render itself writes: SGR, cursor up, erase
    /// line, erase below, save and restore the cursor.
    fn only_own_escapes(s: &str) -> Result<(), String> {
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '\x1b' => match chars.next() {
                    Some((_, '7' | '8')) => {}
                    Some((_, '[')) => {
                        let mut params = String::new();
                        let end = loop {
                            match chars.next() {
                                Some((_, d)) if d.is_ascii_digit() || d == ';' => params.push(d),
                                Some((_, d)) => break d,
                                None => return Err(format!("an unfinished CSI at {i}")),
                            }
                        };
                        let ok = match end {
                            'm' => true,
                            'A' => !params.is_empty() && !params.contains(';'),
                            'K' | 'J' => params.is_empty(),
                            _ => false,
                        };
                        if !ok {
                            return Err(format!("a foreign CSI {params:?} {end:?} at {i}: {:?}", &s[i..]));
                        }
                    }
                    other => return Err(format!("a foreign escape {other:?} at {i}: {:?}", &s[i..])),
                },
                '\n' | '\r' | '\t' => {}
                c if c.is_control() => return Err(format!("control {c:?} at {i}: {:?}", &s[i..])),
                _ => {}
            }
        }
        Ok(())
    }

    #[test]
    fn provider_text_names_arguments_and_errors_cannot_drive_the_terminal() {
        let tty = Layout { render: Some(Fd::Stdout), stdout_tty: true, stderr_tty: true, width: 60 };
        let (out, err) = render_bytes(HOSTILE_STREAM, tty);
        only_own_escapes(&out).unwrap();
        only_own_escapes(&err).unwrap();
        let plain = strip(&out);
        for shown in [
            r"think \u{9b}2J\u{7}",
            r"a\u{1b}]0;pwned\u{7}b\u{1b}]52;c;ZXZpbA==\u{7}c\u{1b}[2Jd\u{d}fake\u{8}\u{7f}",
            "line\tend\n",
            r"[tool call] evil\u{1b}]0;name\u{7}\u{a} {",
            r#""a": "\u{1b}]52;c;QQ==\u{7}\u{1b}[2J"}"#,
        ] {
            assert!(plain.contains(shown), "{shown:?} not shown in {plain:?}");
        }
        assert!(err.contains(r"boom \u{1b}]0;err\u{7} \u{9d}52;c;QQ==\u{9c}"), "{err:?}");
        // Off a terminal: no escapes at all, the same visible text.
        let (out, err) = render_bytes(HOSTILE_STREAM, PIPE);
        assert_eq!(out, "");
        assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
        assert!(err.contains(r"a\u{1b}]0;pwned\u{7}b"), "{err:?}");
    }

    #[test]
    fn printable_escapes_controls_and_keeps_line_breaks_in_text() {
        assert!(matches!(printable("plain text\n\tindented", true), Cow::Borrowed(_)));
        assert_eq!(printable("a\r\nb\rc\r", true), "a\nb\\u{d}c");
        assert_eq!(printable("a\nb\tc", false), r"a\u{a}b\u{9}c");
        assert_eq!(printable("\u{1b}[2J\u{9b}\u{7f}", true), r"\u{1b}[2J\u{9b}\u{7f}");
        assert_eq!(json_printable("{\"a\":\"x\u{9b}y\u{7f}\"}"), r#"{"a":"x\u009by\u007f"}"#);
        let v: serde_json::Value = serde_json::from_str(&json_printable("\"\u{9d}\"")).unwrap();
        assert_eq!(v, "\u{9d}");
    }
}
