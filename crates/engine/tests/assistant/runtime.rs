//! The runtime's guarantees through the engine: handoffs checked in code,
//! the step bound, Stop during a slow model call, one turn at a time with
//! the messages that arrive meanwhile kept, and conversations that outlive
//! the process.

use crate::support::{Chat, call, result_of, say};
use agents::{ChatModel, ModelError, ModelRequest, ModelResponse, ScriptedModel, StopPoint};
use async_trait::async_trait;
use engine::assistant::team::standard_workflow;
use engine::assistant::{
    Assistant, ChatError, DEFAULT_RUNNER_CONFIG, Delivery, Priority, QueuedMessage, RunnerConfig,
    TurnControl, TurnEnd,
};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

#[tokio::test]
async fn an_unlisted_handoff_is_refused_and_recorded() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::new(vec![
        call(
            "c1",
            "handoff",
            json!({ "to": "payment_executor", "reason": "pay it now" }),
        ),
        // A tool the coordinator does not have is refused the same way.
        call("c2", "prepare_refund", json!({ "order_id": "4821" })),
        say("I can't do that."),
    ])))
    .await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat.say(&customer, &id, "refund 4821 right now").await;
    assert_eq!(turn.agent, "coordinator");
    let stored = chat.reload(&customer, &id).await;
    assert_eq!(stored.active_agent, "coordinator");
    let refused = result_of(&stored, "c1");
    assert_eq!(refused["outcome"], "refused");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("may not hand off")
    );
    let no_tool = result_of(&stored, "c2");
    assert_eq!(no_tool["outcome"], "refused");
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    let handoff = events.iter().find(|e| e.kind == "handoff_refused").unwrap();
    assert_eq!(handoff.event["to"], "payment_executor");
    assert!(chat.proposals_for("4821").await.is_empty());
}

#[tokio::test]
async fn a_model_that_never_stops_calling_tools_is_cut_off_at_the_step_bound() {
    let looping = Arc::new(ScriptedModel::from_fn(|request| {
        Ok(call(
            &format!("loop_{}", request.messages.len()),
            "search_policy",
            json!({ "query": "refunds" }),
        ))
    }));
    let chat = Chat::with(move |_| {
        Assistant::with_workflow(
            looping,
            standard_workflow().unwrap(),
            RunnerConfig {
                max_steps: 3,
                ..DEFAULT_RUNNER_CONFIG
            },
        )
    })
    .await;
    let (customer, id) = chat.open("customer").await;
    let turn = chat
        .say(&customer, &id, "what is your refund policy?")
        .await;
    assert_eq!(turn.end, TurnEnd::StepLimit { steps: 3 });
    assert!(turn.reply.contains("within 3 steps"), "{}", turn.reply);
    let stored = chat.reload(&customer, &id).await;
    stored.state.check_consistency().unwrap();
    assert!(!stored.running);
    let kinds = chat.event_kinds(&customer, &id).await;
    assert!(kinds.iter().any(|k| k == "step_limit_reached"), "{kinds:?}");
}

/// Waits until the turn is in its model call (no sleeping: the model says
/// so); the gated model holds it there until released.
async fn wait_until_in_model_call(chat: &Chat, id: &str, gate: &Gate) {
    gate.until_called().await;
    assert!(chat.engine.assistant.running().is_running(id));
}

