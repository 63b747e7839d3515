//! A proposal's status as one word: for storage columns, filters and the UI.
//! The full state (with its data) is [`super::ProposalState`].

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    AwaitingApproval,
    Approved,
    Executing,
    OutcomeUnknown,
    Succeeded,
    Verified,
    Failed,
    Rejected,
    Expired,
    Invalidated,
    Superseded,
    NeedsAttention,
}

impl ProposalStatus {
    pub const ALL: [ProposalStatus; 12] = [
        ProposalStatus::AwaitingApproval,
        ProposalStatus::Approved,
        ProposalStatus::Executing,
        ProposalStatus::OutcomeUnknown,
        ProposalStatus::Succeeded,
        ProposalStatus::Verified,
        ProposalStatus::Failed,
        ProposalStatus::Rejected,
        ProposalStatus::Expired,
        ProposalStatus::Invalidated,
        ProposalStatus::Superseded,
        ProposalStatus::NeedsAttention,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::AwaitingApproval => "awaiting_approval",
            ProposalStatus::Approved => "approved",
            ProposalStatus::Executing => "executing",
            ProposalStatus::OutcomeUnknown => "outcome_unknown",
            ProposalStatus::Succeeded => "succeeded",
            ProposalStatus::Verified => "verified",
            ProposalStatus::Failed => "failed",
            ProposalStatus::Rejected => "rejected",
            ProposalStatus::Expired => "expired",
            ProposalStatus::Invalidated => "invalidated",
            ProposalStatus::Superseded => "superseded",
            ProposalStatus::NeedsAttention => "needs_attention",
        }
    }

    /// Words for a person, e.g. in a status badge.
    pub fn label(self) -> &'static str {
        match self {
            ProposalStatus::AwaitingApproval => "Awaiting approval",
            ProposalStatus::Approved => "Approved",
            ProposalStatus::Executing => "Executing",
            ProposalStatus::OutcomeUnknown => "Outcome unknown: checking with the provider",
            ProposalStatus::Succeeded => "Refunded, verifying",
            ProposalStatus::Verified => "Refunded and verified",
            ProposalStatus::Failed => "Failed",
            ProposalStatus::Rejected => "Rejected",
            ProposalStatus::Expired => "Expired",
            ProposalStatus::Invalidated => "Invalidated",
            ProposalStatus::Superseded => "Superseded",
            ProposalStatus::NeedsAttention => "Needs a person's attention",
        }
    }

    /// Terminal statuses accept no command at all. `needs_attention` is not
    /// terminal, but only a person's resolution moves it; `succeeded` is not
    /// terminal because a refund is not done until it is verified.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ProposalStatus::Verified
                | ProposalStatus::Failed
                | ProposalStatus::Rejected
                | ProposalStatus::Expired
                | ProposalStatus::Invalidated
                | ProposalStatus::Superseded
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown proposal status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for ProposalStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProposalStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_owned()))
    }
}

impl fmt::Display for ProposalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_status_parses_from_its_own_name_and_serialises_to_it() {
        for status in ProposalStatus::ALL {
            assert_eq!(status.as_str().parse::<ProposalStatus>().unwrap(), status);
            assert_eq!(
                serde_json::to_string(&status).unwrap(),
                format!("\"{}\"", status.as_str())
            );
        }
        assert!("AWAITING".parse::<ProposalStatus>().is_err());
    }

    #[test]
    fn exactly_six_statuses_are_terminal() {
        let terminal: Vec<&str> = ProposalStatus::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .map(ProposalStatus::as_str)
            .collect();
        assert_eq!(
            terminal,
            [
                "verified",
                "failed",
                "rejected",
                "expired",
                "invalidated",
                "superseded"
            ]
        );
        assert!(!ProposalStatus::NeedsAttention.is_terminal());
        assert!(!ProposalStatus::Succeeded.is_terminal());
    }
}
