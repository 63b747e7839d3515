//! Tasks between agent groups. A group passes a task to another as a signed,
//! structured envelope; the route and depth travel with it and are covered by
//! its signature, a re-delegated task embeds its signed parent, and a child's
//! budget never exceeds what remains of its parent's. A receiver decides
//! everything from the signed chain and its own pinned keys and allowlist:
//! when each group keeps its own journal, nobody else sees the whole chain.
//!
//! This crate is pure: no database, network or clock. Storage (outbox,
//! inbox, nonces), the relay and the A2A binding build on it.

pub mod admission;
pub mod answer;
pub mod budget;
pub mod build;
pub mod card;
pub mod chain;
pub mod envelope;
pub mod jws;
pub mod key_ring;
pub mod keys;
pub mod kinds;
pub mod names;
pub mod peer_token;
pub mod refusal;
pub mod rules;

pub use admission::{Admission, Allowlist, DEFAULT_MAX_DEPTH, TaskKinds};
pub use answer::{SignedAnswer, TaskAnswer};
pub use budget::{Budget, BudgetExcess, Spent};
pub use card::{CardKeys, fingerprint, read_card, sign_card};
pub use envelope::{ENVELOPE_VERSION, EXTENSION, JwsSignature, SignedEnvelope, TaskEnvelope};
pub use jws::ToSign;
pub use key_ring::{BrokerError, KeyRing, KeyVersion, MasterKey, PublicVersion, SealedSeed};
pub use keys::{KeyPins, PinnedKey, PinnedKeys, SigningKey};
pub use kinds::{KindError, KindRegistry};
pub use names::{GroupName, KeyId, KeyRef, NameError, TaskKey, TaskKind};
pub use refusal::Refusal;
pub use rules::ReplayWindow;
