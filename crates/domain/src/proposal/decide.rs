//! The approval phase: approve (with four eyes), reject, expire, supersede.

use super::effect::{Effect, Transition, event};
use super::state::{ApprovalRef, ProposalState};
use super::transition::{TransitionError, non_blank};
use crate::Timestamp;

pub(super) fn approve(
    expires_at: Timestamp,
    approvals: &[ApprovalRef],
    approval: ApprovalRef,
    required_approvals: u8,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    if now >= expires_at {
        return Err(TransitionError::Expired { expires_at });
    }
    if !approval.counts_at(now) {
        return Err(TransitionError::ApprovalExpired);
    }
    // Expired approvals no longer count and are dropped from the state (the
    // journal keeps them); their approver may approve afresh.
    let mut counted: Vec<ApprovalRef> = approvals
        .iter()
        .filter(|a| a.counts_at(now))
        .cloned()
        .collect();
    if counted
        .iter()
        .any(|a| a.approver_id == approval.approver_id)
    {
        return Err(TransitionError::AlreadyApproved {
            approver_id: approval.approver_id,
        });
    }
    counted.push(approval);

    let required = usize::from(required_approvals.max(1));
    let mut approvers: Vec<&str> = counted.iter().map(|a| a.approver_id.as_str()).collect();
    approvers.sort_unstable();
    approvers.dedup();
    let distinct = approvers.len();

    if distinct >= required {
        // The executor must start while every counted approval still holds
        // and the proposal itself has not expired.
        let claim_by = counted
            .iter()
            .map(|a| a.expires_at)
            .fold(expires_at, Timestamp::min);
        return Ok(Transition::new(
            ProposalState::Approved {
                approvals: counted,
                expires_at: claim_by,
            },
            event::APPROVED,
            vec![Effect::Execute],
        ));
    }
    // Recorded; the other approvers see it waiting for them in the queue.
    Ok(Transition::new(
        ProposalState::AwaitingApproval {
            expires_at,
            approvals: counted,
        },
        event::APPROVAL_RECORDED,
        Vec::new(),
    ))
}

pub(super) fn reject(
    expires_at: Timestamp,
    by: String,
    reason: String,
    now: Timestamp,
) -> Result<Transition, TransitionError> {
    if now >= expires_at {
        return Err(TransitionError::Expired { expires_at });
    }
    let by = non_blank(by, "the rejecting person")?;
    let reason = non_blank(reason, "a rejection's reason")?;
    Ok(Transition::new(
        ProposalState::Rejected { by, reason },
        event::REJECTED,
        Vec::new(),
    ))
}

pub(super) fn expire(expires_at: Timestamp, now: Timestamp) -> Result<Transition, TransitionError> {
    if now < expires_at {
        return Err(TransitionError::NotYetExpired { expires_at });
    }
    Ok(Transition::new(
        ProposalState::Expired { at: expires_at },
        event::EXPIRED,
        Vec::new(),
    ))
}

