//! Why a receiver refused a task: typed, with a stable code for the A2A
//! error and the journal, and a sentence a person can act on.

use crate::budget::BudgetExcess;
use crate::names::{GroupName, KeyRef, TaskKey, TaskKind};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the envelope is malformed: {0}")]
    Malformed(String),
    #[error("envelope version {0} is not supported; this group reads version 1")]
    UnsupportedVersion(u32),
    #[error("{from} may not send {kind} tasks to {to}: the pair is not on the allowlist")]
    PairNotAllowed {
        from: GroupName,
        to: GroupName,
        kind: TaskKind,
    },
    #[error("the task is addressed to {to}, not to this group ({me})")]
    WrongReceiver { to: GroupName, me: GroupName },
    #[error("key {0} is not pinned here")]
    UnknownKey(KeyRef),
    #[error("key {key} may not be used: {why}")]
    KeyNotUsable { key: KeyRef, why: String },
    #[error("the signature of task {task_key} does not verify: {why}")]
    BadSignature { task_key: TaskKey, why: String },
    #[error("task {task_key} is signed by {signer}, which is not a key of its sender {from}")]
    SignerMismatch {
        task_key: TaskKey,
        signer: String,
        from: GroupName,
    },
    #[error("the envelope is outside the replay window: {0}")]
    Stale(String),
    #[error("nonce {0:?} was already used by another task of this sender")]
    Replayed(String),
    #[error("task key {task_key} was already used by this sender for a different envelope")]
    KeyReused { task_key: TaskKey },
    #[error("cycle: {group} already appears in the route {route}")]
    Cycle { group: GroupName, route: String },
    #[error("the chain is inconsistent at task {task_key}: {why}")]
    ChainBroken { task_key: TaskKey, why: String },
    #[error("depth {depth} is beyond this group's limit of {limit}")]
    TooDeep { depth: u32, limit: u32 },
    #[error("task {task_key} is over budget: {excess}")]
    OverBudget {
        task_key: TaskKey,
        excess: BudgetExcess,
    },
    #[error("{0} is not a task kind this group accepts")]
    UnknownKind(TaskKind),
    #[error("the input of {kind} is invalid: {why}")]
    InvalidInput { kind: TaskKind, why: String },
}

impl Refusal {
    /// A stable code: the A2A error's `data.reason` and the journal's.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Malformed(_) => "malformed",
            Refusal::UnsupportedVersion(_) => "unsupported_version",
            Refusal::PairNotAllowed { .. } => "pair_not_allowed",
            Refusal::WrongReceiver { .. } => "wrong_receiver",
            Refusal::UnknownKey(_) => "unknown_key",
            Refusal::KeyNotUsable { .. } => "key_not_usable",
            Refusal::BadSignature { .. } => "bad_signature",
            Refusal::SignerMismatch { .. } => "signer_mismatch",
            Refusal::Stale(_) => "stale",
            Refusal::Replayed(_) => "replayed",
            Refusal::KeyReused { .. } => "key_reused",
            Refusal::Cycle { .. } => "cycle",
            Refusal::ChainBroken { .. } => "chain_broken",
            Refusal::TooDeep { .. } => "too_deep",
            Refusal::OverBudget { .. } => "over_budget",
            Refusal::UnknownKind(_) => "unknown_kind",
            Refusal::InvalidInput { .. } => "invalid_input",
        }
    }
}
