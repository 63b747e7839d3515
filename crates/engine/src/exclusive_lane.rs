//! An exclusive lane: strictly one task at a time per named resource (the
//! browser), in this process and across every replica sharing the
//! database.
//!
//! Two layers, each doing what it is good at:
//! - in this process, a fair (first come, first served) async mutex per
//!   resource, so waiters queue in order and wake at once when it frees;
//! - across processes, a lease row (`resource_leases`) taken with one
//!   atomic statement; a process that dies stops holding it when the lease
//!   runs out. Only the head of this process's queue asks the database,
//!   every `retry` while another replica holds it.
//!
//! A hold is given back when the task ends, and also when its future is
//! dropped (a Stop): the local queue moves on at once and the lease row is
//! released by a task the supervisor owns. A task must finish within the
//! lease (the browser's own time limit is shorter), so no renewal is needed.

use crate::clock::Clock;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use storage::{Database, StorageError};
use tokio::sync::{OwnedMutexGuard, watch};

#[derive(Clone)]
pub struct ExclusiveLane {
    db: Database,
    clock: Clock,
    /// This process's name; each hold's name on a lease starts with it.
    process: String,
    lease: Duration,
    retry: Duration,
    queues: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
    /// Tasks of this process waiting for a resource someone else holds.
    waiting: watch::Sender<usize>,
    tasks: runner::Supervisor,
}

impl std::fmt::Debug for ExclusiveLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExclusiveLane")
            .field("process", &self.process)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// One task's turn on a resource; give it back with [`LaneHold::release`].
pub struct LaneHold {
    lane: ExclusiveLane,
    resource: String,
    /// This hold's name on the lease: a release that comes late (after a
    /// Stop) never frees a later hold's lease.
    holder: String,
    _queue: OwnedMutexGuard<()>,
    released: bool,
}

/// Counts a task as waiting until dropped.
struct Waiting<'a>(&'a watch::Sender<usize>);

impl<'a> Waiting<'a> {
    fn start(counter: &'a watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Waiting(counter)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl ExclusiveLane {
    /// A lane whose holds last at most `lease`; a replica holding a
    /// resource is asked again every `retry`.
    pub fn new(
        db: Database,
        clock: Clock,
        tasks: runner::Supervisor,
        lease: Duration,
        retry: Duration,
    ) -> Self {
        ExclusiveLane {
            db,
            clock,
            process: format!("{}:", storage::ids::new_id("lane")),
            lease,
            retry,
            queues: Arc::default(),
            waiting: watch::Sender::new(0),
            tasks,
        }
    }

    /// Waits for `resource` and holds it. Cancel-safe: dropped while
    /// waiting, it leaves the queue; dropped while holding, it gives the
    /// resource back.
    ///
    /// # Errors
    /// Database failures while taking the lease.
    pub async fn acquire(&self, resource: &str) -> Result<LaneHold, StorageError> {
        let queue = self
            .queues
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(resource.to_owned())
            .or_default()
            .clone();
        // Counted as waiting only when someone else has it: here (the
        // queue is taken) or on another replica (the lease is).
        let mut waiting = None;
        let turn = match queue.clone().try_lock_owned() {
            Ok(turn) => turn,
            Err(_) => {
                waiting = Some(Waiting::start(&self.waiting));
                queue.lock_owned().await
            }
        };
        let holder = format!("{}{}", self.process, storage::ids::new_id("hold"));
        loop {
            let now = self.clock.now();
            let until = now + chrono::Duration::from_std(self.lease).unwrap_or_default();
            if storage::browser::leases::try_acquire(
                self.db.conn(),
                resource,
                &holder,
                // This process's earlier hold ended: its turn in the queue
                // was given back before this one began.
                &self.process,
                until,
                now,
            )
            .await?
            {
                break;
            }
            // Another replica holds it: its lease ends or it releases.
            waiting.get_or_insert_with(|| Waiting::start(&self.waiting));
            tokio::time::sleep(self.retry).await;
        }
        drop(waiting);
        Ok(LaneHold {
            lane: self.clone(),
            resource: resource.to_owned(),
            holder,
            _queue: turn,
            released: false,
        })
    }

    /// Waits until `count` tasks of this process wait for a resource
    /// another task (here or on another replica) holds.
    pub async fn waiting(&self, count: usize) {
        let mut seen = self.waiting.subscribe();
        let _reached = seen.wait_for(|n| *n >= count).await;
    }
}

impl LaneHold {
    /// Gives the resource back.
    pub async fn release(mut self) {
        self.released = true;
        release(&self.lane, &self.resource, &self.holder).await;
    }
}

impl Drop for LaneHold {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        // Dropped mid-task (a Stop): the local queue moves on with the
        // guard; the lease row goes in a task of its own.
        let lane = self.lane.clone();
        let resource = self.resource.clone();
        let holder = self.holder.clone();
        self.lane.tasks.spawn("release exclusive lane", async move {
            release(&lane, &resource, &holder).await;
        });
    }
}

async fn release(lane: &ExclusiveLane, resource: &str, holder: &str) {
    if let Err(error) = storage::browser::leases::release(lane.db.conn(), resource, holder).await {
        // The lease runs out by itself; other replicas wait until then.
        tracing::warn!(%error, lane.resource = resource, "releasing a lane's lease failed");
    }
}
