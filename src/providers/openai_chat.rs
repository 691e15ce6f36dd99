//! stub
use super::{Shared, Sink, StreamError};
use crate::sse::Event;
use serde_json::Value;
/// stub
#[derive(Debug, Default)]
pub struct ChatFold;
impl ChatFold {
    pub(crate) fn on_event(&mut self, _e: &Event<'_>, _s: &mut Shared, _k: &mut Sink<'_>) -> Result<(), StreamError> { Ok(()) }
    pub(crate) fn finish(&mut self, _k: &mut Sink<'_>) -> Result<(), StreamError> { Ok(()) }
    pub(crate) fn message(&self) -> Value { Value::Null }
    pub(crate) fn is_terminated(&self) -> bool { false }
    pub(crate) fn footprint(&self) -> usize { 0 }
}
