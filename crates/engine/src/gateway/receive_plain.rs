//! Receiving from a plain A2A peer: a message with no signed envelope, from
//! a group that proved itself with the secret an admin issued it
//! (`peer_secrets`). Load (the pairs allowed without signatures, the kind's
//! schema) → decide → save as any task is saved (the inbox recognises the
//! same message delivered again), with an envelope built here on the peer's
//! behalf and no signature: the task is a root (route: the peer alone), its
//! budget one step, it is never passed on, and everything about it says
//! unsigned.

use super::receive::{ReceiveError, ReceivedTask, Receiver};
use chrono::Duration;
use gateway::build::{self, NewTask};
use gateway::{
    Budget, GroupName, JwsSignature, KeyId, KeyRef, Refusal, SignedEnvelope, TaskKey, TaskKind,
    TaskKinds,
};
use serde_json::{Value, json};
use storage::gateway::{inbox, unsigned};

/// A task as a plain peer's message carries it.
#[derive(Debug, Clone)]
pub struct PlainTask {
    /// The A2A message id: the task key, so a resend is the same task.
    pub message_id: String,
    /// The kind the message names (`metadata.kind`); None when the pair
    /// allows one kind only.
    pub kind: Option<String>,
    /// The message's data part.
    pub input: Value,
}

/// How long a plain peer's task may take to answer.
const PLAIN_DEADLINE_MINUTES: i64 = 10;

/// The key id an envelope built for a plain peer names: no key signed it.
const UNSIGNED_KEY_ID: &str = "unsigned";

/// Whether `signed` was built for a plain peer, not signed by one.
#[must_use]
pub fn is_unsigned(signed: &SignedEnvelope) -> bool {
    signed.signature.signature.is_empty()
}

/// Whether `earlier` is the task a plain peer's message `asked` makes: the
/// same message delivered again (its envelope here is rebuilt each time,
/// so it is compared by what the peer sent: kind and input).
pub(super) fn same_plain_task(earlier: &inbox::InboxTask, asked: &SignedEnvelope) -> bool {
    SignedEnvelope::from_stored(&earlier.envelope).is_ok_and(|stored| {
        is_unsigned(&stored)
            && stored.envelope.kind == asked.envelope.kind
            && stored.envelope.input == asked.envelope.input
    })
}

fn malformed(why: impl Into<String>) -> Refusal {
    Refusal::Malformed(why.into())
}

impl Receiver {
    /// Receives `task` from plain peer `from` (authenticated by its secret).
    ///
    /// # Errors
    /// [`ReceiveError::Refused`] (journaled) for a pair not allowed without
    /// signatures, an unknown kind or an input its schema refuses, a message
    /// id that is not a task key, or one used before for another task (a
    /// resend of the same message is the task it made);
    /// storage failures (nothing was accepted).
    pub async fn receive_plain(
        &self,
        from: &GroupName,
        task: PlainTask,
    ) -> Result<ReceivedTask, ReceiveError> {
        let now = self.clock.now();
        let claims = json!({ "envelope": {
            "from": from,
            "kind": task.kind,
            "task_key": format!("a2a:{}", task.message_id),
        }});
        let built = match self.admit_plain(from, &task).await? {
            Ok(kind) => self.build_plain(from, kind, &task, now),
            Err(refusal) => Err(refusal),
        };
        let signed = match built {
            Ok(signed) => signed,
            Err(refusal) => return Err(self.refuse(&claims, refusal).await),
        };
        // A resend of the same message, or a clash with another task under
        // its id, is the inbox's to tell (`Receiver::save`), in the
        // transaction that would write it.
        let raw = serde_json::to_value(&signed)
            .map_err(|e| ReceiveError::Storage(storage::StorageError::Corrupt(e.to_string())))?;
        self.save(&raw, &signed, now).await
    }

    /// The kind the task is taken as, once the pair, the kind and its input
    /// checked out; or the refusal.
    async fn admit_plain(
        &self,
        from: &GroupName,
        task: &PlainTask,
    ) -> Result<Result<TaskKind, Refusal>, ReceiveError> {
        let allowed: Vec<String> = unsigned::list(self.db.conn())
            .await?
            .into_iter()
            .filter(|pair| pair.from_group == from.as_str() && pair.to_group == self.me.as_str())
            .map(|pair| pair.kind)
            .collect();
        let kind = match (&task.kind, allowed.as_slice()) {
            (Some(named), _) => match TaskKind::parse(named) {
                Ok(kind) => kind,
                Err(e) => return Ok(Err(malformed(e.to_string()))),
            },
            (None, [only]) => match TaskKind::parse(only) {
                Ok(kind) => kind,
                Err(e) => return Ok(Err(malformed(e.to_string()))),
            },
            (None, []) => {
                return Ok(Err(malformed(format!(
                    "{from} may send no task here without signatures: an admin allows a pair first"
                ))));
            }
            (None, _) => {
                return Ok(Err(malformed(format!(
                    "name the task kind in params.message.metadata.kind: {from} may send {}",
                    allowed.join(", ")
                ))));
            }
        };
        if !allowed.iter().any(|k| k == kind.as_str()) {
            return Ok(Err(Refusal::PairNotAllowed {
                from: from.clone(),
                to: self.me.clone(),
                kind,
            }));
        }
        Ok(match self.kinds.check_input(&kind, &task.input) {
            None => Err(Refusal::UnknownKind(kind)),
            Some(Err(why)) => Err(Refusal::InvalidInput { kind, why }),
            Some(Ok(())) => Ok(kind),
        })
    }

    fn build_plain(
        &self,
        from: &GroupName,
        kind: TaskKind,
        task: &PlainTask,
        now: domain::Timestamp,
    ) -> Result<SignedEnvelope, Refusal> {
        let task_key = TaskKey::parse(&format!("a2a:{}", task.message_id))
            .map_err(|e| malformed(format!("the message id makes no task key: {e}")))?;
        let envelope = build::root(NewTask {
            task_key,
            kind,
            input: task.input.clone(),
            to: self.me.clone(),
            budget: Budget {
                model_calls: 0,
                steps: 1,
                tokens: 0,
                money: None,
                deadline: now + Duration::minutes(PLAIN_DEADLINE_MINUTES),
            },
            signer: KeyRef {
                group: from.clone(),
                key_id: KeyId::parse(UNSIGNED_KEY_ID).map_err(|e| malformed(e.to_string()))?,
                version: 1,
            },
            created: now,
        })?;
        Ok(SignedEnvelope {
            envelope,
            signature: JwsSignature {
                protected: String::new(),
                signature: String::new(),
            },
        })
    }
}
