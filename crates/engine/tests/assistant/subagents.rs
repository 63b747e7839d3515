//! Several orders in one message: the refund specialist starts one order
//! investigator (a subagent) per order, at most the conversation's lane
//! limit at once; each has its own transcript, step budget and events, and
//! Stop stops every one of them, running or still waiting for a place. A
//! `now` message ends the turn but not its investigators: they finish in
//! the background and their findings join the conversation, unless Stop
//! ends them.

use crate::support::{Chat, handoff, result_of, say, until};
use agents::{ChatModel, ModelError, ModelRequest, ModelResponse, Role, ToolCall};
use async_trait::async_trait;
use engine::assistant::{Assistant, ChatError, Delivery, Priority, TurnControl, TurnEnd};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

const FOUR_ORDERS: [&str; 4] = ["4821", "4823", "4822", "4824"];

/// The coordinator hands over, the specialist investigates the orders, and
/// each investigator's model call is held at a gate the test opens, so the
/// test sees how many run at once.
struct HeldInvestigators {
    limit: usize,
    running: AtomicUsize,
    most_at_once: AtomicUsize,
    started: AtomicUsize,
    full: Notify,
    open: AtomicBool,
    opened: Notify,
}

impl HeldInvestigators {
    fn new(limit: usize) -> Arc<Self> {
        Arc::new(HeldInvestigators {
            limit,
            running: AtomicUsize::new(0),
            most_at_once: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            full: Notify::new(),
            open: AtomicBool::new(false),
            opened: Notify::new(),
        })
    }

    /// Waits until as many investigators as the lane allows are in their
    /// model call, then lets every task that could run do so.
    async fn until_full(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.full.notified())
            .await
            .expect("the investigators never filled the lane");
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    fn open_gate(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.opened.notify_waiters();
    }

    async fn gate(&self) {
        loop {
            let opened = self.opened.notified();
            if self.open.load(Ordering::SeqCst) {
                return;
            }
            opened.await;
        }
    }
}

/// Counts a model call as running until it returns or is dropped (Stop).
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl ChatModel for HeldInvestigators {
    fn name(&self) -> &str {
        "held-investigators"
    }

    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let last = request.messages.last();
        match request.agent.as_str() {
            "coordinator" => Ok(handoff("h1", "refund_specialist")),
            "refund_specialist"
                if last
                    .is_some_and(|m| m.role == Role::Tool && m.content.contains("\"orders\"")) =>
            {
                Ok(say("Each order has its own result."))
            }
            "refund_specialist" if last.is_some_and(|m| m.content.contains("refund")) => {
                Ok(ModelResponse::calls(vec![ToolCall::new(
                    "inv",
                    "investigate_orders",
                    json!({ "order_ids": FOUR_ORDERS }),
                )]))
            }
            "refund_specialist" => Ok(say(&format!(
                "noted: {}",
                last.map(|m| m.content.as_str()).unwrap_or_default()
            ))),
            "order_investigator" => {
                self.started.fetch_add(1, Ordering::SeqCst);
                let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                let _running = Running(&self.running);
                self.most_at_once.fetch_max(now, Ordering::SeqCst);
                if now == self.limit {
                    self.full.notify_one();
                }
                self.gate().await;
                let task = last.map(|m| m.content.clone()).unwrap_or_default();
                let first_line = task.lines().next().unwrap_or_default().to_owned();
                Ok(say(&format!("investigated: {first_line}")))
            }
            other => Ok(say(&format!("unexpected agent {other}"))),
        }
    }
}

async fn with_lane_of(limit: usize, model: Arc<HeldInvestigators>) -> Chat {
    Chat::with(move |_| Assistant::new(model).unwrap().with_subagent_limit(limit)).await
}

fn turn_in_background(
    chat: &Chat,
    customer: &engine::Actor,
    id: &str,
) -> tokio::task::JoinHandle<Result<Delivery, ChatError>> {
    let engine = chat.engine.clone();
    let (customer, id) = (customer.clone(), id.to_owned());
    tokio::spawn(async move {
        engine
            .chat
            .chat_turn(
                &customer,
                &id,
                "please refund 4821, 4823, 4822 and 4824",
                Priority::Later,
                TurnControl::new(),
            )
            .await
    })
}

