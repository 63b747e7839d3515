//! Submitting a refund proposal. The server never trusts the submitter's
//! numbers: it loads the live order, recomputes the refundable amount,
//! resolves every evidence reference against current records, and stores an
//! immutable proposal whose digest binds any later approval.

use super::Proposals;
use super::authority::{self, Proposer, Refusal};
use super::one_live::{self, LiveProposal};
use crate::core::Actor;
use crate::policies::split_sections;
use crate::step::{SaveError, Step};
use domain::proposal::{
    Command, Evidence, OpenQuestion, ProposalDraft, ProposalError, Provenance, RefundProposal,
};
use domain::{Currency, Money, OrderSnapshot};
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
    /// None: refund everything still refundable (of the named lines, if
    /// any). A given amount is checked.
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    /// The order lines (SKUs) the refund is for; empty: the whole order.
    #[serde(default)]
    pub lines: Vec<String>,
    pub evidence: Vec<EvidenceRef>,
    #[serde(default)]
    pub open_questions: Vec<OpenQuestion>,
    pub recommendation: String,
    /// Optional and only for older clients: the agent name is bound to the
    /// credential (`external:<user name>` for an agent service account,
    /// `staff:<user name>` for staff). A name given here must be that very
    /// name; any other is refused.
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The live proposal this one replaces. Required when the new one
    /// overlaps a live proposal on the order (the same lines, or together
    /// more than is left to refund); that one is superseded in the same
    /// transaction.
    #[serde(default)]
    pub supersedes: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error(
        "only agent service accounts and staff (approvers, managers, administrators) may propose refunds; customers ask in the chat"
    )]
    NotAllowed,
    #[error(
        "this credential proposes as {bound:?}, not {given:?}; the agent name is bound to the credential (omit agent)"
    )]
    AgentNotYours { given: String, bound: String },
    #[error(
        "too many proposals from this account: at most {max} per {window_minutes} minutes; try again in {retry_after_secs} s"
    )]
    TooManySubmissions {
        max: u64,
        window_minutes: i64,
        retry_after_secs: u64,
    },
    #[error("no order {0}")]
    OrderNotFound(String),
    #[error("order {0} is not one of your orders")]
    NotYourOrder(String),
    #[error("no conversation {0}")]
    ConversationNotFound(String),
    #[error("conversation {conversation_id} is not with the customer of order {order_id}")]
    ConversationOfAnotherCustomer {
        conversation_id: String,
        order_id: String,
    },
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
    #[error("lines: {0}")]
    Lines(String),
    #[error("{requested} is more than the {lines_total} the named lines of order {order_id} cost")]
    AmountExceedsLines {
        order_id: String,
        requested: Money,
        lines_total: Money,
    },
    #[error(
        "order {order_id} already has {} in flight ({}); name the one this replaces in supersedes, or propose for other lines",
        if live.len() == 1 { "a live proposal" } else { "live proposals" },
        live.iter().map(|p| format!("{} {}", p.id, p.status)).collect::<Vec<_>>().join(", ")
    )]
    OverlapsLive {
        order_id: String,
        live: Vec<LiveProposal>,
    },
    #[error("evidence {reference:?}: {problem}")]
    Evidence { reference: String, problem: String },
    #[error("open question {question:?}: {problem}")]
    AnswerSource { question: String, problem: String },
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

impl From<Refusal> for SubmitError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::NotAllowed => SubmitError::NotAllowed,
            Refusal::AgentNotYours { given, bound } => SubmitError::AgentNotYours { given, bound },
        }
    }
}

impl Proposals {
    /// Checks a proposal from a signed-in account (an agent service account
    /// or staff) against live records and stores it, awaiting approval.
    ///
    /// # Errors
    /// [`SubmitError`] naming the first problem found; nothing is stored then.
    pub async fn submit_proposal(
        &self,
        actor: &Actor,
        input: SubmitProposal,
    ) -> Result<StoredProposal, SubmitError> {
        self.submit(Proposer::Account(actor), input).await
    }

