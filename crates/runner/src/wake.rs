//! The door between the use cases of this process and its runner.
//!
//! A use case that committed an item wakes the item's lane, so it starts
//! without waiting for the lane's next poll (other replicas find it on
//! their poll). A use case that can write its item already claimed for
//! this process's runner (the approval that calls for a refund send) asks
//! [`Wake::taker`] for the claim to write and, after the commit, hands the
//! item over: the lane runs it without a claim transaction of its own.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use storage::work::WorkItem;
use tokio::sync::Notify;

#[derive(Clone, Default)]
pub struct Wake {
    lanes: Arc<Mutex<HashMap<String, Arc<Door>>>>,
}

/// One lane's door.
#[derive(Default)]
pub(crate) struct Door {
    /// Rung when an item was queued: the lane looks in the table.
    pub(crate) bell: Notify,
    /// Rung when an item was handed over: the lane takes it from here.
    pub(crate) handed_bell: Notify,
    /// Items claimed for this process, waiting for a slot of the lane.
    handed: Mutex<VecDeque<WorkItem>>,
    /// Set while a runner of this process runs the lane.
    taker: Mutex<Option<Taker>>,
    /// When items this process queued for later fall due: the lane looks
    /// then, rather than at its next poll.
    due: Mutex<BinaryHeap<Reverse<tokio::time::Instant>>>,
    /// Rung when an earlier due time was added: the lane sleeps again.
    pub(crate) due_bell: Notify,
}

/// Who claims an item written for a lane this process runs, and for how
/// long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taker {
    pub owner: String,
    pub lease: Duration,
}

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wake").finish_non_exhaustive()
    }
}

impl Wake {
    /// Wakes the lane (a no-op when no runner in this process runs it).
    pub fn lane(&self, lane: &str) {
        self.door(lane).bell.notify_one();
    }

    /// Wakes the lane `after` from now, when an item queued for then falls
    /// due (a no-op when no runner in this process runs it; other replicas
    /// find it on their poll).
    pub fn lane_after(&self, lane: &str, after: Duration) {
        let door = self.door(lane);
        // A little late rather than early: the claim compares the item's
        // due time with the wall clock, the timer runs on the monotonic one.
        let at = tokio::time::Instant::now() + after + Duration::from_millis(2);
        lock(&door.due).push(Reverse(at));
        door.due_bell.notify_one();
    }

    /// The claim to write for a new item of `lane` when a runner of this
    /// process runs it now; None otherwise (write it queued for whichever
    /// worker claims it).
    #[must_use]
    pub fn taker(&self, lane: &str) -> Option<Taker> {
        lock(&self.door(lane).taker).clone()
    }

    /// Hands items committed as claimed by [`Wake::taker`] to the runner.
    /// One the runner stopped before taking is handed back at its shutdown,
    /// or taken back when its worker starts again.
    pub fn hand_over(&self, items: Vec<WorkItem>) {
        for item in items {
            let door = self.door(&item.lane);
            lock(&door.handed).push_back(item);
            door.handed_bell.notify_one();
        }
    }

    pub(crate) fn door(&self, lane: &str) -> Arc<Door> {
        lock(&self.lanes)
            .entry(lane.to_owned())
            .or_default()
            .clone()
    }
}

impl Door {
    pub(crate) fn take_handed(&self) -> Option<WorkItem> {
        lock(&self.handed).pop_front()
    }

    /// The items waiting for a slot (their leases are renewed with the
    /// running ones').
    pub(crate) fn handed_ids(&self) -> Vec<String> {
        lock(&self.handed)
            .iter()
            .map(|item| item.id.clone())
            .collect()
    }

    pub(crate) fn drain_handed(&self) -> Vec<WorkItem> {
        lock(&self.handed).drain(..).collect()
    }

    pub(crate) fn set_taker(&self, taker: Option<Taker>) {
        *lock(&self.taker) = taker;
    }

    /// The earliest time an item queued for later falls due, and whether
    /// one fell due already (those are forgotten: the caller looks now).
    pub(crate) fn next_due(&self) -> (Option<tokio::time::Instant>, bool) {
        let now = tokio::time::Instant::now();
        let mut due = lock(&self.due);
        let mut passed = false;
        while due.peek().is_some_and(|Reverse(at)| *at <= now) {
            due.pop();
            passed = true;
        }
        (due.peek().map(|Reverse(at)| *at), passed)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
