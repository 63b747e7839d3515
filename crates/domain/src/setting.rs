//! Changes to the settings that decide who may move money: approval limits,
//! four-eyes thresholds, accounts and their roles, policy documents and the
//! widget's host sites. Each one is journaled with who made it, when, and
//! the value before and after, so the audit trail answers "since when may
//! Ana approve 5,000 EUR, and who allowed it?".

use serde::{Deserialize, Serialize};

/// What kind of setting changed; its journal event kind is [`Self::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingKind {
    ApprovalLimitSet,
    FourEyesThresholdSet,
    UserCreated,
    RolesChanged,
    UserDisabled,
    UserEnabled,
    PolicyPublished,
    WidgetSiteAdded,
    WidgetSiteChanged,
    WidgetKeyAdded,
    WidgetKeyRevoked,
    /// Which roles see the staff inbox (conversations waiting for a person).
    InboxRolesSet,
    /// A peer agent group's public key pinned for the gateway.
    GatewayKeyPinned,
    /// A pinned key given the end of its rotation overlap.
    GatewayKeyRetired,
    /// A (from group, to group, task kind) allowed through the gateway.
    GatewayPairAllowed,
    /// An allowed pair withdrawn.
    GatewayPairWithdrawn,
    /// A new version of this group's own signing key (the first, or a
    /// rotation retiring the one before).
    GatewayOwnKeyAdded,
    /// Where a peer agent group is reached (its A2A endpoint), set or moved.
    GatewayPeerSet,
    /// A pair allowed without envelope signatures (a plain A2A peer).
    GatewayUnsignedAllowed,
    /// Signatures required again on a pair.
    GatewayUnsignedWithdrawn,
    /// A secret issued to a plain A2A peer (its bearer token).
    GatewayPeerSecretIssued,
    /// A plain A2A peer's secrets revoked.
    GatewayPeerSecretsRevoked,
}

impl SettingKind {
    /// Every kind, in the order the admin page shows its controls.
    pub const ALL: [SettingKind; 22] = [
        SettingKind::ApprovalLimitSet,
        SettingKind::FourEyesThresholdSet,
        SettingKind::UserCreated,
        SettingKind::RolesChanged,
        SettingKind::UserDisabled,
        SettingKind::UserEnabled,
        SettingKind::PolicyPublished,
        SettingKind::WidgetSiteAdded,
        SettingKind::WidgetSiteChanged,
        SettingKind::WidgetKeyAdded,
        SettingKind::WidgetKeyRevoked,
        SettingKind::InboxRolesSet,
        SettingKind::GatewayKeyPinned,
        SettingKind::GatewayKeyRetired,
        SettingKind::GatewayPairAllowed,
        SettingKind::GatewayPairWithdrawn,
        SettingKind::GatewayOwnKeyAdded,
        SettingKind::GatewayPeerSet,
        SettingKind::GatewayUnsignedAllowed,
        SettingKind::GatewayUnsignedWithdrawn,
        SettingKind::GatewayPeerSecretIssued,
        SettingKind::GatewayPeerSecretsRevoked,
    ];

    /// The journal's event kind.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            SettingKind::ApprovalLimitSet => "approval_limit_set",
            SettingKind::FourEyesThresholdSet => "four_eyes_threshold_set",
            SettingKind::UserCreated => "user_created",
            SettingKind::RolesChanged => "roles_changed",
            SettingKind::UserDisabled => "user_disabled",
            SettingKind::UserEnabled => "user_enabled",
            SettingKind::PolicyPublished => "policy_published",
            SettingKind::WidgetSiteAdded => "widget_site_added",
            SettingKind::WidgetSiteChanged => "widget_site_changed",
            SettingKind::WidgetKeyAdded => "widget_key_added",
            SettingKind::WidgetKeyRevoked => "widget_key_revoked",
            SettingKind::InboxRolesSet => "inbox_roles_set",
            SettingKind::GatewayKeyPinned => "gateway_key_pinned",
            SettingKind::GatewayKeyRetired => "gateway_key_retired",
            SettingKind::GatewayPairAllowed => "gateway_pair_allowed",
            SettingKind::GatewayPairWithdrawn => "gateway_pair_withdrawn",
            SettingKind::GatewayOwnKeyAdded => "gateway_own_key_added",
            SettingKind::GatewayPeerSet => "gateway_peer_set",
            SettingKind::GatewayUnsignedAllowed => "gateway_unsigned_allowed",
            SettingKind::GatewayUnsignedWithdrawn => "gateway_unsigned_withdrawn",
            SettingKind::GatewayPeerSecretIssued => "gateway_peer_secret_issued",
            SettingKind::GatewayPeerSecretsRevoked => "gateway_peer_secrets_revoked",
        }
    }

    /// The kind a journal event kind names, if it is a settings change.
    #[must_use]
    pub fn parse(kind: &str) -> Option<SettingKind> {
        SettingKind::ALL.into_iter().find(|k| k.as_str() == kind)
    }
}

/// One settings change as the journal's payload stores it. `before` and
/// `after` are what a person reads ("250.00 EUR", "approver, manager",
/// "enabled"); `None` where nothing existed before (a new user) or nothing
/// remains after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingChange {
    /// What the setting belongs to: `user:ana`, `currency:EUR`,
    /// `policy:returns-policy`, `widget_site:wst_…`.
    pub subject: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::SettingKind;

    #[test]
    fn every_setting_kind_round_trips_through_its_journal_name() {
        for kind in SettingKind::ALL {
            assert_eq!(SettingKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(SettingKind::parse("approved"), None);
    }
}
