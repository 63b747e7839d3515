//! SQLite's one writer, shared in order of who waits first, except that
//! background work gives way: interactive writers (a person waits on them)
//! queue for the lock directly, while background writers first queue among
//! themselves, so at most one of them stands in the lock's queue at a time,
//! and that one waits (briefly) while interactive writers are waiting. An
//! approval therefore waits for at most the one background transaction in
//! progress, not for a backlog's worth of them.
//!
//! Whether the current task is background work is a task-local mark set by
//! whoever starts the work ([`in_background`]); tasks started from a marked
//! task carry the mark on ([`with_priority_of_caller`]).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, Notify, OwnedMutexGuard};

tokio::task_local! {
    static BACKGROUND: bool;
}

/// Runs `work` as background work: its write transactions give way to
/// interactive ones.
pub async fn in_background<F: Future>(work: F) -> F::Output {
    BACKGROUND.scope(true, work).await
}

/// Whether the current task runs background work.
#[must_use]
pub fn is_background() -> bool {
    BACKGROUND
        .try_with(|background| *background)
        .unwrap_or(false)
}

/// Wraps a future about to be spawned so it keeps the priority of the task
/// spawning it.
pub fn with_priority_of_caller<F: Future>(work: F) -> impl Future<Output = F::Output> {
    BACKGROUND.scope(is_background(), work)
}

/// How long a background writer lets interactive writers go first before it
/// takes its turn anyway (a steady stream of them must not starve it).
const LONGEST_DEFERRAL: Duration = Duration::from_millis(100);

#[derive(Default)]
pub(crate) struct WriteGate {
    writer: Arc<Mutex<()>>,
    background: Arc<Mutex<()>>,
    interactive_waiting: AtomicUsize,
    no_interactive_waiting: Notify,
}

/// The writer's lock, and for a background writer its place among them.
pub(crate) struct Held {
    _writer: OwnedMutexGuard<()>,
    _background: Option<OwnedMutexGuard<()>>,
}

impl WriteGate {
    pub(crate) async fn enter(&self) -> Held {
        if !is_background() {
            self.interactive_waiting.fetch_add(1, Ordering::SeqCst);
            let writer = self.writer.clone().lock_owned().await;
            if self.interactive_waiting.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.no_interactive_waiting.notify_waiters();
            }
            return Held {
                _writer: writer,
                _background: None,
            };
        }
        let background = self.background.clone().lock_owned().await;
        let _ = tokio::time::timeout(LONGEST_DEFERRAL, self.until_no_interactive_waiting()).await;
        let writer = self.writer.clone().lock_owned().await;
        Held {
            _writer: writer,
            _background: Some(background),
        }
    }

    async fn until_no_interactive_waiting(&self) {
        loop {
            let quiet = self.no_interactive_waiting.notified();
            tokio::pin!(quiet);
            quiet.as_mut().enable();
            if self.interactive_waiting.load(Ordering::SeqCst) == 0 {
                return;
            }
            quiet.await;
        }
    }
}