#[tokio::test]
async fn stop_during_a_slow_model_call_ends_the_turn_with_a_consistent_saved_transcript() {
    let (model, gate) = gated_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let turn = {
        let engine = chat.engine.clone();
        let (customer, id) = (customer.clone(), id.clone());
        tokio::spawn(async move {
            engine
                .chat
                .chat_turn(
                    &customer,
                    &id,
                    "what is your refund policy?",
                    Priority::Later,
                    TurnControl::new(),
                )
                .await
        })
    };
    wait_until_in_model_call(&chat, &id, &gate).await;
    // Read meanwhile (a reloaded page): the turn runs, and shows what it answers.
    let during = chat.reload(&customer, &id).await;
    assert!(during.running);
    assert_eq!(
        during.message_being_answered.as_deref(),
        Some("what is your refund policy?")
    );
    let stopped_at = Instant::now();
    chat.engine.chat.stop_turn(&customer, &id).await.unwrap();
    let result = turn.await.unwrap().unwrap().answered().unwrap();
    assert!(stopped_at.elapsed() < Duration::from_secs(5));
    assert_eq!(
        result.end,
        TurnEnd::Stopped {
            during: StopPoint::ModelCall
        }
    );
    assert_eq!(result.reply, "Stopped before finishing.");

    let stored = chat.reload(&customer, &id).await;
    stored.state.check_consistency().unwrap();
    assert!(!stored.running);
    assert_eq!(
        stored.message_being_answered, None,
        "it is in the transcript now"
    );
    let messages = stored.state.messages();
    assert_eq!(messages[0].content, "what is your refund policy?");
    assert_eq!(
        messages.last().unwrap().content,
        "Stopped before finishing."
    );
    let kinds = chat.event_kinds(&customer, &id).await;
    assert!(kinds.iter().any(|k| k == "stop_landed"), "{kinds:?}");
    // The conversation is free again.
    assert!(matches!(
        chat.engine.chat.stop_turn(&customer, &id).await,
        Err(ChatError::NoTurnRunning(_))
    ));
}

/// A model whose first call waits until the test releases it; every later
/// call answers at once, quoting the last message it read.
struct GatedModel {
    called: Arc<Notify>,
    release: Arc<Notify>,
    calls: std::sync::atomic::AtomicUsize,
    /// What the first call answers once released (a reply quoting the
    /// message when None).
    first: Option<ModelResponse>,
}

#[async_trait]
impl ChatModel for GatedModel {
    fn name(&self) -> &str {
        "gated"
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let first = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
        if first {
            self.called.notify_one();
            self.release.notified().await;
            if let Some(response) = &self.first {
                return Ok(response.clone());
            }
        }
        let last = request
            .messages
            .iter()
            .rev()
            .find(|message| message.role == agents::Role::User)
            .map(|message| message.content.clone())
            .unwrap_or_default();
        Ok(ModelResponse::text(format!("read: {last}")))
    }
}

struct Gate {
    called: Arc<Notify>,
    release: Arc<Notify>,
}

impl Gate {
    /// Waits until the first turn is in its model call.
    async fn until_called(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.called.notified())
            .await
            .expect("the first turn never reached the model");
    }
}

fn gated_model() -> (Arc<dyn ChatModel>, Gate) {
    gated_model_first(None)
}

fn gated_model_first(first: Option<ModelResponse>) -> (Arc<dyn ChatModel>, Gate) {
    let gate = Gate {
        called: Arc::new(Notify::new()),
        release: Arc::new(Notify::new()),
    };
    let model = GatedModel {
        called: gate.called.clone(),
        release: gate.release.clone(),
        calls: Default::default(),
        first,
    };
    (Arc::new(model), gate)
}

/// Starts the first turn of `id` with `text`; it waits in its model call.
fn first_turn(
    chat: &Chat,
    customer: &engine::Actor,
    id: &str,
    text: &'static str,
) -> tokio::task::JoinHandle<Result<Delivery, ChatError>> {
    let engine = chat.engine.clone();
    let (customer, id) = (customer.clone(), id.to_owned());
    tokio::spawn(async move {
        engine
            .chat
            .chat_turn(&customer, &id, text, Priority::Later, TurnControl::new())
            .await
    })
}

async fn send(
    chat: &Chat,
    customer: &engine::Actor,
    id: &str,
    text: &str,
    priority: Priority,
) -> QueuedMessage {
    match chat
        .engine
        .chat
        .chat_turn(customer, id, text, priority, TurnControl::new())
        .await
        .unwrap()
    {
        Delivery::Queued(queued) => queued,
        Delivery::Answered(result) => panic!("answered at once, no turn was running: {result:?}"),
    }
}

