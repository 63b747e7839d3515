//! Live updates: every committed state change is announced here, so pages
//! can update without reloading.
//!
//! What the announcements mean lives here; how they travel between
//! replicas (NOTIFY on PostgreSQL, in-process on SQLite) is storage's
//! (`storage::live`).

use serde::{Deserialize, Serialize};
use storage::live::{Announcement, Announcer};
use tokio::sync::broadcast;

/// The PostgreSQL channel changes travel on.
pub const CHANNEL: &str = "countersign_proposals";
/// The PostgreSQL channel conversation changes travel on.
pub const CONVERSATION_CHANNEL: &str = "countersign_conversations";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalChanged {
    pub proposal_id: String,
    pub order_id: String,
    pub status: String,
    /// The customer the refund is for: they may watch it too.
    pub customer_id: Option<String>,
    /// The new state itself, with its version: a page shows it at once,
    /// without asking again (and keeps whichever of this and what it read
    /// is newer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<domain::proposal::ProposalState>,
    #[serde(default)]
    pub state_version: i64,
}

impl ProposalChanged {
    /// The announcement of `stored` as it was just written.
    pub fn of(stored: &storage::proposals::StoredProposal) -> ProposalChanged {
        ProposalChanged {
            proposal_id: stored.proposal.id.clone(),
            order_id: stored.proposal.order_id.clone(),
            status: stored.status().as_str().to_owned(),
            customer_id: stored.proposal.provenance.on_behalf_of.clone(),
            state: Some(stored.state.clone()),
            state_version: stored.state_version,
        }
    }
}

/// A conversation changed outside an agent turn: a person was asked for,
/// took it over, wrote in it or handed it back, or the customer wrote to
/// that person. Who may hear it is who may read the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationChanged {
    pub conversation_id: String,
    pub owner_id: String,
    pub customer_id: String,
    /// The widget session that opened it (the only one that may hear it).
    pub widget_session_id: Option<String>,
}

/// What subscribers hear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveEvent {
    /// A committed change of one proposal.
    Changed(ProposalChanged),
    /// A committed change of one conversation's handover or transcript.
    Conversation(ConversationChanged),
    /// Changes may have been missed (the PostgreSQL listener lost its
    /// connection): whoever watches anything should reload what it shows.
    Resync,
}

#[derive(Clone)]
pub struct LiveUpdates {
    /// The transport (storage's NOTIFY on PostgreSQL, in-process on SQLite).
    announcer: Announcer<LiveEvent>,
}

impl Announcement for LiveEvent {
    fn decode(channel: &str, payload: &str) -> Vec<Self> {
        if channel == CONVERSATION_CHANNEL {
            serde_json::from_str::<ConversationChanged>(payload)
                .map(|change| vec![LiveEvent::Conversation(change)])
                .unwrap_or_default()
        } else {
            serde_json::from_str::<Vec<ProposalChanged>>(payload)
                .unwrap_or_default()
                .into_iter()
                .map(LiveEvent::Changed)
                .collect()
        }
    }

    fn resync() -> Self {
        LiveEvent::Resync
    }
}

impl LiveUpdates {
    /// Updates for the database's backend; on PostgreSQL the relay that
    /// sends them by NOTIFY and listens for other replicas' runs under
    /// `tasks` until shutdown.
    pub fn for_database(db: &storage::Database, tasks: &runner::Supervisor) -> Self {
        let (announcer, relay) = Announcer::for_database(db, &[CHANNEL, CONVERSATION_CHANNEL]);
        if let Some(relay) = relay {
            let stopping = tasks.stopping();
            tasks.spawn("live relay", async move {
                relay.run(stopping.cancelled()).await;
            });
        }
        LiveUpdates { announcer }
    }

    /// Returns once announcements reach this process's subscribers (at once
    /// on SQLite; on PostgreSQL when the listener's LISTEN is in place), so
    /// whoever must not miss the next change waits on this, not on time.
    pub async fn listening(&self) {
        self.announcer.listening().await;
    }

    /// Announces a committed change; nobody listening is fine.
    pub fn publish(&self, change: ProposalChanged) {
        self.publish_all(vec![change]);
    }

    /// Announces the changes a transaction committed, in order. On
    /// PostgreSQL a batch travels in as few NOTIFYs as its size allows (a
    /// payload is a JSON array and must stay under PostgreSQL's 8000 bytes).
    pub fn publish_all(&self, changes: Vec<ProposalChanged>) {
        let events = changes.into_iter().map(LiveEvent::Changed).collect();
        self.announcer.announce(CHANNEL, events, |events| {
            let changes: Vec<&ProposalChanged> = events
                .iter()
                .filter_map(|event| match event {
                    LiveEvent::Changed(change) => Some(change),
                    _ => None,
                })
                .collect();
            storage::live::json_arrays(&changes)
        });
    }

    /// Announces a committed conversation change; nobody listening is fine.
    pub fn publish_conversation(&self, change: ConversationChanged) {
        let payload = serde_json::to_string(&change).unwrap_or_default();
        self.announcer.announce(
            CONVERSATION_CHANNEL,
            vec![LiveEvent::Conversation(change)],
            |_| vec![payload],
        );
    }

    /// Tells this process's subscribers that changes may have been missed.
    pub fn resync(&self) {
        self.announcer.resync();
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LiveEvent> {
        self.announcer.subscribe()
    }

    /// How many subscribers this process holds now (open live streams).
    pub fn subscribers(&self) -> usize {
        self.announcer.subscribers()
    }
}
