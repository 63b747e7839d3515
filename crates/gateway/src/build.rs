//! Making envelopes that keep the rules by construction: a root task, and a
//! task delegated from a signed one (route extended, one hop deeper, same
//! root, its budget within what remains). The sender refuses what every
//! receiver would refuse, before anything is signed or sent.

use crate::budget::Budget;
use crate::envelope::{ENVELOPE_VERSION, SignedEnvelope, TaskEnvelope};
use crate::names::{GroupName, KeyRef, TaskKey, TaskKind};
use crate::refusal::Refusal;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde_json::Value;

/// What a new task asks, wherever it sits in a chain.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub task_key: TaskKey,
    pub kind: TaskKind,
    pub input: Value,
    pub to: GroupName,
    pub budget: Budget,
    pub signer: KeyRef,
    pub created: DateTime<Utc>,
}

fn nonce() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first task of a chain, sent by the signer's group.
///
/// # Errors
/// [`Refusal::Cycle`] when a group would send a task to itself.
pub fn root(task: NewTask) -> Result<TaskEnvelope, Refusal> {
    let from = task.signer.group.clone();
    if task.to == from {
        return Err(Refusal::Cycle {
            group: from.clone(),
            route: from.to_string(),
        });
    }
    Ok(TaskEnvelope {
        v: ENVELOPE_VERSION,
        root_key: task.task_key.clone(),
        task_key: task.task_key,
        kind: task.kind,
        input: task.input,
        from: from.clone(),
        to: task.to,
        parent_key: None,
        route: vec![from],
        depth: 0,
        budget: task.budget,
        parent_remaining: None,
        created: task.created,
        nonce: nonce(),
        signer: task.signer,
        parent: None,
    })
}

/// A task the receiver of `parent` passes on, with `remaining` what is
/// left of the parent's budget now.
///
/// # Errors
/// [`Refusal::ChainBroken`] when the signer is not the group `parent` was
/// sent to; [`Refusal::Cycle`] when `to` is already on the route;
/// [`Refusal::TooDeep`] past `max_depth`; [`Refusal::OverBudget`] when the
/// remainder exceeds the parent's budget or the task's budget the remainder.
pub fn delegate(
    parent: &SignedEnvelope,
    remaining: Budget,
    task: NewTask,
    max_depth: u32,
) -> Result<TaskEnvelope, Refusal> {
    let from = task.signer.group.clone();
    let over = |excess| Refusal::OverBudget {
        task_key: task.task_key.clone(),
        excess,
    };
    if from != parent.envelope.to {
        return Err(Refusal::ChainBroken {
            task_key: task.task_key.clone(),
            why: format!(
                "only {} may delegate {}, not {from}",
                parent.envelope.to, parent.envelope.task_key
            ),
        });
    }
    let mut route = parent.envelope.route.clone();
    route.push(from.clone());
    if route.contains(&task.to) {
        return Err(Refusal::Cycle {
            group: task.to.clone(),
            route: route
                .iter()
                .map(GroupName::as_str)
                .collect::<Vec<_>>()
                .join(" → "),
        });
    }
    let depth = parent.envelope.depth + 1;
    if depth > max_depth {
        return Err(Refusal::TooDeep {
            depth,
            limit: max_depth,
        });
    }
    remaining
        .fits_within(&parent.envelope.budget)
        .map_err(over)?;
    task.budget.fits_within(&remaining).map_err(over)?;
    Ok(TaskEnvelope {
        v: ENVELOPE_VERSION,
        task_key: task.task_key,
        kind: task.kind,
        input: task.input,
        from,
        to: task.to,
        root_key: parent.envelope.root_key.clone(),
        parent_key: Some(parent.envelope.task_key.clone()),
        route,
        depth,
        budget: task.budget,
        parent_remaining: Some(remaining),
        created: task.created.max(parent.envelope.created),
        nonce: nonce(),
        signer: task.signer,
        parent: Some(Box::new(parent.clone())),
    })
}
