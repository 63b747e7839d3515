//! Combining concurrent requests of one kind into batches.
//!
//! Approvals, provider answers and the ends of work items each take a write
//! transaction. When many arrive at once, doing them one by one pays every
//! statement, round trip and commit (on SQLite, an fsync) once per request,
//! and the database's one writer (SQLite) or the CPU (PostgreSQL) is the
//! limit. Instead, requests queue here; a runner takes everything queued (up
//! to a batch size) and handles it in one write transaction whose statements
//! each cover the whole batch. A lone request is a batch of one and runs at
//! once, so nothing waits for company.
//!
//! Runners are tasks of their own: one starts when a request finds none
//! running, another (up to a limit) only when many requests are waiting,
//! since smaller batches cost more per request; each drains the queue and
//! ends when it is empty. A runner that panics drops its batch and the
//! queue (their callers hear that their request ended without an answer)
//! instead of leaving them waiting for a runner that will never come.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// A request and the channel its answer goes back on.
pub struct Request<A, T, E> {
    ask: A,
    reply: oneshot::Sender<Result<T, E>>,
}

impl<A, T, E> Combiner<Request<A, T, E>>
where
    A: Send + 'static,
    T: Send + 'static,
    E: Send + 'static,
{
    /// Queues `ask`, to be handled by `run` in whatever batch it lands in,
    /// and waits for its answer; `None` when the batch ended without one
    /// (its runner panicked).
    pub async fn call<F, Fut>(self: &Arc<Self>, ask: A, run: F) -> Option<Result<T, E>>
    where
        F: Fn(Vec<Request<A, T, E>>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let (reply, answer) = oneshot::channel();
        self.submit(Request { ask, reply }, run);
        answer.await.ok()
    }
}

/// Answers every request of a batch with `attempt`'s answer for it (one per
/// ask, in order). When the attempt fails for the batch as a whole (a
/// storage error), each request is attempted alone, so one bad request
/// cannot fail the others. The asks are shared, not copied, with the
/// attempt; only that rare retry copies them one by one.
pub async fn answer_each<A, T, E, F, Fut>(batch: Vec<Request<A, T, E>>, attempt: F)
where
    A: Clone,
    F: Fn(Arc<[A]>) -> Fut,
    Fut: Future<Output = Result<Vec<Result<T, E>>, E>>,
{
    let (asks, replies): (Vec<A>, Vec<_>) = batch.into_iter().map(|r| (r.ask, r.reply)).unzip();
    let asks: Arc<[A]> = asks.into();
    let answers: Vec<Option<Result<T, E>>> = match attempt(asks.clone()).await {
        Ok(answers) => answers.into_iter().map(Some).collect(),
        Err(error) if asks.len() == 1 => vec![Some(Err(error))],
        Err(_) => {
            let mut answers = Vec::with_capacity(asks.len());
            for ask in asks.iter() {
                answers.push(match attempt(Arc::from([ask.clone()])).await {
                    Ok(mut alone) if alone.len() == 1 => alone.pop(),
                    Ok(_) => None,
                    Err(error) => Some(Err(error)),
                });
            }
            answers
        }
    };
    for (reply, answer) in replies.into_iter().zip(answers) {
        // Without an answer the reply is dropped and the caller hears so; a
        // caller that went away no longer needs it.
        if let Some(answer) = answer {
            let _ = reply.send(answer);
        }
    }
}

pub struct Combiner<R> {
    queue: Mutex<Queue<R>>,
    /// Owns the batch runners, so shutdown waits for a batch in flight.
    tasks: crate::Supervisor,
    max_batch: usize,
    max_runners: usize,
    parallel_at: usize,
}

struct Queue<R> {
    waiting: VecDeque<R>,
    runners: usize,
}

