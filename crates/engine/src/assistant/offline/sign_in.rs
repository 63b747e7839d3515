//! A visitor who has not signed in: when a tool refuses for want of a
//! sign-in, the specialist asks them to sign in and waits
//! (`request_sign_in`); once they have, the refused call is made again (the
//! rules that read its result skip a refusal older than the sign-in).

use super::Step;
use super::view::View;
use crate::assistant::tools::{NOT_SIGNED_IN, REQUEST_SIGN_IN};
use agents::OutcomeKind;
use serde_json::json;

/// What the customer reads when they did not sign in while the turn waited.
pub const NOT_SIGNED_IN_REPLY: &str = "I need you to sign in before I can look at your orders, and I didn't see you sign in while I waited. Please sign in, then ask me again — nothing has been done on your account.";

/// The step a refusal for want of a sign-in calls for this turn, if any.
pub(super) fn next(view: &View<'_>) -> Option<Step> {
    let refused = view.latest_of_any(|r| {
        r.this_turn && r.outcome == OutcomeKind::Refused && r.reason().starts_with(NOT_SIGNED_IN)
    })?;
    match view.latest(REQUEST_SIGN_IN, |r| r.index > refused.index) {
        None => Some(Step::Call {
            tool: REQUEST_SIGN_IN,
            args: json!({}),
        }),
        Some(asked) if asked.outcome == OutcomeKind::Found => None,
        Some(_) => Some(Step::Say(NOT_SIGNED_IN_REPLY.to_owned())),
    }
}
