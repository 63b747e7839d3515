//! Subagents of a turn that a newer message preempted run on in the
//! background: their findings are recorded in the conversation when they
//! end (as the continued result of the call that started them, and a note
//! relaying each), with their events, as soon as no turn holds it. The
//! conversation's Stop ends them, pressed in this process or on another
//! replica (the conversation's `stopped_at`, read on its announcements);
//! then only their events are recorded.

use super::ChatError;
use super::turn::{announced, event_row};
use crate::assistant::Chat;
use crate::assistant::handover::Held;
use crate::assistant::subagents::BackgroundWork;
use crate::assistant::tools::investigate_orders::relay;
use crate::assistant::tools::{INVESTIGATE_ORDERS, Investigation};
use agents::{CancellationToken, Message, ToolCall};
use domain::Timestamp;
use storage::Database;
use tokio::sync::broadcast;
use tracing::Instrument;

use crate::live::LiveEvent;

/// How the background work ended.
enum End {
    /// Every subagent ended on its own (`None`: gathering failed).
    Finished(Option<Investigation>),
    /// Stop, or the process shutting down.
    Stopped,
}

impl Chat {
    /// Runs `work` on under the process's supervisor (see the module).
    /// Called while the preempted turn still holds the conversation's
    /// entry in `RunningTurns`, so the work keeps that entry (its Stop, its
    /// roster, its lane) from here on, whenever the task first runs.
    pub(crate) fn run_in_background(&self, work: BackgroundWork) {
        let (held, stop) = self
            .assistant
            .running()
            .hold_for_background(&work.conversation_id, self.assistant.subagent_limit());
        let chat = self.clone();
        let span = tracing::info_span!("background", conversation.id = %work.conversation_id);
        self.tasks.spawn(
            "background subagents",
            async move {
                let _held = held;
                chat.background(work, stop).await;
            }
            .instrument(span),
        );
    }

    async fn background(self, mut work: BackgroundWork, stop: CancellationToken) {
        let id = work.conversation_id.clone();
        let since = self.now();
        let mut changes = self.live.subscribe();
        let stopping = self.tasks.stopping();
        // A lease other replicas read: a Stop they take reaches this.
        let mut lease = self.lease_background(&id, None).await;
        let end = loop {
            tokio::select! {
                findings = &mut work.findings => break End::Finished(findings.ok()),
                () = stop.cancelled() => break End::Stopped,
                () = stopped_elsewhere(&self.db, &mut changes, &id, since) => break End::Stopped,
                () = stopping.cancelled() => break End::Stopped,
                () = tokio::time::sleep(super::RENEW_EVERY) => {
                    lease = self.lease_background(&id, lease).await;
                }
            }
        };
        let findings = match end {
            End::Finished(findings) => findings,
            End::Stopped => {
                work.control.stop();
                // They end at their next await; their events say where.
                let _ = (&mut work.findings).await;
                tracing::info!("stopped the subagents a preempted turn left running");
                None
            }
        };
        self.record_when_free(&work, findings.as_ref(), lease, &mut changes)
            .await;
    }

    /// Holds (or renews) the conversation's background lease; the lease
    /// written, or the one held before when the write failed.
    async fn lease_background(&self, id: &str, held: Option<Timestamp>) -> Option<Timestamp> {
        let until = self.now() + super::TURN_LEASE;
        let written = async {
            let tx = self.db.begin_write().await?;
            storage::conversations::hold_background(&*tx, id, until).await?;
            tx.commit().await
        }
        .await;
        match written {
            Ok(()) => Some(until),
            Err(error) => {
                tracing::warn!(%error, "the background lease could not be written");
                held
            }
        }
    }

    /// Records the findings and events, and lets go of the lease, as soon
    /// as no turn holds the conversation. (If that never comes the lease
    /// runs out.)
    async fn record_when_free(
        &self,
        work: &BackgroundWork,
        findings: Option<&Investigation>,
        lease: Option<Timestamp>,
        changes: &mut broadcast::Receiver<LiveEvent>,
    ) {
        let id = &work.conversation_id;
        let stopping = self.tasks.stopping();
        loop {
            match self.record_background(work, findings, lease).await {
                Ok(()) => return,
                Err(ChatError::TurnInProgress(_)) => {
                    tokio::select! {
                        () = tokio::time::sleep(super::STOP_POLL) => {}
                        () = announced(changes, id) => {}
                        () = stopping.cancelled() => {
                            tracing::warn!("shutting down before the background findings could be recorded; the proposals they made are kept");
                            return;
                        }
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "the background findings could not be recorded; the proposals they made are kept");
                    return;
                }
            }
        }
    }

    /// Writes what the background work found (if it was not stopped) and
    /// its events, and ends its lease, while no turn holds the conversation.
    async fn record_background(
        &self,
        work: &BackgroundWork,
        findings: Option<&Investigation>,
        lease: Option<Timestamp>,
    ) -> Result<(), ChatError> {
        let id = &work.conversation_id;
        let now = self.now();
        let tx = self.db.begin_write().await?;
        let mut held = Held::take(&*tx, id, now).await?;
        if let Some(findings) = findings {
            // The call the preempted turn made, continued: its result is
            // what the ledger and the next model call read.
            let call_id = format!("{}~background", work.call.id);
            let call = ToolCall::new(&call_id, INVESTIGATE_ORDERS, work.call.arguments.clone());
            let outcome = findings.outcome();
            held.state
                .record_outside_turn(Message::assistant(&work.agent, "", vec![call]));
            held.state.record_outside_turn(Message::tool_result(
                &work.agent,
                &call_id,
                outcome.kind(),
                &outcome.to_model_json(),
            ));
            held.state.record_outside_turn(Message::assistant(
                &work.agent,
                relay(findings),
                Vec::new(),
            ));
        }
        let rows: Vec<_> = work.events.take().iter().map(event_row).collect();
        storage::conversations::insert_events(&*tx, id, &rows).await?;
        if let Some(until) = lease {
            storage::conversations::release_background(&*tx, id, until).await?;
        }
        let stored = held.stored.clone();
        held.save(&*tx, id, now).await?;
        tx.commit().await?;
        self.announce(&stored);
        // A message that arrived while this held the conversation waits.
        self.drain_soon(id);
        Ok(())
    }
}

/// Resolves once Stop is recorded for conversation `id` at or after `since`
/// (pressed on any replica).
async fn stopped_elsewhere(
    db: &Database,
    changes: &mut broadcast::Receiver<LiveEvent>,
    id: &str,
    since: Timestamp,
) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(super::STOP_POLL) => {}
            () = announced(changes, id) => {}
        }
        match storage::conversations::stopped_at(db.conn(), id).await {
            Ok(Some(at)) if at >= since => return,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "reading whether Stop was pressed failed"),
        }
    }
}