/// Waits (on the live updates, never on a timer) until the conversation
/// has saved `turns` turns.
async fn until_turns(
    chat: &Chat,
    customer: &engine::Actor,
    id: &str,
    live: &mut tokio::sync::broadcast::Receiver<engine::live::LiveEvent>,
    turns: u64,
) -> engine::assistant::Conversation {
    crate::support::until(chat, customer, id, live, |stored, _| {
        stored.turns >= turns && !stored.running
    })
    .await
}

/// The conversation's queue as (text, state, turn), oldest first.
async fn queue_states(
    chat: &Chat,
    customer: &engine::Actor,
    id: &str,
) -> Vec<(String, String, Option<u64>)> {
    chat.engine
        .chat
        .queue(customer, id)
        .await
        .unwrap()
        .iter()
        .map(|entry| (entry.text.clone(), entry.state.clone(), entry.turn))
        .collect()
}

#[tokio::test]
async fn messages_sent_while_a_turn_runs_are_kept_and_collected_into_the_next_turn() {
    let (model, gate) = gated_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let mut live = chat.engine.live.subscribe();
    let turn = first_turn(&chat, &customer, &id, "hello");
    gate.until_called().await;

    let first = send(&chat, &customer, &id, "it is order 4821", Priority::Later).await;
    let second = send(
        &chat,
        &customer,
        &id,
        "and it arrived broken",
        Priority::Later,
    )
    .await;
    assert!(!first.preempting && !second.preempting);
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            ("hello".into(), "running".into(), None),
            ("it is order 4821".into(), "waiting".into(), None),
            ("and it arrived broken".into(), "waiting".into(), None),
        ]
    );

    gate.release.notify_one();
    let answered = turn.await.unwrap().unwrap().answered().unwrap();
    assert_eq!(answered.end, TurnEnd::Answered);
    assert_eq!(answered.reply, "read: hello");
    let stored = until_turns(&chat, &customer, &id, &mut live, 2).await;
    stored.state.check_consistency().unwrap();
    let last = stored.state.messages().last().unwrap();
    assert_eq!(
        last.content,
        "read: it is order 4821\n\nand it arrived broken"
    );
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            ("hello".into(), "answered".into(), Some(1)),
            ("it is order 4821".into(), "collected".into(), Some(2)),
            ("and it arrived broken".into(), "collected".into(), Some(2)),
        ]
    );
}

#[tokio::test]
async fn a_now_message_stops_the_running_turn_and_is_answered_next_with_a_consistent_transcript() {
    let (model, gate) = gated_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let mut live = chat.engine.live.subscribe();
    let turn = first_turn(&chat, &customer, &id, "what is your refund policy?");
    gate.until_called().await;

    let urgent = send(
        &chat,
        &customer,
        &id,
        "forget that, check order 4821",
        Priority::Now,
    )
    .await;
    assert!(urgent.preempting);
    let first = turn.await.unwrap().unwrap().answered().unwrap();
    assert_eq!(
        first.end,
        TurnEnd::Stopped {
            during: StopPoint::ModelCall
        }
    );
    let stored = until_turns(&chat, &customer, &id, &mut live, 2).await;
    stored.state.check_consistency().unwrap();
    let texts: Vec<&str> = stored
        .state
        .messages()
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        texts,
        vec![
            "what is your refund policy?",
            "Stopped before finishing.",
            "forget that, check order 4821",
            "read: forget that, check order 4821",
        ]
    );
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            (
                "what is your refund policy?".into(),
                "answered".into(),
                Some(1)
            ),
            (
                "forget that, check order 4821".into(),
                "answered".into(),
                Some(2)
            ),
        ]
    );
}