pub(super) fn supersede(by: String) -> Result<Transition, TransitionError> {
    let by = non_blank(by, "the superseding proposal's id")?;
    Ok(Transition::new(
        ProposalState::Superseded { by },
        event::SUPERSEDED,
        Vec::new(),
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::proposal::fixtures::{self, approval_ref, t0};
    use crate::proposal::{Command, Effect, ProposalState, ProposalStatus, TransitionError, apply};
    use chrono::Duration;

    fn approve(
        state: &ProposalState,
        approver: &str,
        required: u8,
        minutes: i64,
    ) -> Result<ProposalState, TransitionError> {
        let at = t0() + Duration::minutes(minutes);
        let command = Command::Approve {
            approval: approval_ref(approver, at),
            required_approvals: required,
        };
        apply(&fixtures::proposal(), state, command, at).map(|t| t.next)
    }

    #[test]
    fn one_approval_below_the_threshold_approves_and_asks_for_execution() {
        let proposal = fixtures::proposal();
        let at = t0() + Duration::minutes(10);
        let command = Command::Approve {
            approval: approval_ref("usr_anna", at),
            required_approvals: 1,
        };
        let t = apply(&proposal, &fixtures::awaiting(), command, at).unwrap();
        assert_eq!(t.next.status(), ProposalStatus::Approved);
        assert_eq!(t.effects, vec![Effect::Execute]);
        assert_eq!(t.event, "approved");
    }

    #[test]
    fn above_the_threshold_a_second_distinct_approver_is_needed() {
        let first = approve(&fixtures::awaiting(), "usr_anna", 2, 10).unwrap();
        assert_eq!(first.status(), ProposalStatus::AwaitingApproval);
        assert_eq!(first.approvals().len(), 1);
        assert!(matches!(
            approve(&first, "usr_anna", 2, 20),
            Err(TransitionError::AlreadyApproved { .. })
        ));
        let second = approve(&first, "usr_boris", 2, 20).unwrap();
        assert_eq!(second.status(), ProposalStatus::Approved);
        assert_eq!(second.approvals().len(), 2);
    }

    #[test]
    fn the_first_of_two_approvals_asks_for_a_second_approver() {
        let at = t0() + Duration::minutes(10);
        let command = Command::Approve {
            approval: approval_ref("usr_anna", at),
            required_approvals: 2,
        };
        let t = apply(&fixtures::proposal(), &fixtures::awaiting(), command, at).unwrap();
        assert!(
            t.effects.is_empty(),
            "nothing runs until the second approval"
        );
    }

    #[test]
    fn an_expired_approval_does_not_count_towards_four_eyes() {
        let first = approve(&fixtures::awaiting(), "usr_anna", 2, 0).unwrap();
        // fixtures' approvals last 60 minutes.
        let second = approve(&first, "usr_boris", 2, 61).unwrap();
        assert_eq!(second.status(), ProposalStatus::AwaitingApproval);
        assert_eq!(second.approvals().len(), 1);
        // Anna's approval lapsed, so she may approve again.
        let third = approve(&second, "usr_anna", 2, 62).unwrap();
        assert_eq!(third.status(), ProposalStatus::Approved);
    }

    #[test]
    fn an_approved_proposal_must_be_claimed_before_its_approvals_expire() {
        let approved = approve(&fixtures::awaiting(), "usr_anna", 1, 10).unwrap();
        assert_eq!(approved.due_at(), Some(t0() + Duration::minutes(70)));
    }

    #[test]
    fn an_expired_proposal_cannot_be_approved() {
        let after = fixtures::proposal().expires_at;
        let command = Command::Approve {
            approval: approval_ref("usr_anna", after),
            required_approvals: 1,
        };
        assert!(matches!(
            apply(&fixtures::proposal(), &fixtures::awaiting(), command, after),
            Err(TransitionError::Expired { .. })
        ));
    }

    #[test]
    fn a_rejection_needs_a_reason() {
        let reject = |reason: &str| {
            let command = Command::Reject {
                by: "usr_anna".into(),
                reason: reason.into(),
            };
            apply(&fixtures::proposal(), &fixtures::awaiting(), command, t0())
        };
        assert!(matches!(reject("  "), Err(TransitionError::Invalid(_))));
        let t = reject("parcel was opened").unwrap();
        assert_eq!(
            t.next,
            ProposalState::Rejected {
                by: "usr_anna".into(),
                reason: "parcel was opened".into()
            }
        );
    }

    #[test]
    fn a_proposal_expires_only_once_its_time_has_come() {
        let proposal = fixtures::proposal();
        let state = fixtures::awaiting();
        let early = proposal.expires_at - Duration::seconds(1);
        assert!(matches!(
            apply(&proposal, &state, Command::Expire, early),
            Err(TransitionError::NotYetExpired { .. })
        ));
        let t = apply(&proposal, &state, Command::Expire, proposal.expires_at).unwrap();
        assert_eq!(
            t.next,
            ProposalState::Expired {
                at: proposal.expires_at
            }
        );
    }

    #[test]
    fn an_approved_but_unclaimed_proposal_can_expire() {
        let approved = approve(&fixtures::awaiting(), "usr_anna", 1, 10).unwrap();
        let deadline = approved.due_at().unwrap();
        let t = apply(&fixtures::proposal(), &approved, Command::Expire, deadline).unwrap();
        assert_eq!(t.next.status(), ProposalStatus::Expired);
    }

    #[test]
    fn a_superseded_proposal_accepts_nothing_more() {
        let proposal = fixtures::proposal();
        let command = Command::Supersede {
            by: "prp_18".into(),
        };
        let t = apply(&proposal, &fixtures::awaiting(), command, t0()).unwrap();
        assert_eq!(
            t.next,
            ProposalState::Superseded {
                by: "prp_18".into()
            }
        );
        let late = Command::Approve {
            approval: approval_ref("usr_anna", t0()),
            required_approvals: 1,
        };
        assert_eq!(
            apply(&proposal, &t.next, late, t0()),
            Err(TransitionError::NotAllowed {
                from: ProposalStatus::Superseded,
                command: "approve"
            })
        );
    }
}
