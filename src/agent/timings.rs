//! The turn's timings, from the host's clock: time to first content, the
//! gaps between contents, output tokens per second, the attempts. Kept in
//! constant memory (a log-bucket histogram of the gaps) however long the
//! answer streams.

use serde_json::{json, Value};

/// How one attempt (one request sent, or one reconnection) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// When its request was sent or its connection opened (host ms).
    pub started_ms: u64,
    /// When it ended (host ms), once it did.
    pub ended_ms: Option<u64>,
    /// How it ended: a [`crate::reconnect::StreamEnd`] wire name
    /// (`completed`, `ended_early`, `transport_error`, `idle_timeout`,
    /// `provider_error`, `aborted`, `http_status`), `open` while it runs.
    pub outcome: &'static str,
    /// The HTTP status of a refused response.
    pub status: Option<u16>,
}

/// Median, 95th percentile and largest gap between contents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GapStats {
    /// Number of gaps measured (content-bearing inputs after the first).
    pub count: u64,
    /// The median gap in ms (exact up to 32 gaps; beyond, within 1/32 of
    /// the value above 32 ms, exact below).
    pub median_ms: u64,
    /// The 95th percentile gap in ms (same precision).
    pub p95_ms: u64,
    /// The largest gap in ms (exact).
    pub max_ms: u64,
}

/// The timings of a turn (all times in the host's milliseconds).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnTimings {
    /// When the first request was sent (or, if the host did not say, its
    /// first connection opened).
    pub started_ms: Option<u64>,
    /// Time from `started_ms` to the first content.
    pub time_to_first_content_ms: Option<u64>,
    /// The gaps between consecutive host inputs that carried content.
    pub content_gaps: GapStats,
    /// Time from `started_ms` to the end of the stream.
    pub duration_ms: Option<u64>,
    /// Output tokens (from the provider's usage, when it sent any).
    pub output_tokens: Option<u64>,
    /// Input tokens (from the provider's usage, when it sent any).
    pub input_tokens: Option<u64>,
    /// `output_tokens` over the time from the first content to the end of
    /// the stream, per second (`None` without usage or when that time is 0).
    pub output_tokens_per_second: Option<f64>,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
}