#[tokio::test]
async fn four_orders_in_one_message_get_an_investigator_each_and_no_more_than_the_lane_allows_run_together()
 {
    let model = HeldInvestigators::new(2);
    let chat = with_lane_of(2, model.clone()).await;
    let (customer, id) = chat.open("customer").await;
    let turn = turn_in_background(&chat, &customer, &id);

    model.until_full().await;
    assert_eq!(
        model.running.load(Ordering::SeqCst),
        2,
        "the lane has 2 places"
    );
    assert_eq!(
        model.started.load(Ordering::SeqCst),
        2,
        "the other two wait for a place"
    );
    model.open_gate();
    let result = turn.await.unwrap().unwrap().answered().unwrap();

    assert_eq!(result.end, TurnEnd::Answered);
    assert_eq!(model.started.load(Ordering::SeqCst), 4);
    assert_eq!(model.most_at_once.load(Ordering::SeqCst), 2);
    let stored = chat.reload(&customer, &id).await;
    let investigation = result_of(&stored, "inv");
    let orders = investigation["value"]["orders"].as_array().unwrap();
    let ids: Vec<&str> = orders
        .iter()
        .map(|o| o["order_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, FOUR_ORDERS, "one result per order, in the order asked");
    let subagents: HashSet<&str> = orders
        .iter()
        .map(|o| o["subagent"].as_str().unwrap())
        .collect();
    assert_eq!(subagents.len(), 4, "each order had its own investigator");
    for order in orders {
        assert_eq!(order["outcome"], "answered");
        assert_eq!(order["steps"], 1, "its own step count");
        let reply = order["reply"].as_str().unwrap();
        assert!(
            reply.starts_with(&format!(
                "investigated: Investigate order {}",
                order["order_id"].as_str().unwrap()
            )),
            "each investigator read only its own task: {reply}"
        );
    }

    // Their events are the turn's, each tagged with its investigator.
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    for kind in ["subagent_queued", "subagent_started", "subagent_finished"] {
        let tagged: HashSet<&str> = events
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.event["subagent"].as_str().unwrap())
            .collect();
        assert_eq!(tagged, subagents, "{kind}");
    }
    let their_model_calls = events
        .iter()
        .filter(|e| e.kind == "model_call_started" && e.event.get("subagent").is_some())
        .count();
    assert_eq!(their_model_calls, 4);
    assert!(events.iter().all(|e| e.turn == 1));
}

#[tokio::test]
async fn stop_while_investigators_run_stops_every_one_of_them_and_none_that_waited_starts_afterwards()
 {
    let model = HeldInvestigators::new(2);
    let chat = with_lane_of(2, model.clone()).await;
    let (customer, id) = chat.open("customer").await;
    let turn = turn_in_background(&chat, &customer, &id);
    model.until_full().await;

    let receipt = chat.engine.chat.stop_turn(&customer, &id).await.unwrap();
    assert!(receipt.turn_stopping);
    let mut stopping = receipt.subagents_stopping.clone();
    stopping.sort();
    assert_eq!(
        stopping,
        ["order 4821", "order 4822", "order 4823", "order 4824"],
        "the receipt names every investigator, running or waiting"
    );
    let result = turn.await.unwrap().unwrap().answered().unwrap();
    assert!(
        matches!(result.end, TurnEnd::Stopped { .. }),
        "{:?}",
        result.end
    );

    // The turn ends only after its investigators have: none runs on, and
    // the two that waited for a place never started.
    assert_eq!(model.running.load(Ordering::SeqCst), 0);
    assert_eq!(model.started.load(Ordering::SeqCst), 2);
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    let mut where_stopped: Vec<&str> = events
        .iter()
        .filter(|e| e.kind == "subagent_finished")
        .map(|e| {
            assert_eq!(e.event["outcome"], "stopped");
            e.event["stopped_during"].as_str().unwrap()
        })
        .collect();
    where_stopped.sort_unstable();
    assert_eq!(
        where_stopped,
        [
            "model_call",
            "model_call",
            "waiting_for_place",
            "waiting_for_place"
        ]
    );
    let stored = chat.reload(&customer, &id).await;
    assert_eq!(result_of(&stored, "inv")["outcome"], "cancelled");
    stored.state.check_consistency().unwrap();
    // Nothing is left to stop.
    assert!(matches!(
        chat.engine.chat.stop_turn(&customer, &id).await,
        Err(ChatError::NoTurnRunning(_))
    ));
}

#[tokio::test]
async fn two_orders_in_one_message_are_investigated_in_parallel_and_one_answer_for_both_makes_two_proposals_quoting_it()
 {
    let chat = Chat::offline().await;
    let (customer, id) = chat.open("customer").await;

    let first = chat
        .say(&customer, &id, "please refund orders 4821 and 4823")
        .await;
    assert_eq!(first.agent, "refund_specialist");
    assert_eq!(
        first.questions,
        ["Was the item opened?", "Was the item opened?"],
        "each investigator asked its own question: {}",
        first.reply
    );
    assert!(first.proposal_ids.is_empty());
    assert!(first.reply.contains("- Order 4821:"), "{}", first.reply);
    assert!(first.reply.contains("- Order 4823:"), "{}", first.reply);
    let sources: Vec<&str> = first.evidence.iter().map(|p| p.source.as_str()).collect();
    assert!(
        sources.contains(&"order:4821") && sources.contains(&"order:4823"),
        "{sources:?}"
    );

    // One reply answers both questions; the investigators propose with it.
    let second = chat.say(&customer, &id, "both are still sealed").await;
    assert_eq!(second.proposal_ids.len(), 2, "{}", second.reply);
    let stored = chat.reload(&customer, &id).await;
    let answer_index = stored
        .state
        .messages()
        .iter()
        .rposition(|m| m.role == Role::User)
        .unwrap();
    let mut amounts = Vec::new();
    for proposal_id in &second.proposal_ids {
        let proposal = chat.proposal(proposal_id).await.proposal;
        amounts.push((proposal.order_id.clone(), proposal.amount.amount_minor));
        assert_eq!(proposal.provenance.agent, "order_investigator");
        assert_eq!(
            proposal.provenance.conversation_id.as_deref(),
            Some(id.as_str())
        );
        let question = &proposal.open_questions[0];
        assert_eq!(question.question, "Was the item opened?");
        assert_eq!(question.answer.as_deref(), Some("both are still sealed"));
        let answered_in = question.answered_in.as_ref().unwrap();
        assert_eq!(answered_in.conversation_id, id);
        assert_eq!(answered_in.message_index, answer_index as u64);
    }
    amounts.sort();
    assert_eq!(
        amounts,
        [("4821".to_owned(), 7900), ("4823".to_owned(), 3150)]
    );
    let conversation = chat.reload(&customer, &id).await;
    assert_eq!(conversation.proposals.len(), 2);
}

/// Starts the investigation, fills the lane, and sends a `now` message
/// through `replica`; returns once the turn that message started has
/// answered, while the investigators still wait at the gate.
async fn preempted_with_investigators_running(
    chat: &Chat,
    replica: &engine::Engine,
    model: &HeldInvestigators,
    customer: &engine::Actor,
    id: &str,
    live: &mut tokio::sync::broadcast::Receiver<engine::live::LiveEvent>,
) {
    let turn = turn_in_background(chat, customer, id);
    model.until_full().await;
    let urgent = replica
        .chat
        .chat_turn(
            customer,
            id,
            "one more thing first",
            Priority::Now,
            TurnControl::new(),
        )
        .await
        .unwrap();
    assert!(
        matches!(urgent, Delivery::Queued(ref queued) if queued.preempting),
        "{urgent:?}"
    );
    let first = turn.await.unwrap().unwrap().answered().unwrap();
    assert!(
        matches!(first.end, TurnEnd::Stopped { .. }),
        "{:?}",
        first.end
    );
    let stored = until(chat, customer, id, live, |c, _| c.turns >= 2 && !c.running).await;
    assert_eq!(
        stored.state.messages().last().unwrap().content,
        "noted: one more thing first",
        "the now message was answered while the investigators ran"
    );
}

#[tokio::test]
async fn investigators_a_now_message_leaves_running_finish_in_the_background_and_their_findings_join_the_conversation()
 {
    let model = HeldInvestigators::new(4);
    let chat = with_lane_of(4, model.clone()).await;
    let (customer, id) = chat.open("customer").await;
    let mut live = chat.engine.live.subscribe();
    preempted_with_investigators_running(&chat, &chat.engine, &model, &customer, &id, &mut live)
        .await;

    assert_eq!(
        model.running.load(Ordering::SeqCst),
        4,
        "none was stopped by the now message"
    );
    assert_eq!(
        chat.engine.chat.assistant().running().subagents(&id).len(),
        4
    );
    model.open_gate();
    let stored = until(&chat, &customer, &id, &mut live, |c, _| {
        c.state
            .messages()
            .iter()
            .any(|m| m.tool_call_id.as_deref() == Some("inv~background"))
    })
    .await;

    let cut = result_of(&stored, "inv");
    assert_eq!(cut["outcome"], "cancelled");
    assert_eq!(cut["reason"], "interrupted by a newer message");
    let findings = result_of(&stored, "inv~background");
    assert_eq!(findings["outcome"], "found");
    let orders = findings["value"]["orders"].as_array().unwrap();
    assert_eq!(orders.len(), 4);
    assert!(
        orders.iter().all(|o| o["outcome"] == "answered"),
        "{orders:?}"
    );
    let relayed = &stored.state.messages().last().unwrap().content;
    assert!(
        relayed.starts_with("I checked 4 orders at the same time:"),
        "{relayed}"
    );
    stored.state.check_consistency().unwrap();
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    let finished: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e.kind == "subagent_finished")
        .map(|e| &e.event["outcome"])
        .collect();
    assert_eq!(finished, ["answered"; 4], "their events are kept too");
    assert!(
        chat.engine
            .chat
            .assistant()
            .running()
            .subagents(&id)
            .is_empty()
    );
}

