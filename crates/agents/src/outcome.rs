//! What a tool call produced, typed, so "the lookup failed" can never be
//! read as "it does not exist".
//!
//! A failed order lookup means *existence unknown*, not *not found*; a failed
//! policy search means *unanswered*, not *no rule*. The model sees the
//! difference as an explicit `"outcome"` field, the transcript stores it on
//! the tool message, and the event log records it.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Where a piece of evidence came from, so a conclusion can cite it and a
/// person can check it. A citation does not prove an interpretation right; it
/// lets someone verify it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Stable reference, e.g. `order:4821` or `returns-policy:section-3`.
    pub source: String,
    /// Human-readable title of the source document or record.
    pub title: String,
    /// Section within the source, where it has sections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Version of the source that was read (a policy version, a record's
    /// update timestamp), so the evidence can be revalidated later.
    pub version: String,
    /// The exact passage relied on, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// What a [`Tool`](crate::Tool) returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The lookup succeeded and found this, from these sources.
    Found {
        value: Value,
        provenance: Vec<Provenance>,
    },
    /// The lookup succeeded and there is no such thing (or none the caller
    /// may see).
    NotFound { what: String },
    /// The lookup itself failed (timeout, error): nothing is known either way.
    Unknown { reason: String },
    /// The model's arguments were unusable; it may correct them and retry.
    InvalidArguments { message: String },
    /// The call was not allowed: a tool the agent does not have, an unlisted
    /// handoff, or a tool's own permission check.
    Refused { reason: String },
}

impl ToolOutcome {
    /// Shorthand for [`ToolOutcome::Found`].
    #[must_use]
    pub fn found(value: Value, provenance: Vec<Provenance>) -> Self {
        Self::Found { value, provenance }
    }

    /// Shorthand for [`ToolOutcome::NotFound`].
    #[must_use]
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound { what: what.into() }
    }

    /// Shorthand for [`ToolOutcome::Unknown`].
    #[must_use]
    pub fn unknown(reason: impl Into<String>) -> Self {
        Self::Unknown {
            reason: reason.into(),
        }
    }

    /// Shorthand for [`ToolOutcome::InvalidArguments`].
    #[must_use]
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::InvalidArguments {
            message: message.into(),
        }
    }

    /// Shorthand for [`ToolOutcome::Refused`].
    #[must_use]
    pub fn refused(reason: impl Into<String>) -> Self {
        Self::Refused {
            reason: reason.into(),
        }
    }

    /// Which outcome this is.
    #[must_use]
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Self::Found { .. } => OutcomeKind::Found,
            Self::NotFound { .. } => OutcomeKind::NotFound,
            Self::Unknown { .. } => OutcomeKind::Unknown,
            Self::InvalidArguments { .. } => OutcomeKind::InvalidArguments,
            Self::Refused { .. } => OutcomeKind::Refused,
        }
    }

    /// The `source` of each provenance entry (empty unless `Found`).
    #[must_use]
    pub fn sources(&self) -> Vec<String> {
        match self {
            Self::Found { provenance, .. } => {
                provenance.iter().map(|item| item.source.clone()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The JSON the model reads as the tool result. Besides the explicit
    /// `"outcome"`, not-found and unknown carry a one-line `"meaning"`: models
    /// otherwise tend to read a failed lookup as an empty one.
    #[must_use]
    pub fn to_model_json(&self) -> Value {
        match self {
            Self::Found { value, provenance } => json!({
                "outcome": "found",
                "value": value,
                "provenance": provenance,
            }),
            Self::NotFound { what } => json!({
                "outcome": "not_found",
                "what": what,
                "meaning": "The lookup worked and found nothing.",
            }),
            Self::Unknown { reason } => json!({
                "outcome": "unknown",
                "reason": reason,
                "meaning": "The lookup failed, so nothing is known either way; do not treat this as not found.",
            }),
            Self::InvalidArguments { message } => json!({
                "outcome": "invalid_arguments",
                "message": message,
            }),
            Self::Refused { reason } => json!({
                "outcome": "refused",
                "reason": reason,
            }),
        }
    }
}

/// The kind of result a tool message carries: the tool outcomes plus the two
/// the runtime itself produces (a handoff, a call cancelled by Stop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Found,
    NotFound,
    Unknown,
    InvalidArguments,
    Refused,
    /// An accepted handoff.
    HandedOff,
    /// The call never finished: Stop landed, or the turn ended first.
    Cancelled,
}

impl OutcomeKind {
    /// The snake_case name used in JSON and events.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Found => "found",
            Self::NotFound => "not_found",
            Self::Unknown => "unknown",
            Self::InvalidArguments => "invalid_arguments",
            Self::Refused => "refused",
            Self::HandedOff => "handed_off",
            Self::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