    /// Checks a proposal against live records and stores it, awaiting
    /// approval: who may propose and under which agent name
    /// ([`Proposer::agent_name`]), the submitter's budget, the order (the
    /// assistant: only the customer's own), the conversation (the order's
    /// customer's), the amount, the order's live proposals (one per request
    /// unless this one supersedes it) and every citation.
    ///
    /// # Errors
    /// [`SubmitError`] naming the first problem found; nothing is stored then.
    pub async fn submit(
        &self,
        proposer: Proposer<'_>,
        input: SubmitProposal,
    ) -> Result<StoredProposal, SubmitError> {
        let agent = proposer.agent_name(input.agent.as_deref())?;
        if agent.is_empty() || agent.chars().count() > 100 {
            return Err(SubmitError::InvalidAgent);
        }
        let submitter = proposer.submitter();
        let now = self.clock.now();
        let tx = self.db.begin_write().await?;
        let limit = self.rules.submission_limit;
        if let Some(retry_after_secs) =
            authority::seconds_until_allowed(&*tx, limit, &submitter.user_id, now).await?
        {
            return Err(SubmitError::TooManySubmissions {
                max: limit.max_per_window,
                window_minutes: limit.window.num_minutes(),
                retry_after_secs,
            });
        }
        // Locked (PostgreSQL) before its proposals are read: two submissions
        // for one order queue here, so they cannot both see no live proposal.
        let order_id = input.order_id.trim().to_owned();
        let order = storage::orders::lock_and_get_many(&*tx, std::slice::from_ref(&order_id))
            .await?
            .remove(&order_id)
            .ok_or_else(|| SubmitError::OrderNotFound(input.order_id.clone()))?;
        if let Some(customer) = proposer.only_orders_of()
            && order.customer_id != customer
        {
            // Customers see only their own orders; say nothing more.
            return Err(SubmitError::NotYourOrder(input.order_id.clone()));
        }
        if let Some(conversation_id) = &input.conversation_id {
            check_conversation(&*tx, conversation_id, &order).await?;
        }
        if let Err(error) = self.provider.check_reference(&order.payment_reference) {
            return Err(SubmitError::UnrefundableReference {
                order_id: order.id.clone(),
                message: error.to_string(),
            });
        }
        let lines = named_lines(&order, &input.lines)?;
        let (amount, left) = amount_to_refund(
            &order,
            &lines,
            input.amount_minor,
            input.currency.as_deref(),
        )?;
        one_live::refuse_overlap(
            &*tx,
            &order,
            &lines,
            amount,
            left,
            input.supersedes.as_deref(),
        )
        .await?;
        let mut evidence = Vec::with_capacity(input.evidence.len());
        for citation in &input.evidence {
            evidence.push(resolve_evidence(&*tx, &order, citation, now).await?);
        }
        let open_questions = super::answers::checked(
            &*tx,
            &proposer,
            input.conversation_id.as_deref(),
            input.open_questions,
        )
        .await?;
        let draft = ProposalDraft {
            order_id: order.id.clone(),
            payment_reference: order.payment_reference.clone(),
            amount,
            lines,
            evidence,
            open_questions,
            recommendation: input.recommendation.trim().to_owned(),
            provenance: Provenance {
                agent,
                conversation_id: input.conversation_id,
                // The refund goes to the order's customer: they may never approve it.
                on_behalf_of: Some(order.customer_id.clone()),
                requested_by: proposer.requested_by().to_owned(),
                submitted_by: Some(submitter.clone()),
            },
        };
        let journal_name = proposer.journal_name();
        let id = new_id("prp");
        let ttl = self.rules.ttl;
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
                    &journal_name,
                    json!({ "superseded_by": successor.id }),
                    now,
                )
                .map_err(|e| SubmitError::CannotSupersede(old_id.clone(), e.to_string()))?;
                replaced = Some(step);
                successor
            }
        };
        let created = super::created::insert_proposed(
            &*tx,
            proposal,
            &journal_name,
            json!({ "submitted_by": submitter.name }),
            now,
        )
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
        changes.push(crate::live::ProposalChanged::of(&stored));
        for change in changes {
            self.live.publish(change);
        }
        Ok(stored)
    }
}

/// A proposal may name only a conversation with the order's own customer:
/// otherwise the order would show up in a stranger's transcript.
async fn check_conversation(
    db: &impl ConnectionTrait,
    conversation_id: &str,
    order: &OrderSnapshot,
) -> Result<(), SubmitError> {
    let conversation = storage::conversations::get(db, conversation_id)
        .await?
        .ok_or_else(|| SubmitError::ConversationNotFound(conversation_id.to_owned()))?;
    if conversation.customer_id != order.customer_id {
        return Err(SubmitError::ConversationOfAnotherCustomer {
            conversation_id: conversation_id.to_owned(),
            order_id: order.id.clone(),
        });
    }
    Ok(())
}

/// The named lines, each a SKU of the order, each once.
fn named_lines(order: &OrderSnapshot, lines: &[String]) -> Result<Vec<String>, SubmitError> {
    let mut named: Vec<String> = Vec::with_capacity(lines.len());
    for sku in lines.iter().map(|sku| sku.trim()) {
        if !order.lines.iter().any(|line| line.sku == sku) {
            return Err(SubmitError::Lines(format!(
                "order {} has no line {sku:?}",
                order.id
            )));
        }
        if named.iter().any(|seen| seen == sku) {
            return Err(SubmitError::Lines(format!("line {sku:?} is named twice")));
        }
        named.push(sku.to_owned());
    }
    Ok(named)
}

/// What the named lines cost (quantity × unit price), or None for the
/// whole order.
fn lines_total(order: &OrderSnapshot, lines: &[String]) -> Option<Money> {
    if lines.is_empty() {
        return None;
    }
    let minor = order
        .lines
        .iter()
        .filter(|line| lines.contains(&line.sku))
        .fold(0i64, |sum, line| {
            sum.saturating_add(i64::from(line.quantity).saturating_mul(line.unit_price_minor))
        });
    Some(Money::new(minor, order.currency()))
}

