//! Live announcements between replicas. With SQLite (one process) an
//! announcement goes straight to this process's subscribers. With
//! PostgreSQL (several replicas) it travels by `NOTIFY` on its channel, and
//! every replica's listener (`LISTEN`) hands it to its own subscribers, so
//! a page served by one replica hears changes made by another.
//!
//! Storage carries the messages; what they mean is the caller's (the
//! engine's live updates): a message type says how a payload reads back
//! ([`Announcement`]).

use crate::Database;
use serde::Serialize;
use std::future::Future;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};

/// A message subscribers hear.
pub trait Announcement: Clone + Send + 'static {
    /// The messages one NOTIFY payload on `channel` carries; none when it
    /// does not read back.
    fn decode(channel: &str, payload: &str) -> Vec<Self>;

    /// What subscribers hear when announcements may have been missed (the
    /// listener lost its connection): whoever shows anything reloads it.
    fn resync() -> Self;
}

/// Announces committed changes to this process's subscribers, through
/// PostgreSQL's NOTIFY when the database is PostgreSQL.
#[derive(Clone)]
pub struct Announcer<M> {
    sender: broadcast::Sender<M>,
    /// Set on PostgreSQL: announcements go to the [`Relay`], which sends
    /// them by NOTIFY.
    notify: Option<mpsc::UnboundedSender<Notification>>,
    /// Whether announcements reach this process's subscribers now: always
    /// on SQLite; on PostgreSQL while the listener holds its LISTEN.
    listening: watch::Receiver<bool>,
}

impl<M: Announcement> Announcer<M> {
    /// Announcements for the database's backend. On PostgreSQL they need
    /// the [`Relay`] returned with them running (under the caller's
    /// supervisor, which owns every task): it sends them by NOTIFY and
    /// listens on `channels` for this process's subscribers.
    pub fn for_database(
        db: &Database,
        channels: &'static [&'static str],
    ) -> (Self, Option<Relay<M>>) {
        let sender = broadcast::channel(1024).0;
        let pool = db.postgres_pool().cloned();
        let (listening_tx, listening) = watch::channel(pool.is_none());
        let (notify, relay) = match pool {
            Some(pool) => {
                let (outbox_tx, outbox) = mpsc::unbounded_channel();
                let relay = Relay {
                    pool,
                    channels,
                    sender: sender.clone(),
                    listening: listening_tx,
                    outbox,
                };
                (Some(outbox_tx), Some(relay))
            }
            None => (None, None),
        };
        let announcer = Announcer {
            sender,
            notify,
            listening,
        };
        (announcer, relay)
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

    /// Announces committed `messages` on `channel`, in order: straight to
    /// this process's subscribers, or on PostgreSQL as the NOTIFY payloads
    /// `payloads` makes of them (each under PostgreSQL's 8000 bytes; see
    /// [`json_arrays`]). Nobody listening is fine.
    pub fn announce(
        &self,
        channel: &'static str,
        messages: Vec<M>,
        payloads: impl FnOnce(&[M]) -> Vec<String>,
    ) {
        if messages.is_empty() {
            return;
        }
        match &self.notify {
            None => {
                for message in messages {
                    let _ = self.sender.send(message);
                }
            }
            // The relay is gone only at shutdown; a hint lost then costs
            // other replicas' pages nothing they do not catch up on.
            Some(outbox) => {
                let _ = outbox.send(Notification {
                    channel,
                    payloads: payloads(&messages),
                });
            }
        }
    }

    /// Tells this process's subscribers that changes may have been missed.
    pub fn resync(&self) {
        let _ = self.sender.send(M::resync());
    }

    pub fn subscribe(&self) -> broadcast::Receiver<M> {
        self.sender.subscribe()
    }

    /// How many subscribers this process holds now.
    pub fn subscribers(&self) -> usize {
        self.sender.receiver_count()
    }
}

/// NOTIFY payloads waiting to be sent.
struct Notification {
    channel: &'static str,
    payloads: Vec<String>,
}

/// The PostgreSQL side of an [`Announcer`]: sends its announcements by
/// NOTIFY, off the announcing use case's path (an announcement is a hint
/// to reload, so nothing waits for it and a failure is only logged), and
/// listens for every replica's, reconnecting after errors.
pub struct Relay<M> {
    pool: sqlx::PgPool,
    channels: &'static [&'static str],
    sender: broadcast::Sender<M>,
    listening: watch::Sender<bool>,
    outbox: mpsc::UnboundedReceiver<Notification>,
}

impl<M: Announcement> Relay<M> {
    /// Runs until `stop` completes, then sends what was announced before
    /// it and ends.
    pub async fn run(self, stop: impl Future<Output = ()>) {
        let Relay {
            pool,
            channels,
            sender,
            listening,
            mut outbox,
        } = self;
        {
            let listener = listen(pool.clone(), channels, sender, listening);
            let notifier = async {
                while let Some(notification) = outbox.recv().await {
                    send(&pool, notification).await;
                }
            };
            tokio::select! {
                () = listener => {}
                () = notifier => {}
                () = stop => {}
            }
        }
        outbox.close();
        while let Ok(notification) = outbox.try_recv() {
            send(&pool, notification).await;
        }
    }
}

async fn send(pool: &sqlx::PgPool, notification: Notification) {
    let channel = notification.channel;
    for payload in notification.payloads {
        let sent = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(pool)
            .await;
        if let Err(error) = sent {
            tracing::warn!(%error, channel, "could not announce a live change");
        }
    }
}

/// Forwards NOTIFY payloads to local subscribers, reconnecting after errors.
async fn listen<M: Announcement>(
    pool: sqlx::PgPool,
    channels: &'static [&'static str],
    sender: broadcast::Sender<M>,
    listening: watch::Sender<bool>,
) {
    loop {
        match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(mut listener) => {
                if let Err(error) = listener.listen_all(channels.iter().copied()).await {
                    tracing::warn!(%error, "could not LISTEN for live changes");
                } else {
                    listening.send_replace(true);
                    loop {
                        match listener.recv().await {
                            Ok(notification) => {
                                for message in
                                    M::decode(notification.channel(), notification.payload())
                                {
                                    let _ = sender.send(message);
                                }
                            }
                            Err(error) => {
                                tracing::warn!(%error, "the live change listener lost its connection");
                                break;
                            }
                        }
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "could not connect the live change listener"),
        }
        listening.send_replace(false);
        if pool.is_closed() {
            return;
        }
        // Tell pages to reload what they show: changes may have been missed.
        let _ = sender.send(M::resync());
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The most bytes one NOTIFY carries (PostgreSQL's limit is 8000).
const NOTIFY_BYTES: usize = 7000;

/// JSON arrays of `items`, in order, each small enough for one NOTIFY.
pub fn json_arrays<T: Serialize>(items: &[T]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut bytes = 2;
    for item in items {
        let json = serde_json::to_string(item).unwrap_or_default();
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

    #[test]
    fn many_changes_travel_in_notify_sized_arrays_that_read_back_in_order() {
        let changes: Vec<String> = (0..200).map(|n| format!("change {n:0100}")).collect();
        let payloads = json_arrays(&changes);
        assert!(payloads.len() > 1, "200 changes do not fit one NOTIFY");
        assert!(payloads.iter().all(|p| p.len() < 8000));
        let read: Vec<String> = payloads
            .iter()
            .flat_map(|p| serde_json::from_str::<Vec<String>>(p).unwrap())
            .collect();
        assert_eq!(read, changes);
    }
}
