//! Live updates: every committed state change is announced here, so pages
//! can update without reloading.
//!
//! With SQLite (one process) announcements go straight to this process's
//! subscribers. With PostgreSQL (several replicas) they go through
//! `NOTIFY countersign_proposals`, and every replica's listener hands them to
//! its own subscribers, so a page served by one replica sees changes made by
//! another.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

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
    sender: broadcast::Sender<LiveEvent>,
    /// Set on PostgreSQL: announcements go through NOTIFY.
    notify: Option<sqlx::PgPool>,
    /// Whether announcements reach this process's subscribers now: always
    /// on SQLite; on PostgreSQL while the listener holds its LISTEN.
    listening: watch::Receiver<bool>,
}

impl LiveUpdates {
    /// Updates for the database's backend; on PostgreSQL this starts the
    /// listener that feeds this process's subscribers.
    pub fn for_database(db: &storage::Database) -> Self {
        let sender = broadcast::channel(1024).0;
        let notify = db.postgres_pool().cloned();
        let (listening_tx, listening) = watch::channel(notify.is_none());
        if let Some(pool) = &notify {
            tokio::spawn(listen(pool.clone(), sender.clone(), listening_tx));
        }
        LiveUpdates {
            sender,
            notify,
            listening,
        }
    }

    /// Returns once announcements reach this process's subscribers (at once
    /// on SQLite; on PostgreSQL when the listener's LISTEN is in place), so
    /// whoever must not miss the next change waits on this, not on time.
    pub async fn listening(&self) {
        let mut listening = self.listening.clone();
        // The sender lives as long as the listener task; if it is gone, so
        // is every announcement, and waiting longer would never end.
        let _ = listening.wait_for(|ready| *ready).await;
    }

    /// Announces a committed change; nobody listening is fine.
    pub fn publish(&self, change: ProposalChanged) {
        self.publish_all(vec![change]);
    }

    /// Announces the changes a transaction committed, in order. On
    /// PostgreSQL a batch travels in as few NOTIFYs as its size allows (a
    /// payload is a JSON array and must stay under PostgreSQL's 8000 bytes).
    pub fn publish_all(&self, changes: Vec<ProposalChanged>) {
        if changes.is_empty() {
            return;
        }
        match &self.notify {
            None => {
                for change in changes {
                    let _ = self.sender.send(LiveEvent::Changed(change));
                }
            }
            Some(pool) => announce(pool.clone(), CHANNEL, notify_payloads(&changes)),
        }
    }

    /// Announces a committed conversation change; nobody listening is fine.
    pub fn publish_conversation(&self, change: ConversationChanged) {
        match &self.notify {
            None => {
                let _ = self.sender.send(LiveEvent::Conversation(change));
            }
            Some(pool) => announce(
                pool.clone(),
                CONVERSATION_CHANNEL,
                vec![serde_json::to_string(&change).unwrap_or_default()],
            ),
        }
    }

    /// Tells this process's subscribers that changes may have been missed.
    pub fn resync(&self) {
        let _ = self.sender.send(LiveEvent::Resync);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LiveEvent> {
        self.sender.subscribe()
    }
}

/// Forwards NOTIFY payloads to local subscribers, reconnecting after errors.
/// Sends `payloads` on `channel` by NOTIFY, off the caller's path: a live
/// announcement is a hint to reload (a page that misses one catches up on
/// its next resync), so nothing waits for it and a failure is only logged.
fn announce(pool: sqlx::PgPool, channel: &'static str, payloads: Vec<String>) {
    tokio::spawn(async move {
        for payload in payloads {
            let sent = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(channel)
                .bind(payload)
                .execute(&pool)
                .await;
            if let Err(error) = sent {
                tracing::warn!(%error, channel, "could not announce a live change");
            }
        }
    });
}

async fn listen(
    pool: sqlx::PgPool,
    sender: broadcast::Sender<LiveEvent>,
    listening: watch::Sender<bool>,
) {
    loop {
        match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(mut listener) => {
                if let Err(error) = listener.listen_all([CHANNEL, CONVERSATION_CHANNEL]).await {
                    tracing::warn!(%error, "could not LISTEN for proposal changes");
                } else {
                    listening.send_replace(true);
                    loop {
                        match listener.recv().await {
                            Ok(notification) if notification.channel() == CONVERSATION_CHANNEL => {
                                if let Ok(change) = serde_json::from_str::<ConversationChanged>(
                                    notification.payload(),
                                ) {
                                    let _ = sender.send(LiveEvent::Conversation(change));
                                }
                            }
                            Ok(notification) => {
                                let changes: Vec<ProposalChanged> =
                                    serde_json::from_str(notification.payload())
                                        .unwrap_or_default();
                                for change in changes {
                                    let _ = sender.send(LiveEvent::Changed(change));
                                }
                            }
                            Err(error) => {
                                tracing::warn!(%error, "proposal change listener lost its connection");
                                break;
                            }
                        }
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "could not connect the proposal change listener"),
        }
        listening.send_replace(false);
        if pool.is_closed() {
            return;
        }
        // Tell pages to reload what they show: changes may have been missed.
        let _ = sender.send(LiveEvent::Resync);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The most bytes of changes one NOTIFY carries (PostgreSQL's limit is 8000).
const NOTIFY_BYTES: usize = 7000;

/// JSON arrays of changes, each small enough for one NOTIFY.
fn notify_payloads(changes: &[ProposalChanged]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut bytes = 2;
    for change in changes {
        let json = serde_json::to_string(change).unwrap_or_default();
        if !current.is_empty() && bytes + json.len() + 1 > NOTIFY_BYTES {
            payloads.push(format!("[{}]", current.join(",")));
            current.clear();
            bytes = 2;
        }
        bytes += json.len() + 1;
        current.push(json);
    }
    if !current.is_empty() {
        payloads.push(format!("[{}]", current.join(",")));
    }
    payloads
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(n: usize) -> ProposalChanged {
        ProposalChanged {
            proposal_id: format!("prp_{n:040}"),
            order_id: format!("order-{n}"),
            status: "verified".into(),
            customer_id: Some(format!("usr_{n:030}")),
        }
    }

    #[test]
    fn many_changes_travel_in_notify_sized_arrays_that_read_back_in_order() {
        let changes: Vec<_> = (0..200).map(change).collect();
        let payloads = notify_payloads(&changes);
        assert!(payloads.len() > 1, "200 changes do not fit one NOTIFY");
        assert!(payloads.iter().all(|p| p.len() < 8000));
        let read: Vec<ProposalChanged> = payloads
            .iter()
            .flat_map(|p| serde_json::from_str::<Vec<ProposalChanged>>(p).unwrap())
            .collect();
        assert_eq!(read, changes);
    }
}