impl<R: Send + 'static> Combiner<R> {
    /// Batches of at most `max_batch` requests, at most `max_runners` at
    /// once; a runner beyond the first starts when `parallel_at` requests
    /// are waiting.
    pub fn new(
        max_batch: usize,
        max_runners: usize,
        parallel_at: usize,
        tasks: &crate::Supervisor,
    ) -> Arc<Self> {
        Arc::new(Combiner {
            tasks: tasks.clone(),
            queue: Mutex::new(Queue {
                waiting: VecDeque::new(),
                runners: 0,
            }),
            max_batch: max_batch.max(1),
            max_runners: max_runners.max(1),
            parallel_at: parallel_at.max(1),
        })
    }

    /// Queues `request` and makes sure a runner will take it; `run` handles
    /// one batch and answers each request in it (requests carry their reply
    /// channel).
    pub fn submit<F, Fut>(self: &Arc<Self>, request: R, run: F)
    where
        F: Fn(Vec<R>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let start_runner = {
            let mut queue = self.lock();
            queue.waiting.push_back(request);
            // One runner takes everything queued while it works, which keeps
            // batches large; another starts only when enough requests wait
            // to be worth a transaction of their own alongside it.
            let start = queue.runners == 0
                || (queue.runners < self.max_runners && queue.waiting.len() >= self.parallel_at);
            if start {
                queue.runners += 1;
            }
            start
        };
        if start_runner {
            let combiner = self.clone();
            self.tasks.spawn("batch", async move {
                let retire = Retire(&combiner);
                while let Some(batch) = retire.0.next_batch() {
                    run(batch).await;
                }
                std::mem::forget(retire);
            });
        }
    }

    /// The next batch, or `None` after retiring this runner: the check for
    /// an empty queue and the retirement happen under one lock, so a request
    /// queued at that moment always finds a runner.
    fn next_batch(&self) -> Option<Vec<R>> {
        let mut queue = self.lock();
        if queue.waiting.is_empty() {
            queue.runners -= 1;
            return None;
        }
        let take = queue.waiting.len().min(self.max_batch);
        Some(queue.waiting.drain(..take).collect())
    }

    fn lock(&self) -> MutexGuard<'_, Queue<R>> {
        // The queue stays consistent whatever panicked while it was held.
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Retires a runner that is unwinding: its queued requests are dropped, so
/// their callers get an error rather than wait forever.
struct Retire<'a, R: Send + 'static>(&'a Combiner<R>);

impl<R: Send + 'static> Drop for Retire<'_, R> {
    fn drop(&mut self) {
        let mut queue = self.0.lock();
        queue.runners -= 1;
        if queue.runners == 0 {
            queue.waiting.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Doubling {
        value: u32,
        reply: oneshot::Sender<u32>,
    }

    type Halving = Request<u32, u32, String>;

    async fn halve_all(batch: Vec<Halving>) {
        answer_each(batch, |values: Arc<[u32]>| async move {
            if values.len() > 1 && values.contains(&7) {
                // One odd request fails the batch as a whole.
                return Err("batch failed".to_owned());
            }
            Ok(values
                .iter()
                .map(|&v| {
                    if v % 2 == 0 {
                        Ok(v / 2)
                    } else {
                        Err(format!("{v} is odd"))
                    }
                })
                .collect())
        })
        .await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_batch_that_fails_as_a_whole_is_answered_request_by_request() {
        let combiner = Combiner::new(16, 1, 16, &crate::Supervisor::new());
        let calls: Vec<_> = [2u32, 7, 10]
            .into_iter()
            .map(|value| {
                let combiner = combiner.clone();
                tokio::spawn(async move { combiner.call(value, halve_all).await })
            })
            .collect();
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.unwrap());
        }
        assert_eq!(
            answers,
            [Some(Ok(1)), Some(Err("7 is odd".to_owned())), Some(Ok(5))]
        );
    }

    // One thread: the runner cannot start before every request is queued.
    #[tokio::test(flavor = "current_thread")]
    async fn every_request_is_answered_once_and_requests_queued_together_share_batches() {
        let combiner = Combiner::new(16, 1, 16, &crate::Supervisor::new());
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let mut answers = Vec::new();
        for value in 0..40u32 {
            let (reply, answer) = oneshot::channel();
            let sizes = sizes.clone();
            combiner.submit(Doubling { value, reply }, move |batch| {
                sizes.lock().unwrap().push(batch.len());
                async move {
                    for request in batch {
                        request.reply.send(request.value * 2).unwrap();
                    }
                }
            });
            answers.push((value, answer));
        }
        for (value, answer) in answers {
            assert_eq!(answer.await.unwrap(), value * 2);
        }
        assert_eq!(*sizes.lock().unwrap(), [16, 16, 8]);
        assert_eq!(combiner.lock().runners, 0, "the runner retired");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_runner_that_panics_leaves_no_caller_waiting_and_the_next_request_runs() {
        let combiner = Combiner::new(8, 1, 8, &crate::Supervisor::new());
        let (reply, answer) = oneshot::channel();
        combiner.submit(Doubling { value: 1, reply }, |_batch| async move {
            panic!("batch failed");
        });
        assert!(answer.await.is_err(), "the caller hears the batch ended");

        let (reply, answer) = oneshot::channel();
        combiner.submit(Doubling { value: 3, reply }, |batch| async move {
            for request in batch {
                request.reply.send(request.value * 2).unwrap();
            }
        });
        assert_eq!(answer.await.unwrap(), 6);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_second_runner_starts_only_when_enough_requests_wait() {
        let combiner = Combiner::new(64, 2, 4, &crate::Supervisor::new());
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let submit = |value: u32| {
            let (reply, answer) = oneshot::channel();
            let gate = gate.clone();
            combiner.submit(Doubling { value, reply }, move |batch| {
                let gate = gate.clone();
                async move {
                    gate.acquire().await.unwrap().forget();
                    for request in batch {
                        request.reply.send(request.value * 2).unwrap();
                    }
                }
            });
            answer
        };
        let mut answers = vec![submit(0)];
        // The first runner takes its batch and waits at the gate.
        tokio::task::yield_now().await;
        answers.extend((1..4).map(submit));
        assert_eq!(
            combiner.lock().runners,
            1,
            "three waiting are left for the next batch"
        );
        answers.push(submit(4));
        assert_eq!(
            combiner.lock().runners,
            2,
            "four waiting start a second runner"
        );

        gate.add_permits(8);
        for (value, answer) in answers.into_iter().enumerate() {
            assert_eq!(answer.await.unwrap(), value as u32 * 2);
        }
    }
}
