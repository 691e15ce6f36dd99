//! Warnings aggregated by code: the first few of each code are shown, the
//! rest only counted, and a summary line per code reports the count at the
//! end. A stream that repeats one problem on every event (hundreds of
//! thousands of times on a large input) prints a bounded number of lines.

/// How many warnings of one code are shown in full.
pub const SHOWN_PER_CODE: u64 = 3;

/// Counts of warnings by code, in the order the codes first appeared.
#[derive(Debug, Default)]
pub struct Warnings {
    counts: Vec<(String, u64)>,
}

impl Warnings {
    /// Counts one warning of `code`; returns whether to show it (the first
    /// [`SHOWN_PER_CODE`] of each code).
    pub fn note(&mut self, code: &str) -> bool {
        let n = match self.counts.iter_mut().find(|(c, _)| c == code) {
            Some((_, n)) => n,
            None => {
                self.counts.push((code.to_owned(), 0));
                &mut self.counts.last_mut().expect("just pushed").1
            }
        };
        *n += 1;
        *n <= SHOWN_PER_CODE
    }

    /// One line per code some of whose warnings were not shown:
    /// `CODE: N in all (M not shown)`.
    pub fn summary(&self) -> Vec<String> {
        self.counts
            .iter()
            .filter(|(_, n)| *n > SHOWN_PER_CODE)
            .map(|(code, n)| format!("{code}: {n} in all ({} not shown)", n - SHOWN_PER_CODE))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_few_of_each_code_are_shown_then_counted() {
        let mut w = Warnings::default();
        let shown: Vec<bool> = (0..5).map(|_| w.note("invalid_event")).collect();
        assert_eq!(shown, [true, true, true, false, false]);
        assert!(w.note("data_after_terminal"));
        for _ in 0..373_000 {
            w.note("data_after_terminal");
        }
        assert_eq!(
            w.summary(),
            ["invalid_event: 5 in all (2 not shown)", "data_after_terminal: 373001 in all (372998 not shown)"]
        );
    }

    #[test]
    fn no_summary_when_everything_was_shown() {
        let mut w = Warnings::default();
        for _ in 0..SHOWN_PER_CODE {
            assert!(w.note("a"));
        }
        assert!(w.summary().is_empty());
    }
}
