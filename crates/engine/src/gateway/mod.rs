//! The gateway between agent groups. Receiving: a task another group sends
//! is checked against what this group trusts (pinned keys, allowed pairs,
//! the kinds it accepts), written to the inbox once with its journal event,
//! and answered on the gateway lane; a refusal is journaled with its
//! reason. Sending: a task is signed and written to the outbox with its
//! journal event and relay item, delivered by the gateway lane with
//! backoff, and followed until the peer's final answer or its deadline.

mod admin;
mod card_pins;
mod desk;
mod keys;
mod kinds;
mod listing;
mod own_keys;
mod peer_secrets;
mod receive;
mod receive_plain;
mod relay;
mod send;
mod trust;
mod unsigned_pairs;
mod vault;
mod watch;
mod work_items;

pub use admin::{GatewayOverview, GatewayTrust, KeyToPin, RefusedTask, TaskChain, TrustError};
pub use card_pins::{CardPins, fetch_card};
pub use desk::Forwards;
pub use gateway::fingerprint as key_fingerprint;
pub use keys::{KeyBroker, Keys};
pub use kinds::{RETURNS_INSPECTION, catalogue};
pub use listing::{ListError, TaskPage, TaskQuery};
pub use own_keys::{GATEWAY_KEY_ID, OwnKeyError, OwnKeys};
pub use peer_secrets::{PEER_SECRET_PREFIX, secret_digest};
pub use receive::{CancelError, InboxTaskView, ReceiveError, ReceivedTask, Receiver};
pub use receive_plain::{PlainTask, is_unsigned};
pub use send::{OutboundTask, OutboxTaskView, SendError, Sender};
pub use vault::VaultKeys;

use crate::clock::Clock;
use connectors::a2a::A2aClient;
use connectors::vault::TransitClient;
use gateway::{GroupName, KeyId, KindRegistry, MasterKey, NameError};
use runner::{Backoff, LaneSpec, Priority, RunnerBuilder};
use std::sync::Arc;
use storage::Database;

/// The work runner's lane for the gateway: relaying tasks to peers,
/// following them, and answering the tasks received.
pub const GATEWAY_LANE: &str = "gateway";

/// The gateway lane: peers answer over the network, so the bound is on
/// requests in flight, not on this machine's CPU; a peer that is down is
/// tried again from 1 s, doubling to 10 minutes.
#[must_use]
pub fn lane() -> LaneSpec {
    LaneSpec::new(
        GATEWAY_LANE,
        "Delivers tasks to other agent groups and follows them to their answer; answers the tasks other groups sent.",
        16,
        Priority::Background,
    )
    // Looks at a peer's answer are woken when they fall due (in this
    // process); the poll finds what other replicas queued.
    .with_poll_every(std::time::Duration::from_secs(1))
    .with_backoff(Backoff {
        first: chrono::Duration::seconds(1),
        longest: chrono::Duration::minutes(10),
    })
}

/// Where this group's signing key is kept.
#[derive(Clone)]
pub enum KeySource {
    /// The embedded broker: versions sealed under this master key in the
    /// database.
    Embedded(MasterKey),
    /// Vault's (or OpenBao's) transit engine; the key id is the transit
    /// key's name.
    Vault(TransitClient, KeyId),
}

impl KeySource {
    /// # Errors
    /// [`NameError`] for a transit key name that is not a valid key id.
    pub fn vault(client: TransitClient) -> Result<Self, NameError> {
        let key_id = KeyId::parse(client.key_name())?;
        Ok(Self::Vault(client, key_id))
    }

    /// This group's key from this source.
    pub fn open(
        self,
        db: &Database,
        clock: &Clock,
        group: &GroupName,
        overlap: chrono::Duration,
    ) -> Keys {
        match self {
            Self::Embedded(master) => Keys::new(OwnKeys::new(
                db.clone(),
                clock.clone(),
                group.clone(),
                master,
                overlap,
            )),
            Self::Vault(client, key_id) => Keys::new(VaultKeys::new(
                client,
                key_id,
                db.clone(),
                clock.clone(),
                group.clone(),
                overlap,
            )),
        }
    }
}

/// What the gateway is made of: this group's name, where its key is kept
/// (no key: it receives but cannot send), the kinds it speaks, and its
/// client for peers.
#[derive(Clone)]
pub struct GatewayParts {
    pub group: GroupName,
    pub keys: Option<KeySource>,
    /// How long a retired key version still verifies.
    pub key_overlap: chrono::Duration,
    pub kinds: Arc<KindRegistry>,
    pub client: A2aClient,
    /// The group the refund specialist asks about returned parcels, if any.
    pub returns_desk: Option<GroupName>,
    /// The group asked, per kind, when this group has no record of its own.
    pub forwards: Forwards,
    /// The chain depth past which tasks are refused and not passed on.
    pub max_depth: u32,
}

/// This group's gateway.
#[derive(Clone)]
pub struct Gateway {
    pub group: GroupName,
    pub kinds: Arc<KindRegistry>,
    pub receiver: Receiver,
    /// This group's key; None without one (no master key, no Vault).
    pub own_keys: Option<Keys>,
    /// None without a master key: nothing can be signed.
    pub sender: Option<Sender>,
    desk: desk::Desk,
    relay: Option<relay::Relay>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("group", &self.group)
            .field("sends", &self.sender.is_some())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    pub(crate) fn new(
        db: &Database,
        clock: &Clock,
        wake: &runner::Wake,
        parts: &GatewayParts,
    ) -> Self {
        let own_keys = parts
            .keys
            .clone()
            .map(|source| source.open(db, clock, &parts.group, parts.key_overlap));
        let sender = own_keys.clone().map(|keys| {
            Sender::new(
                db.clone(),
                clock.clone(),
                keys,
                parts.kinds.clone(),
                wake.clone(),
            )
        });
        let receiver = Receiver::new(
            db.clone(),
            clock.clone(),
            parts.group.clone(),
            parts.kinds.clone(),
            wake.clone(),
        )
        .with_max_depth(parts.max_depth)
        .with_own_keys(own_keys.clone());
        let desk = desk::Desk {
            db: db.clone(),
            clock: clock.clone(),
            kinds: parts.kinds.clone(),
            me: parts.group.clone(),
            keys: own_keys.clone(),
            sender: sender.clone(),
            forwards: Arc::new(parts.forwards.clone()),
            max_depth: parts.max_depth,
            changed: receiver.changed.clone(),
        };
        Gateway {
            group: parts.group.clone(),
            kinds: parts.kinds.clone(),
            receiver,
            relay: sender.clone().map(|sender| relay::Relay {
                sender,
                client: parts.client.clone(),
                me: parts.group.clone(),
            }),
            sender,
            desk,
            own_keys,
        }
    }

    /// Adds the gateway lane and its handlers to a runner.
    pub(crate) fn register(&self, builder: RunnerBuilder) -> RunnerBuilder {
        let builder = desk::register(&self.desk, builder.lane(lane()));
        match &self.relay {
            Some(relay) => relay::register(relay, builder),
            None => builder,
        }
    }
}
