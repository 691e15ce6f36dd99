//! The interactive touches on a terminal, as pure state machines over a
//! clock the caller supplies (milliseconds since any fixed start): the
//! braille spinner shown while nothing arrives, and double-Esc to cancel.
//!
//! Nothing here reads a clock, a key or a terminal: `fold` feeds the key
//! presses and the time, and draws what these return.

/// The spinner's frames, one every [`FRAME_MS`].
pub const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// How long one spinner frame stays.
pub const FRAME_MS: u64 = 80;

/// How long the stream must be quiet before the spinner shows: output
/// arriving faster than this is not interrupted by a flickering spinner.
pub const QUIET_MS: u64 = 120;

/// How long the first Esc waits for the second.
pub const CONFIRM_MS: u64 = 1000;

/// The spinner: shown while waiting for the first byte and whenever the
/// stream has been quiet for [`QUIET_MS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spinner {
    /// When something last arrived (or the wait began).
    last_activity: u64,
    /// Nothing has arrived yet: the spinner shows at once.
    waiting_first: bool,
}

impl Spinner {
    /// A spinner waiting for the first byte since `now`.
    pub fn new(now: u64) -> Self {
        Spinner { last_activity: now, waiting_first: true }
    }

    /// Something arrived at `now` (bytes or an event): the spinner hides
    /// until the stream is quiet again.
    pub fn activity(&mut self, now: u64) {
        self.last_activity = now;
        self.waiting_first = false;
    }

    /// The frame to show at `now`, or `None` while output is flowing. The
    /// frame depends only on the time since the quiet began, so redrawing
    /// at any rate shows a steady animation.
    pub fn frame(&self, now: u64) -> Option<char> {
        let quiet = now.saturating_sub(self.last_activity);
        if !self.waiting_first && quiet < QUIET_MS {
            return None;
        }
        let since = if self.waiting_first { quiet } else { quiet - QUIET_MS };
        Some(FRAMES[(since / FRAME_MS) as usize % FRAMES.len()])
    }
}

/// What an Esc press asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscAction {
    /// The first Esc: ask for confirmation (show a hint for [`CONFIRM_MS`]).
    Confirm,
    /// The second Esc within [`CONFIRM_MS`]: abort the turn.
    Abort,
}

/// Double-Esc to cancel: the first press arms for [`CONFIRM_MS`], a second
/// press while armed aborts; once the time passes, the next press arms again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EscGate {
    armed_at: Option<u64>,
}

impl EscGate {
    /// Esc was pressed at `now`.
    pub fn press(&mut self, now: u64) -> EscAction {
        match self.armed_at {
            Some(t) if now.saturating_sub(t) < CONFIRM_MS => {
                self.armed_at = None;
                EscAction::Abort
            }
            _ => {
                self.armed_at = Some(now);
                EscAction::Confirm
            }
        }
    }

    /// Whether the confirmation is pending at `now` (its hint shows).
    pub fn is_armed(&self, now: u64) -> bool {
        self.armed_at.is_some_and(|t| now.saturating_sub(t) < CONFIRM_MS)
    }
}

/// The status shown after the cursor at `now`: the Esc hint while armed
/// (its first words say it all when the row has room for no more), else
/// the spinner's frame, else nothing.
pub fn status(spinner: &Spinner, esc: &EscGate, now: u64) -> Option<String> {
    if esc.is_armed(now) {
        return Some("Esc again to stop".to_owned());
    }
    spinner.frame(now).map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spinner_turns_while_waiting_for_the_first_byte() {
        let s = Spinner::new(1000);
        let frames: Vec<char> = (0..12).map(|i| s.frame(1000 + i * FRAME_MS).unwrap()).collect();
        assert_eq!(frames[..10], FRAMES);
        assert_eq!(frames[10..], FRAMES[..2], "it wraps around");
        assert_eq!(s.frame(1000 + FRAME_MS - 1), Some(FRAMES[0]));
    }

    #[test]
    fn the_spinner_hides_while_output_flows_and_returns_when_quiet() {
        let mut s = Spinner::new(0);
        s.activity(500);
        assert_eq!(s.frame(500), None);
        assert_eq!(s.frame(500 + QUIET_MS - 1), None);
        assert_eq!(s.frame(500 + QUIET_MS), Some(FRAMES[0]));
        assert_eq!(s.frame(500 + QUIET_MS + FRAME_MS), Some(FRAMES[1]));
        s.activity(2000);
        assert_eq!(s.frame(2001), None);
        // A clock that goes backwards does not panic.
        assert_eq!(s.frame(0), None);
    }

    #[test]
    fn double_esc_within_a_second_aborts() {
        let mut g = EscGate::default();
        assert!(!g.is_armed(0));
        assert_eq!(g.press(100), EscAction::Confirm);
        assert!(g.is_armed(100 + CONFIRM_MS - 1));
        assert_eq!(g.press(100 + CONFIRM_MS - 1), EscAction::Abort);
        assert!(!g.is_armed(100 + CONFIRM_MS - 1), "disarmed after the abort");
    }

    #[test]
    fn an_esc_after_the_confirmation_expired_asks_again() {
        let mut g = EscGate::default();
        assert_eq!(g.press(0), EscAction::Confirm);
        assert!(!g.is_armed(CONFIRM_MS));
        assert_eq!(g.press(CONFIRM_MS), EscAction::Confirm);
        assert_eq!(g.press(CONFIRM_MS + 10), EscAction::Abort);
    }

    #[test]
    fn the_status_is_the_hint_then_the_spinner() {
        let s = Spinner::new(0);
        let mut g = EscGate::default();
        assert_eq!(status(&s, &g, 0).as_deref(), Some("⠋"));
        g.press(10);
        assert_eq!(status(&s, &g, 20).as_deref(), Some("Esc again to stop"));
        assert_eq!(status(&s, &g, 10 + CONFIRM_MS).as_deref(), Some(FRAMES[12 % 10].to_string().as_str()));
        let mut flowing = Spinner::new(0);
        flowing.activity(5);
        assert_eq!(status(&flowing, &EscGate::default(), 6), None);
    }
}
