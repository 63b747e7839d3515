//! Submitting a refund proposal. The server never trusts the submitter's
//! numbers: it loads the live order, recomputes the refundable amount,
//! resolves every evidence reference against current records, and stores an
//! immutable proposal whose digest binds any later approval.

use crate::core::{Actor, Engine};
use crate::execution::step::{SaveError, Step};
use crate::policies::sections::split_sections;
use domain::proposal::{
    Command, Evidence, OpenQuestion, ProposalDraft, ProposalError, Provenance, RefundProposal,
};
use domain::{Currency, Money, OrderSnapshot, Role};
use serde::{Deserialize, Serialize};
use serde_json::json;
use storage::ids::new_id;
use storage::proposals::StoredProposal;
use storage::{ConnectionTrait, StorageError};

/// A citation as a submitter gives it: `order:4821` or
/// `returns-policy:section-3`, optionally pinned to a version and with the
/// quoted passage (which must appear in the cited text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceRef {
    pub reference: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub quote: Option<String>,
}

/// A submission as an agent sends it. Unknown fields are refused, so a
/// misspelt field (`ammount_minor`) is an error rather than a silent
/// full refund.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitProposal {
    pub order_id: String,
    /// None: refund everything still refundable. A given amount is checked.
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    pub evidence: Vec<EvidenceRef>,
    #[serde(default)]
    pub open_questions: Vec<OpenQuestion>,
    pub recommendation: String,
    /// The agent that produced the proposal (`refund_specialist`, `external:langgraph`).
    pub agent: String,
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// A proposal awaiting approval that this one replaces.
    #[serde(default)]
    pub supersedes: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("only customers (for their own orders), agents and staff may propose refunds")]
    NotAllowed,
    #[error("no order {0}")]
    OrderNotFound(String),
    #[error("order {0} is not one of your orders")]
    NotYourOrder(String),
    #[error("order {order_id} is in {order_currency}, not {given}")]
    CurrencyMismatch {
        order_id: String,
        order_currency: Currency,
        given: String,
    },
    /// The configured payment provider cannot refund this payment at all:
    /// found now rather than after someone approved it.
    #[error(
        "order {order_id}'s payment reference cannot be refunded through this payment provider: {message}"
    )]
    UnrefundableReference { order_id: String, message: String },
    #[error("order {0} has nothing left to refund")]
    NothingToRefund(String),
    #[error("{requested} is more than the {refundable} still refundable on order {order_id}")]
    AmountExceedsRefundable {
        order_id: String,
        requested: Money,
        refundable: Money,
    },
    #[error("evidence {reference:?}: {problem}")]
    Evidence { reference: String, problem: String },
    #[error("the agent name must be 1 to 100 characters")]
    InvalidAgent,
    #[error("proposal {0} cannot be superseded: {1}")]
    CannotSupersede(String, String),
    #[error(transparent)]
    Invalid(#[from] ProposalError),
    #[error(transparent)]
    Conflict(SaveError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl From<SaveError> for SubmitError {
    fn from(e: SaveError) -> Self {
        match e {
            SaveError::Storage(inner) => SubmitError::Storage(inner),
            conflict => SubmitError::Conflict(conflict),
        }
    }
}

impl Engine {
    /// Checks a proposal against live records and stores it, awaiting approval.
    ///
    /// # Errors
    /// [`SubmitError`] naming the first problem found; nothing is stored then.
    pub async fn submit_proposal(
        &self,
        actor: &Actor,
        input: SubmitProposal,
    ) -> Result<StoredProposal, SubmitError> {
        let staff_or_agent =
            actor
                .roles
                .any_of(&[Role::Agent, Role::Approver, Role::Manager, Role::Admin]);
        if !staff_or_agent && !actor.roles.contains(Role::Customer) {
            return Err(SubmitError::NotAllowed);
        }
        let agent = input.agent.trim();
        if agent.is_empty() || agent.chars().count() > 100 {
            return Err(SubmitError::InvalidAgent);
        }
        let now = crate::now();
        let tx = self.db.begin_write().await?;
        let order = storage::orders::get(&*tx, input.order_id.trim())
            .await?
            .ok_or_else(|| SubmitError::OrderNotFound(input.order_id.clone()))?;
        if !staff_or_agent && order.customer_id != actor.user_id {
            // Customers see only their own orders; say nothing more.
            return Err(SubmitError::NotYourOrder(input.order_id.clone()));
        }
        if let Err(error) = self.provider.check_reference(&order.payment_reference) {
            return Err(SubmitError::UnrefundableReference {
                order_id: order.id.clone(),
                message: error.to_string(),
            });
        }
        let amount = amount_to_refund(&order, input.amount_minor, input.currency.as_deref())?;
        let mut evidence = Vec::with_capacity(input.evidence.len());
        for citation in &input.evidence {
            evidence.push(resolve_evidence(&*tx, &order, citation).await?);
        }
        let draft = ProposalDraft {
            order_id: order.id.clone(),
            payment_reference: order.payment_reference.clone(),
            amount,
            evidence,
            open_questions: input.open_questions,
            recommendation: input.recommendation.trim().to_owned(),
            provenance: Provenance {
                agent: agent.to_owned(),
                conversation_id: input.conversation_id,
                // The refund goes to the order's customer: they may never approve it.
                on_behalf_of: Some(order.customer_id.clone()),
                requested_by: actor.user_id.clone(),
            },
        };
        let id = new_id("prp");
        let ttl = self.settings.proposal_ttl;
        let mut replaced = None;
        let proposal = match &input.supersedes {
            None => RefundProposal::new(draft, id, now, ttl)?,
            Some(old_id) => {
                let old = storage::proposals::get(&*tx, old_id)
                    .await?
                    .ok_or_else(|| {
                        SubmitError::CannotSupersede(old_id.clone(), "no such proposal".into())
                    })?;
                if old.proposal.order_id != order.id {
                    return Err(SubmitError::CannotSupersede(
                        old_id.clone(),
                        "it is for another order".into(),
                    ));
                }
                let successor = old.proposal.supersede_with(draft, id, now, ttl)?;
                let mut step = Step::new(old);
                step.apply(
                    Command::Supersede {
                        by: successor.id.clone(),
                    },
                    &actor.journal_name(),
                    json!({ "superseded_by": successor.id }),
                    now,
                )
                .map_err(|e| SubmitError::CannotSupersede(old_id.clone(), e.to_string()))?;
                replaced = Some(step);
                successor
            }
        };
        let created =
            super::created::insert_proposed(&*tx, proposal, &actor.journal_name(), json!({}), now)
                .await?;
        let mut changes = Vec::new();
        if let Some(step) = replaced {
            let (_, change) = step.save(&*tx, now).await?;
            changes.extend(change);
        }
        let (stored, _) = created.save(&*tx, now).await?;
        tx.commit().await?;
        self.payment_refs
            .remember(&stored.proposal.id, &stored.proposal.payment_reference);
        changes.push(crate::live::ProposalChanged {
            proposal_id: stored.proposal.id.clone(),
            order_id: stored.proposal.order_id.clone(),
            status: stored.status().as_str().to_owned(),
            customer_id: stored.proposal.provenance.on_behalf_of.clone(),
        });
        for change in changes {
            self.live.publish(change);
        }
        Ok(stored)
    }
}

fn amount_to_refund(
    order: &OrderSnapshot,
    requested_minor: Option<i64>,
    requested_currency: Option<&str>,
) -> Result<Money, SubmitError> {
    if let Some(code) = requested_currency
        && Currency::parse(code).ok() != Some(order.currency())
    {
        return Err(SubmitError::CurrencyMismatch {
            order_id: order.id.clone(),
            order_currency: order.currency(),
            given: code.to_owned(),
        });
    }
    let refundable = order.refundable().map_err(|e| SubmitError::Evidence {
        reference: format!("order:{}", order.id),
        problem: format!("the order's refund records are inconsistent: {e}"),
    })?;
    if refundable.amount_minor <= 0 {
        return Err(SubmitError::NothingToRefund(order.id.clone()));
    }
    let requested = Money::new(
        requested_minor.unwrap_or(refundable.amount_minor),
        order.currency(),
    );
    if requested.amount_minor > refundable.amount_minor {
        return Err(SubmitError::AmountExceedsRefundable {
            order_id: order.id.clone(),
            requested,
            refundable,
        });
    }
    Ok(requested)
}

/// A plain statement of the order record, as its evidence quote.
pub fn order_quote(order: &OrderSnapshot, now: domain::Timestamp) -> String {
    let delivered = order
        .delivered_at
        .map(|at| format!("delivered {} days ago", (now - at).num_days()))
        .unwrap_or_else(|| format!("status {}", order.status));
    let refunded = order
        .refunded()
        .map(|m| m.display())
        .unwrap_or_else(|_| "inconsistent".to_owned());
    format!(
        "Order {}: {} paid ({}), {}; refunded so far {}.",
        order.id,
        order.total.display(),
        order.payment_reference,
        delivered,
        refunded
    )
}

async fn resolve_evidence(
    db: &impl ConnectionTrait,
    order: &OrderSnapshot,
    citation: &EvidenceRef,
) -> Result<Evidence, SubmitError> {
    let reference = citation.reference.trim();
    let problem = |text: &str| SubmitError::Evidence {
        reference: reference.to_owned(),
        problem: text.to_owned(),
    };
    let Some((source, section_id)) = reference.split_once(':') else {
        return Err(problem(
            "a reference looks like order:4821 or returns-policy:section-3",
        ));
    };
    if source == "order" {
        if section_id != order.id {
            return Err(problem("cites a different order than the one to refund"));
        }
        return Ok(Evidence::order(order, order_quote(order, crate::now())));
    }
    let version = match &citation.version {
        Some(version) => storage::policies::version(db, source, version)
            .await?
            .ok_or_else(|| problem("no such policy version"))?,
        None => storage::policies::current_versions(db)
            .await?
            .into_iter()
            .find(|(slug, _)| slug == source)
            .map(|(_, v)| v)
            .ok_or_else(|| problem("no such policy document"))?,
    };
    let section = split_sections(&version.body)
        .into_iter()
        .find(|s| s.id == section_id)
        .ok_or_else(|| problem("the document has no such section"))?;
    let quote = match &citation.quote {
        Some(quote) if !normalized(&section.text).contains(&normalized(quote)) => {
            return Err(problem(
                "the quoted text does not appear in the cited section",
            ));
        }
        Some(quote) if !quote.trim().is_empty() => quote.trim().to_owned(),
        _ => section.text.clone(),
    };
    Ok(Evidence::policy(
        format!("{source}:{section_id}"),
        version.title.clone(),
        Some(section.heading),
        version.content_hash.clone(),
        quote,
    ))
}

fn normalized(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
