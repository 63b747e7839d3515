use crate::support::{Harness, refund_request};
use domain::proposal::{EvidenceKind, ProposalStatus};
use engine::proposals::{EvidenceRef, SubmitError};

#[tokio::test]
async fn the_flagship_proposal_recomputes_7900_eur_and_cites_the_order_and_section_three() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let mut request = refund_request("4821");
    request.amount_minor = None;
    let stored = h.submit_as(&customer, request).await.unwrap();
    let p = &stored.proposal;
    assert!(p.id.starts_with("prp_"));
    assert_eq!(p.amount.amount_minor, 7900);
    assert_eq!(p.amount.currency.code(), "EUR");
    assert_eq!(stored.status(), ProposalStatus::AwaitingApproval);
    let references: Vec<_> = p.evidence.iter().map(|e| e.reference.as_str()).collect();
    assert_eq!(references, ["order:4821", "returns-policy:section-3"]);
    let policy = p
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Policy)
        .unwrap();
    assert_eq!(policy.section.as_deref(), Some("3. Unopened items"));
    assert_eq!(policy.title, "Returns and refunds policy");
    assert_eq!(
        policy.version.len(),
        64,
        "cites the content hash of the version"
    );
    assert!(p.verify_digest());
    assert_eq!(
        p.provenance.on_behalf_of.as_deref(),
        Some(customer.user_id.as_str())
    );
}

#[tokio::test]
async fn an_amount_above_what_is_refundable_is_refused_and_nothing_is_stored() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let mut request = refund_request("4823");
    request.amount_minor = Some(4400); // 12.50 EUR already refunded of 44.00
    let error = h.submit_as(&agent, request).await.unwrap_err();
    assert!(
        matches!(error, SubmitError::AmountExceedsRefundable { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("31.50 EUR"), "{error}");
    assert!(
        storage::proposals::list(h.engine.db.conn(), &Default::default(), 10, 0)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_customer_cannot_propose_a_refund_of_someone_elses_order() {
    let h = Harness::start().await;
    let customer = h.actor("customer").await;
    let error = h
        .submit_as(&customer, refund_request("4822"))
        .await
        .unwrap_err();
    assert!(matches!(error, SubmitError::NotYourOrder(_)), "{error}");
}

#[tokio::test]
async fn a_quote_that_is_not_in_the_cited_section_is_refused() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let mut request = refund_request("4821");
    request.evidence[1] = EvidenceRef {
        reference: "returns-policy:section-3".into(),
        version: None,
        quote: Some("All items may be returned within 365 days".into()),
    };
    let error = h.submit_as(&agent, request).await.unwrap_err();
    assert!(error.to_string().contains("does not appear"), "{error}");
}

#[tokio::test]
async fn a_proposal_without_policy_evidence_is_refused() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let mut request = refund_request("4821");
    request.evidence.truncate(1);
    let error = h.submit_as(&agent, request).await.unwrap_err();
    assert!(error.to_string().contains("policy"), "{error}");
}

#[tokio::test]
async fn a_different_amount_is_a_new_proposal_that_supersedes_the_old_one() {
    let h = Harness::start().await;
    let agent = h.actor("agent").await;
    let first = h.submit_as(&agent, refund_request("4821")).await.unwrap();
    let mut changed = refund_request("4821");
    changed.amount_minor = Some(5000);
    changed.supersedes = Some(first.proposal.id.clone());
    let second = h.submit_as(&agent, changed).await.unwrap();
    assert_eq!(
        second.proposal.supersedes.as_deref(),
        Some(first.proposal.id.as_str())
    );
    assert_eq!(
        h.status(&first.proposal.id).await,
        ProposalStatus::Superseded
    );
    assert_ne!(first.proposal.action_digest, second.proposal.action_digest);
    // The superseded proposal can no longer be approved.
    let approver = h.actor("approver").await;
    let error = h
        .engine
        .approvals
        .approve(&approver, &first.proposal.id, &first.proposal.action_digest)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "this proposal was replaced by {}; review that one instead",
            second.proposal.id
        )
    );
    assert_eq!(h.ledger().total_refunds, 0);
}
