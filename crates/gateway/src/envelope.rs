//! The task envelope: what one agent group asks of another, structured and
//! versioned, never raw chat text. Its signature covers every field,
//! including the route, the depth, the budget and, for a re-delegated task,
//! the whole signed parent, so any receiver can verify the chain back to the
//! root without asking anyone.

use crate::budget::Budget;
use crate::names::{GroupName, KeyRef, TaskKey, TaskKind};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The envelope format this build writes and reads.
pub const ENVELOPE_VERSION: u32 = 1;

/// The A2A extension under which a signed envelope travels: declared in the
/// agent card, named in `A2A-Extensions`, the key of the envelope in the
/// message's metadata.
pub const EXTENSION: &str = "https://countersign.dev/a2a/signed-task/v1";

/// One task, as signed by the group that sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEnvelope {
    /// [`ENVELOPE_VERSION`].
    pub v: u32,
    pub task_key: TaskKey,
    pub kind: TaskKind,
    /// Checked against the kind's input schema by the receiver.
    pub input: serde_json::Value,
    /// The sending group; it signs the envelope.
    pub from: GroupName,
    /// The receiving group.
    pub to: GroupName,
    /// The first task of the chain (this task's own key at the root).
    pub root_key: TaskKey,
    /// The task this one was delegated from; None at the root.
    pub parent_key: Option<TaskKey>,
    /// The groups the chain has passed, in order, ending with the sender.
    pub route: Vec<GroupName>,
    /// Hops from the root: `route.len() - 1`.
    pub depth: u32,
    /// What this task may spend.
    pub budget: Budget,
    /// What the sender says remains of the parent's budget when it
    /// delegated; `budget` must fit within it, and it within the parent's
    /// own budget. None at the root.
    pub parent_remaining: Option<Budget>,
    pub created: DateTime<Utc>,
    /// Unique per envelope within the replay window.
    pub nonce: String,
    /// The key that signed this envelope; a key of `from`.
    pub signer: KeyRef,
    /// The signed parent envelope, embedded whole; None at the root.
    pub parent: Option<Box<SignedEnvelope>>,
}

/// A JWS signature in the flattened JSON form with a detached payload
/// (RFC 7515 §7.2.2 and appendix F): the payload is the RFC 8785 canonical
/// form of the envelope next to it, so nothing is encoded twice. The same
/// shape as an A2A agent card's signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwsSignature {
    /// Base64url of the protected header (`alg`, `kid`, `typ`).
    pub protected: String,
    /// Base64url of the Ed25519 signature.
    pub signature: String,
}

/// An envelope and its signature, as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedEnvelope {
    pub envelope: TaskEnvelope,
    pub signature: JwsSignature,
}

impl SignedEnvelope {
    /// An envelope as it was received and stored (JSON text), read into
    /// its types the way the receiver read it: a peer whose SDK wrote
    /// integers as `4.0` (protobuf's `Struct`) signed the same canonical
    /// form as one that wrote `4`.
    ///
    /// # Errors
    /// Text that is not a signed envelope.
    pub fn from_stored(text: &str) -> Result<Self, serde_json::Error> {
        let raw: serde_json::Value = serde_json::from_str(text)?;
        serde_json::from_value(crate::chain::integral_numbers(raw))
    }

    /// The chain from the root down to this envelope.
    pub fn chain(&self) -> Vec<&TaskEnvelope> {
        let mut chain = vec![&self.envelope];
        let mut current = self;
        while let Some(parent) = &current.envelope.parent {
            chain.push(&parent.envelope);
            current = parent;
        }
        chain.reverse();
        chain
    }
}