#[tokio::test]
async fn a_message_for_this_turn_reaches_the_model_before_its_next_call_without_a_restart() {
    // The first call reads the policies; the second sees the message sent
    // meanwhile, after the tool's result.
    let (model, gate) = gated_model_first(Some(call(
        "c1",
        "search_policy",
        json!({ "query": "refunds" }),
    )));
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let turn = first_turn(&chat, &customer, &id, "what is your refund policy?");
    gate.until_called().await;

    let steering = send(
        &chat,
        &customer,
        &id,
        "for an opened item",
        Priority::ThisTurn,
    )
    .await;
    assert!(!steering.preempting);
    gate.release.notify_one();
    let result = turn.await.unwrap().unwrap().answered().unwrap();

    assert_eq!(result.end, TurnEnd::Answered);
    assert_eq!(result.turn, 1, "one turn: steered, not restarted");
    assert_eq!(result.reply, "read: for an opened item");
    let stored = chat.reload(&customer, &id).await;
    stored.state.check_consistency().unwrap();
    let roles: Vec<(agents::Role, &str)> = stored
        .state
        .messages()
        .iter()
        .map(|m| (m.role, m.content.as_str()))
        .filter(|(role, _)| *role != agents::Role::Tool)
        .collect();
    assert_eq!(
        roles,
        vec![
            (agents::Role::User, "what is your refund policy?"),
            (agents::Role::Assistant, ""),
            (agents::Role::User, "for an opened item"),
            (agents::Role::Assistant, "read: for an opened item"),
        ]
    );
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            (
                "what is your refund policy?".into(),
                "answered".into(),
                Some(1)
            ),
            ("for an opened item".into(), "steered".into(), Some(1)),
        ]
    );
    let kinds = chat.event_kinds(&customer, &id).await;
    assert!(kinds.iter().any(|k| k == "steering_delivered"), "{kinds:?}");
}

#[tokio::test]
async fn a_message_for_this_turn_that_ends_without_another_model_call_goes_into_the_next_turn() {
    let (model, gate) = gated_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let mut live = chat.engine.live.subscribe();
    let turn = first_turn(&chat, &customer, &id, "hello");
    gate.until_called().await;
    send(&chat, &customer, &id, "one more thing", Priority::ThisTurn).await;
    gate.release.notify_one();
    // The first call answers at once: no next call to steer.
    let first = turn.await.unwrap().unwrap().answered().unwrap();
    assert_eq!(first.reply, "read: hello");

    let stored = until_turns(&chat, &customer, &id, &mut live, 2).await;
    stored.state.check_consistency().unwrap();
    assert_eq!(
        stored.state.messages().last().unwrap().content,
        "read: one more thing"
    );
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            ("hello".into(), "answered".into(), Some(1)),
            ("one more thing".into(), "answered".into(), Some(2)),
        ]
    );
}

#[tokio::test]
async fn a_message_queued_behind_a_turn_that_asks_for_a_person_goes_to_the_person_not_to_an_agent()
{
    let (model, gate) = gated_model_first(Some(call("c1", "request_person", json!({}))));
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let mut live = chat.engine.live.subscribe();
    let turn = first_turn(&chat, &customer, &id, "I'd like a person, please");
    gate.until_called().await;
    send(&chat, &customer, &id, "are you there?", Priority::Later).await;
    gate.release.notify_one();
    turn.await.unwrap().unwrap().answered().unwrap();

    let kept = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let states = queue_states(&chat, &customer, &id).await;
            if states.iter().all(|(_, state, _)| state != "waiting") {
                return states;
            }
            let _ = live.recv().await;
        }
    })
    .await
    .expect("the waiting message was never settled");
    assert_eq!(
        kept,
        vec![
            (
                "I'd like a person, please".into(),
                "answered".into(),
                Some(1)
            ),
            ("are you there?".into(), "for_person".into(), Some(1)),
        ]
    );
    let stored = chat.reload(&customer, &id).await;
    assert_eq!(stored.turns, 1, "no agent turn ran for it");
    assert_eq!(
        stored.state.messages().last().unwrap().content,
        "are you there?"
    );
}

