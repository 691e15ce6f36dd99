//! Incremental partial JSON (see issue 3). Filled in by the partial-JSON work.
