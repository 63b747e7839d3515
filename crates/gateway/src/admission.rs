//! What a receiving group checks before it accepts a task, in this order:
//! the pair is allowed → every signature of the chain verifies with a
//! pinned, usable key → the envelope is fresh → the chain's links hold and
//! this group is not already on the route → the depth is within the limit
//! → every budget fits what remains of its parent's → the kind is accepted
//! and its input valid. The first failure is the answer.
//!
//! The nonce is the one check left to the caller: it is unique only if the
//! receiver records (sender, nonce) in the same transaction that writes the
//! task to its inbox, where a unique constraint makes two concurrent
//! deliveries of one envelope produce one task and a replay a
//! [`Refusal::Replayed`].

use crate::chain::verify_signatures;
use crate::envelope::SignedEnvelope;
use crate::keys::KeyPins;
use crate::names::{GroupName, TaskKind};
use crate::refusal::Refusal;
use crate::rules::{ReplayWindow, check_budgets, check_depth, check_links, check_route};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// The default depth limit: the last safety net against a chain that
/// wanders between groups.
pub const DEFAULT_MAX_DEPTH: u32 = 5;

/// Which group may send which kinds of task to which group. Anything not
/// listed is refused.
#[derive(Debug, Clone, Default)]
pub struct Allowlist(HashMap<(GroupName, GroupName), BTreeSet<TaskKind>>);

impl Allowlist {
    pub fn allow(&mut self, from: GroupName, to: GroupName, kind: TaskKind) {
        self.0.entry((from, to)).or_default().insert(kind);
    }

    pub fn allows(&self, from: &GroupName, to: &GroupName, kind: &TaskKind) -> bool {
        self.0
            .get(&(from.clone(), to.clone()))
            .is_some_and(|kinds| kinds.contains(kind))
    }
}

/// The task kinds a group accepts, each with a check of its input (the
/// kind's JSON Schema).
pub trait TaskKinds {
    /// None when the kind is not accepted here; otherwise whether `input`
    /// is valid for it, with the reason when not.
    fn check_input(&self, kind: &TaskKind, input: &Value) -> Option<Result<(), String>>;
}

/// A receiving group's checks, with what they need.
pub struct Admission<'a, P: KeyPins, K: TaskKinds> {
    pub me: &'a GroupName,
    pub allowlist: &'a Allowlist,
    pub pins: &'a P,
    pub kinds: &'a K,
    pub replay: ReplayWindow,
    pub max_depth: u32,
}

impl<P: KeyPins, K: TaskKinds> Admission<'_, P, K> {
    /// Checks the signed envelope `raw`, as received, at `now`.
    ///
    /// # Errors
    /// The first [`Refusal`] in the order above.
    pub fn admit(&self, raw: &Value, now: DateTime<Utc>) -> Result<SignedEnvelope, Refusal> {
        self.check_pair(raw)?;
        let signed = verify_signatures(raw, self.pins, now)?;
        let envelope = &signed.envelope;
        self.replay.check(envelope.created, now)?;
        let chain = signed.chain();
        check_links(&chain)?;
        check_route(envelope, self.me)?;
        check_depth(envelope, self.max_depth)?;
        check_budgets(&chain)?;
        match self.kinds.check_input(&envelope.kind, &envelope.input) {
            None => Err(Refusal::UnknownKind(envelope.kind.clone())),
            Some(Err(why)) => Err(Refusal::InvalidInput {
                kind: envelope.kind.clone(),
                why,
            }),
            Some(Ok(())) => Ok(signed),
        }
    }

    /// The pair first, from the claims as received: an unlisted sender is
    /// turned away before any signature work is spent on it (the signature
    /// check that follows confirms the claims).
    fn check_pair(&self, raw: &Value) -> Result<(), Refusal> {
        let claim = |field: &str| {
            raw["envelope"][field]
                .as_str()
                .ok_or_else(|| Refusal::Malformed(format!("envelope.{field} is missing")))
        };
        let from =
            GroupName::parse(claim("from")?).map_err(|e| Refusal::Malformed(e.to_string()))?;
        let kind =
            TaskKind::parse(claim("kind")?).map_err(|e| Refusal::Malformed(e.to_string()))?;
        if !self.allowlist.allows(&from, self.me, &kind) {
            return Err(Refusal::PairNotAllowed {
                from,
                to: self.me.clone(),
                kind,
            });
        }
        Ok(())
    }
}