impl TurnTimings {
    /// The JSON form (the names of the fields above).
    pub fn to_json(&self) -> Value {
        json!({
            "started_ms": self.started_ms,
            "time_to_first_content_ms": self.time_to_first_content_ms,
            "content_gaps": {
                "count": self.content_gaps.count,
                "median_ms": self.content_gaps.median_ms,
                "p95_ms": self.content_gaps.p95_ms,
                "max_ms": self.content_gaps.max_ms,
            },
            "duration_ms": self.duration_ms,
            "output_tokens": self.output_tokens,
            "input_tokens": self.input_tokens,
            "output_tokens_per_second": self.output_tokens_per_second,
            "attempts": self.attempts.iter().map(|a| json!({
                "started_ms": a.started_ms,
                "ended_ms": a.ended_ms,
                "outcome": a.outcome,
                "status": a.status,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Values below this are counted exactly.
const LINEAR: u64 = 32;
/// Buckets per power of two above [`LINEAR`].
const SUB: u64 = 16;
const BUCKETS: usize = (LINEAR + (64 - 5) * SUB) as usize;

/// The gaps of a turn: the first [`EXACT`] kept as they are (quantiles
/// exact, no allocation for a short answer), then a histogram, exact below
/// 32 ms and 16 buckets per power of two above (a bucket's value is its
/// middle: within 1/32).
#[derive(Debug, Clone, Default)]
pub(crate) struct GapHistogram {
    exact: [u64; EXACT],
    /// Allocated when the gaps outgrow `exact` (they are moved into it).
    counts: Option<Box<[u32; BUCKETS]>>,
    count: u64,
    max: u64,
}

/// Gaps kept exactly before the histogram takes over.
const EXACT: usize = 32;

impl GapHistogram {
    fn bucket(v: u64) -> usize {
        if v < LINEAR {
            return v as usize;
        }
        let e = 63 - u64::from(v.leading_zeros()); // >= 5
        let sub = (v >> (e - 4)) & (SUB - 1);
        (LINEAR + (e - 5) * SUB + sub) as usize
    }

    /// The middle of bucket `b`.
    fn value(b: usize) -> u64 {
        let b = b as u64;
        if b < LINEAR {
            return b;
        }
        let e = (b - LINEAR) / SUB + 5;
        let sub = (b - LINEAR) % SUB;
        let width = 1u64 << (e - 4);
        let low = (1u64 << e) + sub * width;
        low + width / 2
    }

    pub(crate) fn record(&mut self, v: u64) {
        let n = self.count as usize;
        self.count += 1;
        self.max = self.max.max(v);
        if n < EXACT {
            self.exact[n] = v;
            return;
        }
        let counts = self.counts.get_or_insert_with(|| {
            let mut counts = Box::new([0u32; BUCKETS]);
            for &g in &self.exact {
                counts[Self::bucket(g)] += 1;
            }
            counts
        });
        let b = Self::bucket(v);
        counts[b] = counts[b].saturating_add(1);
    }

    /// The value at quantile `q` (nearest rank), capped at the exact max.
    fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let Some(counts) = self.counts.as_deref() else {
            let mut gaps = self.exact;
            let gaps = &mut gaps[..self.count as usize];
            gaps.sort_unstable();
            return gaps[rank as usize - 1];
        };
        let mut seen = 0u64;
        for (b, &c) in counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return Self::value(b).min(self.max);
            }
        }
        self.max
    }

    pub(crate) fn stats(&self) -> GapStats {
        GapStats { count: self.count, median_ms: self.quantile(0.5), p95_ms: self.quantile(0.95), max_ms: self.max }
    }
}

/// Input and output tokens of a usage object of any dialect: Anthropic and
/// Responses (`input_tokens`, `output_tokens`), Chat (`prompt_tokens`,
/// `completion_tokens`), Gemini (`promptTokenCount`, `candidatesTokenCount`
/// plus `thoughtsTokenCount`), Ollama (`prompt_eval_count`, `eval_count`),
/// Converse (`inputTokens`, `outputTokens`).
pub(crate) fn usage_tokens(usage: &Value) -> (Option<u64>, Option<u64>) {
    let get = |k: &str| usage.get(k).and_then(Value::as_u64);
    let input = ["input_tokens", "prompt_tokens", "promptTokenCount", "prompt_eval_count", "inputTokens"]
        .into_iter()
        .find_map(get);
    let output = ["output_tokens", "completion_tokens", "eval_count", "outputTokens"]
        .into_iter()
        .find_map(get)
        .or_else(|| match (get("candidatesTokenCount"), get("thoughtsTokenCount")) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        });
    (input, output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_exact_below_32_and_within_a_32nd_above() {
        for v in (0..5000u64).chain([1 << 20, (1 << 40) + 12345, u64::MAX]) {
            let mid = GapHistogram::value(GapHistogram::bucket(v));
            if v < 32 {
                assert_eq!(mid, v);
            } else {
                let err = mid.abs_diff(v) as f64 / v as f64;
                assert!(err <= 1.0 / 32.0 + 1e-12, "{v} -> {mid}");
            }
        }
    }

    #[test]
    fn a_short_answer_has_exact_quantiles_and_a_long_one_close_ones() {
        let mut h = GapHistogram::default();
        for v in [500, 3, 40, 41, 7] {
            h.record(v);
        }
        assert_eq!(h.stats(), GapStats { count: 5, median_ms: 40, p95_ms: 500, max_ms: 500 });
        assert!(h.counts.is_none(), "no histogram for a short answer");
        let mut h = GapHistogram::default();
        for v in (0..10_000u64).map(|i| (i * 7919) % 1000) {
            h.record(v);
        }
        let s = h.stats();
        assert!(s.median_ms.abs_diff(500) <= 16 && s.p95_ms.abs_diff(950) <= 30, "{s:?}");
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut h = GapHistogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        let s = h.stats();
        assert_eq!(s.count, 100);
        assert_eq!(s.max_ms, 100);
        assert!(s.median_ms.abs_diff(50) <= 2, "{s:?}");
        assert!(s.p95_ms.abs_diff(95) <= 3, "{s:?}");
        assert_eq!(GapHistogram::default().stats(), GapStats::default());
    }

    #[test]
    fn usage_of_every_dialect() {
        let rows = [
            (json!({"input_tokens": 3, "output_tokens": 5}), (Some(3), Some(5))),
            (json!({"prompt_tokens": 3, "completion_tokens": 5}), (Some(3), Some(5))),
            (json!({"promptTokenCount": 3, "candidatesTokenCount": 4, "thoughtsTokenCount": 1}), (Some(3), Some(5))),
            (json!({"prompt_eval_count": 3, "eval_count": 5}), (Some(3), Some(5))),
            (json!({"inputTokens": 3, "outputTokens": 5}), (Some(3), Some(5))),
            (json!({}), (None, None)),
        ];
        for (u, want) in rows {
            assert_eq!(usage_tokens(&u), want, "{u}");
        }
    }
}