/// The amount to refund and what is left to refund on the order.
fn amount_to_refund(
    order: &OrderSnapshot,
    lines: &[String],
    requested_minor: Option<i64>,
    requested_currency: Option<&str>,
) -> Result<(Money, Money), SubmitError> {
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
    let lines_total = lines_total(order, lines);
    let most = lines_total.map_or(refundable.amount_minor, |total| {
        total.amount_minor.min(refundable.amount_minor)
    });
    let requested = Money::new(requested_minor.unwrap_or(most), order.currency());
    if requested.amount_minor > refundable.amount_minor {
        return Err(SubmitError::AmountExceedsRefundable {
            order_id: order.id.clone(),
            requested,
            refundable,
        });
    }
    if let Some(lines_total) = lines_total
        && requested.amount_minor > lines_total.amount_minor
    {
        return Err(SubmitError::AmountExceedsLines {
            order_id: order.id.clone(),
            requested,
            lines_total,
        });
    }
    Ok((requested, refundable))
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
    now: domain::Timestamp,
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
        return Ok(Evidence::order(order, order_quote(order, now)));
    }
    if source == "browser-check" {
        return browser_check(db, order, section_id)
            .await?
            .map_err(|why| problem(&why));
    }
    if source == "peer-task" {
        return peer_answer(db, order, section_id)
            .await?
            .map_err(|why| problem(&why));
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

/// The signed answer another group gave to outbox task `outbox_id`, as
/// evidence: only a completed task about this order whose answer verified
/// with the peer's pinned key when it came back (the relay records nothing
/// else as completed). Its provenance is in the citation: the group, the
/// task key, the key that signed it, and the digest of the signed answer.
async fn peer_answer(
    db: &impl ConnectionTrait,
    order: &OrderSnapshot,
    outbox_id: &str,
) -> Result<Result<Evidence, String>, SubmitError> {
    let Some(task) = storage::gateway::outbox::get(db, outbox_id).await? else {
        return Ok(Err("no such task was sent to another group".to_owned()));
    };
    let (Some(signed), true) = (
        task.signed_answer.as_deref(),
        task.state == storage::gateway::outbox::COMPLETED,
    ) else {
        return Ok(Err(format!(
            "the task is {}, without a signed answer to cite",
            task.state
        )));
    };
    let corrupt = |e: serde_json::Error| {
        SubmitError::Storage(StorageError::Corrupt(format!(
            "outbox task {outbox_id} does not read back: {e}"
        )))
    };
    let envelope: serde_json::Value = serde_json::from_str(&task.envelope).map_err(corrupt)?;
    if envelope["envelope"]["input"]["order_id"].as_str() != Some(order.id.as_str()) {
        return Ok(Err("the task was about another order".to_owned()));
    }
    let answer: gateway::SignedAnswer = serde_json::from_str(signed).map_err(corrupt)?;
    let digest = gateway::jws::envelope_digest(&serde_json::from_str(signed).map_err(corrupt)?);
    // Each field of the result as a person reads it: "condition: sealed".
    let quote = match &answer.answer.result {
        serde_json::Value::Object(fields) => fields
            .iter()
            .map(|(name, value)| match value {
                serde_json::Value::String(text) => format!("{name}: {text}"),
                serde_json::Value::Null => format!("{name}: —"),
                other => format!("{name}: {other}"),
            })
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    };
    Ok(Ok(Evidence {
        kind: domain::proposal::EvidenceKind::PeerAnswer,
        reference: Evidence::peer_task_reference(outbox_id),
        title: format!(
            "{} answered by agent group {}",
            task.kind, answer.answer.from
        ),
        section: Some(format!(
            "task {} · signed by {} · signature verified {}",
            answer.answer.task_key,
            answer.answer.signer,
            task.updated_at.format("%Y-%m-%d %H:%M UTC")
        )),
        version: digest,
        quote,
    }))
}

/// A page read in the browser about this order, as evidence: what it said,
/// where and when it was read, and the SHA-256 of its screenshot (the
/// citation's version, so the picture can be checked against it).
async fn browser_check(
    db: &impl ConnectionTrait,
    order: &OrderSnapshot,
    check_id: &str,
) -> Result<Result<Evidence, String>, SubmitError> {
    let Some(check) = storage::browser::checks::get(db, check_id).await? else {
        return Ok(Err("no such browser check is on record".to_owned()));
    };
    if check.order_id != order.id {
        return Ok(Err("the page read was about another order".to_owned()));
    }
    Ok(Ok(Evidence {
        kind: domain::proposal::EvidenceKind::BrowserCapture,
        reference: Evidence::browser_check_reference(&check.id),
        title: format!("Carrier tracking page for order {}", order.id),
        section: Some(format!(
            "{} · read {} · screenshot SHA-256 {}",
            check.url,
            check.captured_at.format("%Y-%m-%d %H:%M:%S UTC"),
            check.screenshot_sha256
        )),
        version: check.screenshot_sha256.clone(),
        quote: match &check.delivered_on {
            Some(date) => format!("status: {}; delivered on {date}", check.status),
            None => format!("status: {}", check.status),
        },
    }))
}

fn normalized(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