#[tokio::test]
async fn stop_ends_the_investigators_a_now_message_left_running_and_their_findings_are_not_recorded()
 {
    let model = HeldInvestigators::new(4);
    let chat = with_lane_of(4, model.clone()).await;
    let (customer, id) = chat.open("customer").await;
    let mut live = chat.engine.live.subscribe();
    preempted_with_investigators_running(&chat, &chat.engine, &model, &customer, &id, &mut live)
        .await;

    let receipt = chat.engine.chat.stop_turn(&customer, &id).await.unwrap();
    assert!(!receipt.turn_stopping, "no turn runs");
    let mut stopping = receipt.subagents_stopping.clone();
    stopping.sort();
    assert_eq!(
        stopping,
        ["order 4821", "order 4822", "order 4823", "order 4824"]
    );
    let stored = until(&chat, &customer, &id, &mut live, |_, events| {
        events
            .iter()
            .filter(|e| e.kind == "subagent_finished")
            .count()
            == 4
    })
    .await;

    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    for finished in events.iter().filter(|e| e.kind == "subagent_finished") {
        assert_eq!(finished.event["outcome"], "stopped");
        assert_eq!(finished.event["stopped_during"], "model_call");
    }
    assert_eq!(model.running.load(Ordering::SeqCst), 0);
    assert_eq!(model.started.load(Ordering::SeqCst), 4);
    assert!(
        !stored
            .state
            .messages()
            .iter()
            .any(|m| m.tool_call_id.as_deref() == Some("inv~background")),
        "nothing they found after the Stop is recorded"
    );
    stored.state.check_consistency().unwrap();
    assert!(matches!(
        chat.engine.chat.stop_turn(&customer, &id).await,
        Err(ChatError::NoTurnRunning(_))
    ));
}