#[tokio::test]
async fn stop_cancels_the_queued_messages_so_none_of_them_runs_afterwards() {
    let (model, gate) = gated_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let turn = first_turn(&chat, &customer, &id, "hello");
    gate.until_called().await;
    let queued = send(&chat, &customer, &id, "and refund 4821", Priority::Later).await;

    let receipt = chat.engine.chat.stop_turn(&customer, &id).await.unwrap();
    assert!(receipt.turn_stopping);
    assert_eq!(receipt.cancelled_messages, vec![queued.id.clone()]);
    let first = turn.await.unwrap().unwrap().answered().unwrap();
    assert!(matches!(first.end, TurnEnd::Stopped { .. }));

    // Nothing waits any more: a start-up finds nothing to resume, and the
    // cancelled message keeps its one outcome.
    assert_eq!(chat.engine.chat.resume_waiting().await.unwrap(), 0);
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            ("hello".into(), "answered".into(), Some(1)),
            ("and refund 4821".into(), "cancelled".into(), None),
        ]
    );
    let stored = chat.reload(&customer, &id).await;
    assert_eq!(stored.turns, 1);
    assert!(
        stored
            .state
            .messages()
            .iter()
            .all(|m| !m.content.contains("refund 4821"))
    );
    // A second Stop finds nothing to stop and says so.
    assert!(matches!(
        chat.engine.chat.stop_turn(&customer, &id).await,
        Err(ChatError::NoTurnRunning(_))
    ));
}

#[tokio::test]
async fn messages_left_waiting_by_a_process_that_died_are_answered_after_the_restart() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    // What a killed process leaves: a message stored while a turn ran, and
    // one carried by that turn, whose claim is gone with its process.
    let now = chrono::Utc::now();
    let tx = chat.engine.db.begin_write().await.unwrap();
    for (message_id, text) in [("msg_a", "hello"), ("msg_b", "what is your refund policy?")] {
        storage::conversation_messages::insert(
            &*tx,
            storage::conversation_messages::NewMessage {
                id: message_id,
                conversation_id: &id,
                sender_id: &customer.user_id,
                priority: "later",
                text,
                received_at: now,
                carried_by: None,
            },
        )
        .await
        .unwrap();
    }
    storage::conversation_messages::carry_waiting(&*tx, &id, "trn_of_a_dead_process")
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut live = chat.engine.live.subscribe();

    assert_eq!(chat.engine.chat.resume_waiting().await.unwrap(), 1);
    let stored = until_turns(&chat, &customer, &id, &mut live, 1).await;
    stored.state.check_consistency().unwrap();
    assert_eq!(
        stored.state.messages()[0].content,
        "hello\n\nwhat is your refund policy?"
    );
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            ("hello".into(), "collected".into(), Some(1)),
            (
                "what is your refund policy?".into(),
                "collected".into(),
                Some(1)
            ),
        ]
    );
}

#[tokio::test]
async fn a_stop_made_while_the_turns_process_was_dying_is_honoured_after_the_restart_not_replayed()
{
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    // What is left when the process running a turn dies after a Stop was
    // recorded for it: the claim (its lease run out), the Stop flag, the
    // turn's own message carried by it, and a message waiting behind it.
    let now = chrono::Utc::now();
    let tx = chat.engine.db.begin_write().await.unwrap();
    assert!(
        storage::conversations::claim_turn(
            &*tx,
            &id,
            "trn_of_a_dead_process",
            "refund order 4821",
            now - chrono::Duration::minutes(2),
            now + chrono::Duration::minutes(1),
        )
        .await
        .unwrap()
    );
    let message = |id: &'static str, text: &'static str, carried_by: Option<&'static str>| {
        storage::conversation_messages::NewMessage {
            id,
            conversation_id: "",
            sender_id: "",
            priority: "later",
            text,
            received_at: now,
            carried_by,
        }
    };
    let store = |new: storage::conversation_messages::NewMessage<'static>| {
        let (tx, id, sender) = (&tx, id.clone(), customer.user_id.clone());
        async move {
            storage::conversation_messages::insert(
                &**tx,
                storage::conversation_messages::NewMessage {
                    conversation_id: &id,
                    sender_id: &sender,
                    ..new
                },
            )
            .await
            .unwrap();
        }
    };
    store(message(
        "msg_a",
        "refund order 4821",
        Some("trn_of_a_dead_process"),
    ))
    .await;
    assert!(
        storage::conversations::request_stop(&*tx, &id, now)
            .await
            .unwrap()
    );
    // Sent after the Stop, while the claim still looked alive: it waits.
    store(message("msg_b", "and order 4822", None)).await;
    // The lease runs out: nobody renews it.
    storage::conversations::renew_claim(
        &*tx,
        &id,
        "trn_of_a_dead_process",
        now - chrono::Duration::seconds(1),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    // The customer writes again after the restart: only the new message runs.
    let reply = chat
        .say(&customer, &id, "what is your refund policy?")
        .await;
    assert_eq!(reply.turn, 1);
    let stored = chat.reload(&customer, &id).await;
    let customer_lines: Vec<&str> = stored
        .state
        .messages()
        .iter()
        .filter(|m| m.role == agents::Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        customer_lines,
        ["and order 4822\n\nwhat is your refund policy?"]
    );
    assert_eq!(
        queue_states(&chat, &customer, &id).await,
        vec![
            ("refund order 4821".into(), "cancelled".into(), None),
            ("and order 4822".into(), "collected".into(), Some(1)),
            (
                "what is your refund policy?".into(),
                "collected".into(),
                Some(1)
            ),
        ]
    );
    assert!(chat.proposals_for("4821").await.is_empty());
}

