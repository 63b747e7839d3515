//! `check_returned_parcel`: asks the returns desk — another agent group,
//! over the gateway — what it recorded about the order's returned parcel.
//! Its answer counts only if that group signed it with a key pinned here
//! (the relay checks before it records a result); then it is evidence the
//! proposal cites, with its provenance. No answer in time, a refusal or a
//! failure is `unknown`: the specialist asks the customer instead, never
//! guesses.

use super::{CHECK_RETURNED_PARCEL, one_order_parameters, this_customers_order_call};
use agents::{Provenance, Tool, ToolContext, ToolOutcome};
use async_trait::async_trait;
use domain::proposal::Evidence;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, Default)]
pub struct CheckReturnedParcel;

/// What the returns desk answered, as the model (and the ledger) reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParcelInspection {
    pub order_id: String,
    /// `sealed`, `opened`, `damaged` or `unknown` (no parcel on record).
    pub condition: String,
    pub received_at: Option<String>,
    pub note: Option<String>,
    /// The group that answered and the key that signed its answer.
    pub answered_by: String,
    pub signed_by: String,
    /// What a proposal cites for it (`peer-task:<id>`).
    pub evidence_reference: String,
}

#[async_trait]
impl Tool for CheckReturnedParcel {
    fn name(&self) -> &str {
        CHECK_RETURNED_PARCEL
    }

    fn description(&self) -> &str {
        "Ask the returns desk (another team, over a signed channel) what it recorded about the order's returned parcel: sealed, opened, damaged, or unknown when no parcel is on record. Use it before asking the customer whether the item was opened. A recorded condition is evidence; unknown or no answer means you must ask the customer."
    }

    fn parameters(&self) -> Value {
        one_order_parameters()
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        let (scope, order_id) = match this_customers_order_call(ctx, args).await {
            Ok(call) => call,
            Err(outcome) => return outcome,
        };
        let asked = scope
            .tools
            .ask_returns_desk(&order_id, &scope.conversation_id)
            .await;
        let task = match asked {
            Ok(Some(task)) => task,
            Ok(None) => return ToolOutcome::refused("no returns desk is connected to this team"),
            Err(error) => {
                tracing::warn!(%error, order.id = %order_id, "the returns desk could not be asked");
                return ToolOutcome::unknown(format!(
                    "the returns desk could not be asked ({error}); ask the customer instead"
                ));
            }
        };
        let (Some(result), Some(signed_by)) = (&task.result, &task.answer_signer) else {
            let why = if task.is_final() {
                task.error.clone().unwrap_or_else(|| task.state.clone())
            } else {
                format!("no answer yet (task {} is {})", task.task_key, task.state)
            };
            return ToolOutcome::unknown(format!(
                "the returns desk gave no usable answer: {why}; ask the customer instead"
            ));
        };
        let text = |name: &str| result[name].as_str().map(str::to_owned);
        let inspection = ParcelInspection {
            order_id: order_id.clone(),
            condition: text("condition").unwrap_or_else(|| "unknown".to_owned()),
            received_at: text("received_at"),
            note: text("note"),
            answered_by: task.to_group.clone(),
            signed_by: signed_by.clone(),
            evidence_reference: Evidence::peer_task_reference(&task.id),
        };
        let provenance = Provenance {
            source: inspection.evidence_reference.clone(),
            title: format!("Returns desk ({}) on order {order_id}", task.to_group),
            section: Some(format!("task {} · signed by {signed_by}", task.task_key)),
            version: task.task_key.clone(),
            quote: Some(format!(
                "condition: {}{}",
                inspection.condition,
                inspection
                    .note
                    .as_deref()
                    .map(|note| format!("; {note}"))
                    .unwrap_or_default()
            )),
        };
        scope
            .ledger()
            .peer_answered(&order_id, &inspection.condition, provenance.clone());
        ToolOutcome::found(
            serde_json::to_value(&inspection).unwrap_or_default(),
            vec![provenance],
        )
    }
}