#[tokio::test]
async fn through_another_replica_a_now_message_leaves_the_investigators_running_and_a_stop_ends_them()
 {
    let model = HeldInvestigators::new(4);
    let chat = with_lane_of(4, model.clone()).await;
    let (customer, id) = chat.open("customer").await;
    let other = chat
        .another_engine(
            Assistant::new(model.clone())
                .unwrap()
                .with_subagent_limit(4),
        )
        .await;
    let mut live = chat.engine.live.subscribe();
    preempted_with_investigators_running(&chat, &other, &model, &customer, &id, &mut live).await;
    assert_eq!(
        model.running.load(Ordering::SeqCst),
        4,
        "a preempt from another replica is not a Stop"
    );

    let receipt = other.chat.stop_turn(&customer, &id).await.unwrap();
    assert!(receipt.background_elsewhere, "{receipt:?}");
    assert!(!receipt.turn_stopping);
    until(&chat, &customer, &id, &mut live, |_, events| {
        events
            .iter()
            .filter(|e| e.kind == "subagent_finished")
            .count()
            == 4
    })
    .await;
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    assert!(
        events
            .iter()
            .filter(|e| e.kind == "subagent_finished")
            .all(|e| e.event["outcome"] == "stopped")
    );
    assert_eq!(model.running.load(Ordering::SeqCst), 0);
}