#[tokio::test]
async fn stop_from_another_server_lands_through_the_database() {
    let (model, gate) = gated_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let turn = {
        let engine = chat.engine.clone();
        let (customer, id) = (customer.clone(), id.clone());
        tokio::spawn(async move {
            engine
                .chat
                .chat_turn(&customer, &id, "hello", Priority::Later, TurnControl::new())
                .await
        })
    };
    wait_until_in_model_call(&chat, &id, &gate).await;
    let other = chat.another_engine(Assistant::offline()).await;
    let stopped_at = Instant::now();
    other.chat.stop_turn(&customer, &id).await.unwrap();
    let result = turn.await.unwrap().unwrap().answered().unwrap();
    assert!(matches!(result.end, TurnEnd::Stopped { .. }));
    assert!(stopped_at.elapsed() < Duration::from_secs(5));
    chat.reload(&customer, &id)
        .await
        .state
        .check_consistency()
        .unwrap();
}

#[tokio::test]
async fn a_conversation_resumes_after_a_restart_where_it_left_off() {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;
    let first = chat
        .say(
            &customer,
            &id,
            "check order 4821 and refund it if it qualifies",
        )
        .await;
    assert!(
        first.reply.contains("was the item opened?"),
        "{}",
        first.reply
    );

    // A new process: new engine, new policy index, new agents, same database.
    let restarted = chat.another_engine(Assistant::offline()).await;
    let second = restarted
        .chat
        .chat_turn(
            &customer,
            &id,
            "no, still sealed",
            Priority::Later,
            TurnControl::new(),
        )
        .await
        .unwrap()
        .answered()
        .expect("no turn was running");
    let proposal_id = second.proposal_id.expect("a proposal after the restart");
    assert!(second.reply.contains(&proposal_id), "{}", second.reply);
    assert!(
        second.reply.contains("waiting for approval"),
        "{}",
        second.reply
    );
    let proposal = chat.proposal(&proposal_id).await.proposal;
    assert_eq!(proposal.amount.amount_minor, 7900);
    assert_eq!(
        proposal.provenance.conversation_id.as_deref(),
        Some(id.as_str())
    );
}

#[tokio::test]
async fn a_model_failure_keeps_the_message_and_reports_it() {
    let chat = Chat::scripted(Arc::new(ScriptedModel::with_results(vec![Err(
        agents::ModelError::Unavailable {
            message: "connection refused".into(),
        },
    )])))
    .await;
    let (customer, id) = chat.open("customer").await;
    let failed = chat
        .engine
        .chat
        .chat_turn(&customer, &id, "hello", Priority::Later, TurnControl::new())
        .await;
    assert!(
        matches!(&failed, Err(ChatError::ModelFailed { kind, .. }) if kind == "unavailable"),
        "{failed:?}"
    );
    let stored = chat.reload(&customer, &id).await;
    assert!(!stored.running);
    assert_eq!(stored.state.messages()[0].content, "hello");
}
