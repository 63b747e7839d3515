//! The runtime's guarantees through the engine: handoffs checked in code,
//! the step bound, Stop during a slow model call, one turn at a time, and
//! conversations that outlive the process.

use crate::support::{Chat, call, result_of, say};
use agents::{ChatModel, ModelError, ModelRequest, ModelResponse, ScriptedModel, StopPoint};
use async_trait::async_trait;
use engine::assistant::team::standard_workflow;
use engine::assistant::{
    Assistant, ChatError, DEFAULT_RUNNER_CONFIG, RunnerConfig, TurnControl, TurnEnd,
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

/// A model that takes a minute to answer, and says when a call reached it.
struct SlowModel {
    scripted: ScriptedModel,
    called: Arc<Notify>,
}

#[async_trait]
impl ChatModel for SlowModel {
    fn name(&self) -> &str {
        "slow"
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        // A permit is kept if nobody waits yet: the test cannot miss it.
        self.called.notify_one();
        self.scripted.complete(request).await
    }
}

/// The slow model and what it notifies when a turn's call reaches it.
fn slow_model() -> (Arc<dyn ChatModel>, Arc<Notify>) {
    let called = Arc::new(Notify::new());
    let model = SlowModel {
        scripted: ScriptedModel::from_fn(|_| Ok(ModelResponse::text("finally")))
            .with_delay(Duration::from_secs(60)),
        called: called.clone(),
    };
    (Arc::new(model), called)
}

/// Waits until the turn is in its model call (no sleeping: the model says so).
async fn wait_until_in_model_call(chat: &Chat, id: &str, called: &Notify) {
    tokio::time::timeout(Duration::from_secs(10), called.notified())
        .await
        .expect("the turn never reached the model");
    assert!(chat.engine.assistant.running().is_running(id));
}

#[tokio::test]
async fn stop_during_a_slow_model_call_ends_the_turn_with_a_consistent_saved_transcript() {
    let (model, called) = slow_model();
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
                    TurnControl::new(),
                )
                .await
        })
    };
    wait_until_in_model_call(&chat, &id, &called).await;
    // Read meanwhile (a reloaded page): the turn runs, and shows what it answers.
    let during = chat.reload(&customer, &id).await;
    assert!(during.running);
    assert_eq!(
        during.message_being_answered.as_deref(),
        Some("what is your refund policy?")
    );
    let stopped_at = Instant::now();
    chat.engine.chat.stop_turn(&customer, &id).await.unwrap();
    let result = turn.await.unwrap().unwrap();
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

#[tokio::test]
async fn a_second_message_while_a_turn_runs_is_a_conflict() {
    let (model, called) = slow_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let control = TurnControl::new();
    let turn = {
        let engine = chat.engine.clone();
        let (customer, id, control) = (customer.clone(), id.clone(), control.clone());
        tokio::spawn(async move {
            engine
                .chat
                .chat_turn(&customer, &id, "hello", control)
                .await
        })
    };
    wait_until_in_model_call(&chat, &id, &called).await;
    let second = chat
        .engine
        .chat
        .chat_turn(&customer, &id, "hello again", TurnControl::new())
        .await;
    assert!(
        matches!(second, Err(ChatError::TurnInProgress(_))),
        "{second:?}"
    );
    control.stop();
    let first = turn.await.unwrap().unwrap();
    assert!(matches!(first.end, TurnEnd::Stopped { .. }));
    let stored = chat.reload(&customer, &id).await;
    assert_eq!(stored.turns, 1);
    assert!(
        stored
            .state
            .messages()
            .iter()
            .all(|m| m.content != "hello again")
    );
}

#[tokio::test]
async fn stop_from_another_server_lands_through_the_database() {
    let (model, called) = slow_model();
    let chat = Chat::scripted(model).await;
    let (customer, id) = chat.open("customer").await;
    let turn = {
        let engine = chat.engine.clone();
        let (customer, id) = (customer.clone(), id.clone());
        tokio::spawn(async move {
            engine
                .chat
                .chat_turn(&customer, &id, "hello", TurnControl::new())
                .await
        })
    };
    wait_until_in_model_call(&chat, &id, &called).await;
    let other = chat.another_engine(Assistant::offline()).await;
    let stopped_at = Instant::now();
    other.chat.stop_turn(&customer, &id).await.unwrap();
    let result = turn.await.unwrap().unwrap();
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
        .chat_turn(&customer, &id, "no, still sealed", TurnControl::new())
        .await
        .unwrap();
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
        .chat_turn(&customer, &id, "hello", TurnControl::new())
        .await;
    assert!(
        matches!(&failed, Err(ChatError::ModelFailed { kind, .. }) if kind == "unavailable"),
        "{failed:?}"
    );
    let stored = chat.reload(&customer, &id).await;
    assert!(!stored.running);
    assert_eq!(stored.state.messages()[0].content, "hello");
}
