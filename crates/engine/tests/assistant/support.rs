//! A fresh database with the demo data and an engine whose chat model the
//! test chooses.

use agents::{ChatModel, ModelResponse, ToolCall};
use connectors::HttpTimeouts;
use connectors::sandbox::SandboxProvider;
use engine::assistant::{Assistant, TurnControl, TurnResult};
use engine::{Actor, Engine, EngineSettings};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use storage::proposals::StoredProposal;
use storage::testing::TestDatabase;

pub struct Chat {
    pub engine: Engine,
    pub test_db: TestDatabase,
}

impl Chat {
    /// The offline rules model, as shipped.
    pub async fn offline() -> Chat {
        Chat::with(|_| Assistant::offline()).await
    }

    /// The standard agents driven by `model`.
    pub async fn scripted(model: Arc<dyn ChatModel>) -> Chat {
        Chat::with(move |_| Assistant::new(model).unwrap()).await
    }

    pub async fn with(assistant: impl FnOnce(&TestDatabase) -> Assistant) -> Chat {
        let test_db = TestDatabase::new().await;
        engine::demo::seed_demo(
            &test_db.db,
            "chat-test-password",
            engine::demo::ReferenceStyle::Sandbox,
            engine::now(),
        )
        .await
        .unwrap();
        let engine = engine_on(&test_db)
            .await
            .with_assistant(assistant(&test_db));
        Chat { engine, test_db }
    }

    /// Another engine on the same database (a restarted or second server).
    pub async fn another_engine(&self, assistant: Assistant) -> Engine {
        engine_on(&self.test_db).await.with_assistant(assistant)
    }

    pub async fn actor(&self, name: &str) -> Actor {
        let user = storage::users::find_by_name(self.engine.db.conn(), name)
            .await
            .unwrap()
            .unwrap();
        Actor::from(user)
    }

    /// A conversation `name` opens for themselves.
    pub async fn open(&self, name: &str) -> (Actor, String) {
        let actor = self.actor(name).await;
        let conversation = self
            .engine
            .chat
            .create_conversation(&actor, None)
            .await
            .unwrap();
        (actor, conversation.id)
    }

    pub async fn say(&self, actor: &Actor, conversation_id: &str, text: &str) -> TurnResult {
        self.engine
            .chat
            .chat_turn(
                actor,
                conversation_id,
                text,
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running")
    }

    pub async fn proposal(&self, id: &str) -> StoredProposal {
        storage::proposals::get(self.engine.db.conn(), id)
            .await
            .unwrap()
            .unwrap()
    }

    /// Every proposal stored for `order_id`.
    pub async fn proposals_for(&self, order_id: &str) -> Vec<StoredProposal> {
        storage::proposals::list(
            self.engine.db.conn(),
            &storage::proposals::ProposalFilter {
                order_id: Some(order_id.to_owned()),
                ..Default::default()
            },
            100,
            0,
        )
        .await
        .unwrap()
    }

    /// The stored conversation, read as its owner.
    pub async fn reload(&self, actor: &Actor, id: &str) -> engine::assistant::Conversation {
        self.engine.chat.conversation(actor, id).await.unwrap()
    }

    /// The kinds of the stored events, in order.
    pub async fn event_kinds(&self, actor: &Actor, id: &str) -> Vec<String> {
        self.engine
            .chat
            .conversation_events(actor, id)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }
}

async fn engine_on(test_db: &TestDatabase) -> Engine {
    // The chat never pays anything; the provider is only needed to build an engine.
    let provider = SandboxProvider::new(
        "http://127.0.0.1:9",
        "sk_sbx_unused".into(),
        HttpTimeouts {
            connect: Duration::from_millis(100),
            request: Duration::from_millis(100),
        },
    )
    .unwrap();
    let policies = engine::policies::PolicyLibrary::load(test_db.db.clone())
        .await
        .unwrap();
    Engine::new(
        test_db.db.clone(),
        Arc::new(provider),
        policies,
        EngineSettings::default(),
    )
}

/// A model response calling one tool.
pub fn call(id: &str, tool: &str, args: Value) -> ModelResponse {
    ModelResponse::calls(vec![ToolCall::new(id, tool, args)])
}

pub fn handoff(id: &str, to: &str) -> ModelResponse {
    call(
        id,
        "handoff",
        json!({ "to": to, "reason": "refund request" }),
    )
}

pub fn say(text: &str) -> ModelResponse {
    ModelResponse::text(text)
}

/// The result JSON of the tool call `call_id` in the transcript.
pub fn result_of(conversation: &engine::assistant::Conversation, call_id: &str) -> Value {
    conversation
        .state
        .messages()
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some(call_id))
        .and_then(|m| m.result_json())
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}

/// Waits (on the live updates, never on a timer) until the conversation
/// satisfies `done`.
pub async fn until(
    chat: &Chat,
    customer: &engine::Actor,
    id: &str,
    live: &mut tokio::sync::broadcast::Receiver<engine::live::LiveEvent>,
    done: impl Fn(&engine::assistant::Conversation, &[engine::assistant::ConversationEvent]) -> bool,
) -> engine::assistant::Conversation {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let stored = chat.reload(customer, id).await;
            let events = chat
                .engine
                .chat
                .conversation_events(customer, id)
                .await
                .unwrap();
            if done(&stored, &events) {
                return stored;
            }
            let _ = live.recv().await;
        }
    })
    .await
    .expect("the conversation never got there")
}
