//! A model that answers from a script, for tests that must not depend on a
//! real model: a queue of responses or a function of the request, with an
//! optional delay per call to exercise Stop.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::{ChatModel, ModelError, ModelRequest, ModelResponse};

type Responder = dyn Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync;

enum Script {
    Queue(Mutex<VecDeque<Result<ModelResponse, ModelError>>>),
    Function(Arc<Responder>),
}

/// A scripted [`ChatModel`]. Every request it receives is kept for
/// assertions (see [`requests`](Self::requests)).
pub struct ScriptedModel {
    script: Script,
    delay: Duration,
    requests: Mutex<Vec<ModelRequest>>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("delay", &self.delay)
            .field("requests", &self.requests.lock().len())
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    /// Answer with `responses` in order; once they run out, every call fails
    /// with [`ModelError::Malformed`] naming the exhausted script.
    #[must_use]
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self::with_results(responses.into_iter().map(Ok))
    }

    /// Like [`new`](Self::new), but entries may be errors.
    #[must_use]
    pub fn with_results(
        results: impl IntoIterator<Item = Result<ModelResponse, ModelError>>,
    ) -> Self {
        Self {
            script: Script::Queue(Mutex::new(results.into_iter().collect())),
            delay: Duration::ZERO,
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Answer every request with `respond(request)`.
    #[must_use]
    pub fn from_fn(
        respond: impl Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            script: Script::Function(Arc::new(respond)),
            delay: Duration::ZERO,
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Wait `delay` before each answer (a slow model).
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Every request received so far, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().clone()
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.requests.lock().push(request.clone());
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        match &self.script {
            Script::Queue(queue) => queue.lock().pop_front().unwrap_or_else(|| {
                Err(ModelError::Malformed {
                    message: "the scripted model has no responses left".to_owned(),
                })
            }),
            Script::Function(respond) => respond(&request),
        }
    }
}
