//! Journal events in the words of the people who read the audit trail and
//! a proposal's timeline: "Approved", "Refund sent to the provider", not
//! `approved` and `sent`. The kind itself stays on the row (filters and the
//! CSV export use it).

use domain::proposal::event;

/// What happened, as a short sentence; a kind this list does not know yet
/// reads as its own words ("order.created" → "Order created").
pub fn event_sentence(kind: &str) -> String {
    let known = match kind {
        event::PROPOSED => "Refund proposed",
        event::APPROVAL_RECORDED => "First approval recorded (a second is needed)",
        event::APPROVED => "Approved",
        event::REJECTED => "Rejected",
        event::EXPIRED => "Expired before anyone decided",
        event::SUPERSEDED => "Replaced by a newer proposal",
        event::CLAIMED => "Taken for sending",
        event::TAKEN_OVER => "Sending taken over after a stalled attempt",
        event::STATUS_CHECK_STARTED => "Asked the provider where the refund stands",
        event::INVALIDATED => "Stopped before sending: the facts changed",
        event::SENT => "Refund sent to the provider",
        event::SUCCEEDED => "Provider reported the refund done",
        event::FAILED => "Provider refused the refund",
        event::OUTCOME_UNKNOWN => "Provider's answer unknown: checking",
        event::RESENDING => "Sent again under the same key",
        event::NEEDS_ATTENTION => "Needs a person",
        event::VERIFIED => "Verified with the provider",
        event::RESOLVED => "Resolved by a person",
        "approval_limit_set" => "Approval limit set",
        "four_eyes_threshold_set" => "Four-eyes threshold set",
        "user_created" => "Account created",
        "roles_changed" => "Roles changed",
        "user_disabled" => "Account disabled",
        "user_enabled" => "Account enabled",
        "policy_published" => "Policy version published",
        "widget_site_added" => "Widget site registered",
        "widget_site_changed" => "Widget site changed",
        "widget_key_added" => "Widget signing key added",
        "widget_key_revoked" => "Widget signing key revoked",
        "inbox_roles_set" => "Inbox roles set",
        "gateway_key_pinned" => "Peer group's key pinned",
        "gateway_key_retired" => "Peer group's key retired",
        "gateway_pair_allowed" => "Tasks allowed between agent groups",
        "gateway_pair_withdrawn" => "Tasks between agent groups no longer allowed",
        "gateway_own_key_added" => "New version of this group's signing key",
        "gateway_peer_set" => "Peer group's address set",
        "gateway_unsigned_allowed" => "Tasks between agent groups allowed without signatures",
        "gateway_unsigned_withdrawn" => "Signatures required again between agent groups",
        "gateway_peer_secret_issued" => "Secret issued to a plain A2A peer",
        "gateway_peer_secrets_revoked" => "A plain A2A peer's secrets revoked",
        "gateway.task_sent" => "Task sent to another agent group",
        "gateway.task_delegated" => "Task passed on to another agent group",
        "gateway.task_delivered" => "Task delivered to the peer group",
        "gateway.task_working" => "Peer group working on the task",
        "gateway.task_completed" => "Task answered",
        "gateway.task_failed" => "Task failed",
        "gateway.task_ended" => "Task ended by the peer group",
        "gateway.task_refused_by_peer" => "Task refused by the peer group",
        "gateway.task_result_refused" => {
            "Peer group's answer refused (does not fit the task's schema)"
        }
        "gateway.task_overspent" => {
            "Peer group's answer refused (it spent beyond the task's budget)"
        }
        "gateway.task_lost_by_peer" => "Peer group no longer knows the task",
        "gateway.task_expired" => "Task expired before an answer",
        "gateway.cancel_requested" => "Cancel of a task asked for",
        "gateway.task_canceled" => "Task canceled",
        "work_retried" => "Background work retried by staff",
        "work_cancelled" => "Background work cancelled by staff",
        "work_resolved" => "Background work resolved by staff",
        "alert_acknowledged" => "Alert acknowledged",
        "journal_broken" => "Journal check found a break",
        "handover_requested" => "Customer asked for a person",
        "handover_taken" => "A person took the chat over",
        "handover_returned" => "Chat handed back to the assistant",
        "order.created" => "Order received",
        "order.updated" => "Order updated",
        "order.refund_recorded" => "Refund recorded on the order",
        "gateway.task_received" => "Task received from another agent group",
        "gateway.task_refused" => "Task from another agent group refused",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    let words = kind.replace(['_', '.'], " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A status as people say it: `awaiting_approval` → "awaiting approval".
pub fn status_words(status: &str) -> String {
    status.replace('_', " ")
}

/// A journal actor as people know it: the person's name with their login,
/// or what the system part was ("System: executor-6945").
pub fn actor_words(actor: &str, display_name: Option<&str>) -> String {
    match (actor.split_once(':'), display_name) {
        (Some(("user", login)), Some(name)) => format!("{name} ({login})"),
        (Some(("user", login)), None) => login.to_owned(),
        (Some(("system", part)), _) => format!("System: {part}"),
        (Some(("external", agent)), _) => format!("Outside agent: {agent}"),
        (Some(("group", group)), _) => format!("Agent group: {group}"),
        _ => actor.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refund_event_kind_reads_as_a_sentence_of_its_own() {
        let sentences: std::collections::HashSet<String> =
            event::ALL.iter().map(|kind| event_sentence(kind)).collect();
        assert_eq!(sentences.len(), event::ALL.len(), "{sentences:?}");
        for kind in event::ALL {
            let sentence = event_sentence(kind);
            assert!(!sentence.contains('_'), "{sentence}");
            assert!(sentence.starts_with(char::is_uppercase), "{sentence}");
        }
    }

    #[test]
    fn every_settings_change_reads_as_a_sentence() {
        for kind in domain::SettingKind::ALL {
            let sentence = event_sentence(kind.as_str());
            assert!(!sentence.contains('_'), "{sentence}");
            assert!(sentence.starts_with(char::is_uppercase), "{sentence}");
        }
    }

    #[test]
    fn an_unknown_kind_still_reads_as_words() {
        assert_eq!(
            event_sentence("gateway.task_teleported"),
            "Gateway task teleported"
        );
        assert_eq!(event_sentence(""), "");
    }

    #[test]
    fn people_are_named_and_system_parts_say_what_they_are() {
        assert_eq!(
            actor_words("user:approver", Some("Ada Approver")),
            "Ada Approver (approver)"
        );
        assert_eq!(actor_words("user:gone", None), "gone");
        assert_eq!(
            actor_words("system:executor-6945", None),
            "System: executor-6945"
        );
        assert_eq!(actor_words("group:returns", None), "Agent group: returns");
        assert_eq!(actor_words("odd", None), "odd");
    }
}
