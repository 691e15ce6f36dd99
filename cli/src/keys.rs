//! Keys from the terminal while a stream runs: raw mode (crossterm) for as
//! long as a [`Keys`] lives, restored when it is dropped (also on panic).
//! crossterm reads the keys from standard input when it is a terminal and
//! from `/dev/tty` otherwise, so a stream piped into standard input and the
//! keys typed on the terminal do not mix.

use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::terminal;

/// A key that matters to `fold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Esc.
    Esc,
    /// Ctrl-C (raw mode turns it into a key instead of SIGINT).
    Interrupt,
}

/// The terminal in raw mode, reading keys. See the module docs.
#[derive(Debug)]
pub struct Keys(());

impl Keys {
    /// Puts the terminal in raw mode; `None` when there is no terminal to
    /// read keys from (or it refused).
    pub fn enable() -> Option<Keys> {
        terminal::enable_raw_mode().ok()?;
        Some(Keys(()))
    }

    /// The keys pressed since the last call, without waiting.
    pub fn pressed(&mut self) -> Vec<Key> {
        let mut keys = Vec::new();
        while event::poll(Duration::ZERO).unwrap_or(false) {
            let k = match event::read() {
                Ok(Event::Key(k)) => k,
                Ok(_) => continue,
                Err(_) => break,
            };
            if k.kind != KeyEventKind::Press {
                continue;
            }
            match k.code {
                KeyCode::Esc => keys.push(Key::Esc),
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => keys.push(Key::Interrupt),
                _ => {}
            }
        }
        keys
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

/// The terminal's width in columns (80 when it cannot be told or says 0).
pub fn width() -> usize {
    match terminal::size() {
        Ok((cols @ 1.., _)) => usize::from(cols).max(20),
        _ => 80,
    }
}
