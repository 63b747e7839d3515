//! The standard agents on a real OpenAI-compatible client, against a fake
//! server that answers like GPT-4o and Ollama: the rules that hold whatever
//! the model writes, through the real engine and storage.

use crate::support::Chat;
use agents::{Backoff, OpenAiCompatible, OpenAiConfig};
use domain::proposal::{Asker, OpenQuestion};
use engine::assistant::{Assistant, ChatError, FAILED_NOTE, TurnControl};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Plays completions in order.
struct Script(Mutex<VecDeque<Value>>);

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        match self.0.lock().unwrap().pop_front() {
            Some(body) => ResponseTemplate::new(200).set_body_json(body),
            None => ResponseTemplate::new(500).set_body_string("script exhausted"),
        }
    }
}

/// A completion shaped like GPT-4o's, with usage.
fn gpt4o(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-AB12", "object": "chat.completion", "created": 1_733_000_000,
        "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_50cad350e4",
        "choices": [{ "index": 0, "message": message, "logprobs": null,
                      "finish_reason": finish_reason }],
        "usage": { "prompt_tokens": 1500, "completion_tokens": 40, "total_tokens": 1540 },
    })
}

pub fn calls(calls: &[(&str, &str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({ "id": id, "type": "function",
                    "function": { "name": name, "arguments": arguments.to_string() } })
        })
        .collect();
    gpt4o(
        json!({ "role": "assistant", "content": null, "refusal": null, "tool_calls": calls }),
        "tool_calls",
    )
}

pub fn text(content: &str) -> Value {
    gpt4o(
        json!({ "role": "assistant", "content": content, "refusal": null }),
        "stop",
    )
}

/// The demo data, with the standard agents on an OpenAI-compatible client
/// talking to a fake server that plays `script`.
pub async fn chat_on(script: Vec<Value>) -> (Chat, MockServer) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Script(Mutex::new(script.into())))
        .mount(&server)
        .await;
    let mut config = OpenAiConfig::new(format!("{}/v1", server.uri()), "gpt-4o");
    config.timeout = Duration::from_secs(10);
    config.max_retries = 0;
    config.backoff = Backoff {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(10),
    };
    let model = Arc::new(OpenAiCompatible::new(config).unwrap());
    let chat = Chat::with(move |_| Assistant::new(model).unwrap()).await;
    (chat, server)
}

fn investigation(order_id: &str) -> Vec<Value> {
    vec![
        calls(&[("call_get", "get_order", json!({ "order_id": order_id }))]),
        calls(&[(
            "call_search",
            "search_policy",
            json!({ "query": "return unopened items within 30 days of delivery" }),
        )]),
    ]
}

fn ask_opened(id: &str) -> (&str, &str, Value) {
    (
        id,
        "record_unknown",
        json!({ "question": "Was the item opened?", "order_id": "4821" }),
    )
}

fn prepare(id: &str) -> (&str, &str, Value) {
    (
        id,
        "prepare_refund",
        json!({
            "order_id": "4821",
            "policy_references": ["returns-policy:section-3"],
            "recommendation": "Delivered 12 days ago and unopened: refund in full under section 3."
        }),
    )
}

#[tokio::test]
async fn a_refund_is_never_proposed_before_the_customer_answers_the_question_asked_about_the_order()
{
    // The question and the proposal in one response, in either order, or in
    // two responses of the same turn: the customer has not answered yet.
    let same_response = vec![calls(&[ask_opened("call_ask"), prepare("call_prepare")])];
    let proposal_first = vec![calls(&[prepare("call_prepare"), ask_opened("call_ask")])];
    let next_step = vec![
        calls(&[ask_opened("call_ask")]),
        calls(&[prepare("call_prepare")]),
    ];
    for (case, asking) in [
        ("same response", same_response),
        ("proposal first", proposal_first),
        ("next step", next_step),
    ] {
        let mut script = vec![calls(&[(
            "call_handoff",
            "handoff",
            json!({ "to": "refund_specialist", "reason": "refund request" }),
        )])];
        script.extend(investigation("4821"));
        script.extend(asking);
        script.push(text(
            "Order 4821 was delivered 12 days ago. Was the item opened?",
        ));
        // The next turn, after the customer's answer.
        script.push(calls(&[prepare("call_prepare_2")]));
        script.push(text("Proposal prepared; it is waiting for approval."));
        let (chat, _server) = chat_on(script).await;
        let (customer, id) = chat.open("customer").await;

        let first = chat
            .say(
                &customer,
                &id,
                "check order 4821 and refund it if it qualifies",
            )
            .await;

        assert_eq!(first.proposal_id, None, "{case}");
        assert!(chat.proposals_for("4821").await.is_empty(), "{case}");
        let stored = chat.reload(&customer, &id).await;
        let refused = crate::support::result_of(&stored, "call_prepare");
        assert_eq!(refused["outcome"], "refused", "{case}");
        assert!(
            refused["reason"]
                .as_str()
                .unwrap()
                .contains("has not answered \"Was the item opened?\""),
            "{case}: {refused}"
        );

        let second = chat.say(&customer, &id, "no, still sealed").await;
        let proposal = chat
            .proposal(&second.proposal_id.expect("a proposal after the answer"))
            .await
            .proposal;
        assert_eq!(
            proposal.open_questions,
            [OpenQuestion {
                question: "Was the item opened?".into(),
                ask: Asker::Customer,
                answer: Some("no, still sealed".into()),
                answered_in: Some(
                    crate::answers::answered_in(&chat, &customer, &id, "no, still sealed").await
                ),
            }],
            "{case}"
        );
    }
}

#[tokio::test]
async fn a_reply_cut_off_at_the_output_cap_fails_the_turn_with_a_could_not_finish_note_and_a_journaled_reason()
 {
    // Ollama's shape: no refusal field, finish_reason "length", usage.
    let cut_off = json!({
        "id": "chatcmpl-412", "object": "chat.completion", "created": 1_733_000_000,
        "model": "qwen2.5:7b", "system_fingerprint": "fp_ollama",
        "choices": [{ "index": 0, "finish_reason": "length",
                      "message": { "role": "assistant",
                                   "content": "Order 4821 was delivered 12 days ago (orde" } }],
        "usage": { "prompt_tokens": 2950, "completion_tokens": 1024, "total_tokens": 3974 },
    });
    let (chat, _server) = chat_on(vec![cut_off]).await;
    let (customer, id) = chat.open("customer").await;

    let failed = chat
        .engine
        .chat
        .chat_turn(
            &customer,
            &id,
            "where is order 4821?",
            engine::assistant::Priority::Later,
            TurnControl::new(),
        )
        .await;

    assert!(
        matches!(&failed, Err(ChatError::ModelFailed { kind, .. }) if kind == "truncated"),
        "{failed:?}"
    );
    let stored = chat.reload(&customer, &id).await;
    let texts: Vec<&str> = stored
        .state
        .messages()
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(texts, ["where is order 4821?", FAILED_NOTE]);
    let events = chat
        .engine
        .chat
        .conversation_events(&customer, &id)
        .await
        .unwrap();
    let call = events
        .iter()
        .find(|e| e.kind == "model_call_finished")
        .unwrap();
    assert_eq!(call.event["finish_reason"], "length");
    assert_eq!(call.event["usage"]["total_tokens"], 3974);
    let failure = events.iter().find(|e| e.kind == "turn_failed").unwrap();
    assert!(
        failure.event["error"].as_str().unwrap().contains("cut off"),
        "{}",
        failure.event
    );
}

/// The flagship flow for two orders in one conversation, as a model that
/// reads and cites like GPT-4o would drive it.
fn two_orders_script() -> Vec<Value> {
    let mut script = vec![calls(&[(
        "call_handoff",
        "handoff",
        json!({ "to": "refund_specialist", "reason": "refund request" }),
    )])];
    for (order, suffix) in [("4821", "a"), ("4823", "b")] {
        script.push(calls(&[(
            &format!("call_get_{suffix}"),
            "get_order",
            json!({ "order_id": order }),
        )]));
        script.push(calls(&[(
            &format!("call_search_{suffix}"),
            "search_policy",
            json!({ "query": "return unopened items within 30 days of delivery" }),
        )]));
        script.push(calls(&[(
            &format!("call_ask_{suffix}"),
            "record_unknown",
            json!({ "question": "Was the item opened?", "order_id": order }),
        )]));
        script.push(text(&format!(
            "Order {order} is within the 30-day window for unopened items. Was the item opened?"
        )));
        script.push(calls(&[(
            &format!("call_prepare_{suffix}"),
            "prepare_refund",
            json!({
                "order_id": order,
                "policy_references": ["returns-policy:section-3"],
                "recommendation": format!("Order {order} was delivered within 30 days and is unopened: refund what is left to refund under section 3.")
            }),
        )]));
        script.push(text(
            "I prepared the refund proposal; a member of our staff will approve it.",
        ));
    }
    script
}

#[tokio::test]
async fn two_orders_in_one_chat_send_each_passage_once_with_short_versions_and_fit_an_8k_context() {
    let (chat, server) = chat_on(two_orders_script()).await;
    let (customer, id) = chat.open("customer").await;
    for message in [
        "check order 4821 and refund it if it qualifies",
        "no, still sealed",
        "can you also refund order 4823?",
        "it's unopened, in the original packaging",
    ] {
        chat.say(&customer, &id, message).await;
    }
    // The evidence still cites the full policy versions.
    for order in ["4821", "4823"] {
        let proposals = chat.proposals_for(order).await;
        assert_eq!(proposals.len(), 1, "{order}");
        let policy = proposals[0]
            .proposal
            .evidence
            .iter()
            .find(|e| e.reference == "returns-policy:section-3")
            .unwrap();
        assert_eq!(policy.version.len(), 64, "{:?}", policy.version);
    }

    let requests = server.received_requests().await.unwrap();
    for request in &requests {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let text = String::from_utf8_lossy(&request.body);
        assert!(!has_full_hash(&text), "a 64-hex version was sent");
        for message in body["messages"].as_array().unwrap() {
            let Some(result) = message["content"]
                .as_str()
                .and_then(|c| serde_json::from_str::<Value>(c).ok())
            else {
                continue;
            };
            let content = message["content"].as_str().unwrap();
            for passage in result["value"]["passages"].as_array().into_iter().flatten() {
                let quoted = passage["passage"].as_str().unwrap();
                let quoted = serde_json::to_string(quoted).unwrap();
                let quoted = quoted.trim_matches('"');
                assert_eq!(content.matches(quoted).count(), 1, "{content}");
            }
        }
    }
    let sizes: Vec<usize> = requests.iter().map(|r| r.body.len()).collect();
    let largest = sizes.iter().copied().max().unwrap();
    if let Ok(dump) = std::env::var("DUMP_MODEL_REQUESTS") {
        for (index, request) in requests.iter().enumerate() {
            std::fs::write(format!("{dump}.{index}"), &request.body).unwrap();
        }
        let stored = chat.reload(&customer, &id).await;
        std::fs::write(
            format!("{dump}.state"),
            serde_json::to_string(&stored.state).unwrap(),
        )
        .unwrap();
    }
    // About four bytes a token: the largest request plus the output cap
    // fits the 8192-token context the README asks of an Ollama server.
    println!(
        "request sizes in bytes: {sizes:?}; largest {largest} (~{} tokens)",
        largest / 4
    );
    assert!(
        largest / 4 + 1024 <= 8192,
        "largest request {largest} bytes"
    );
}

/// Whether `text` holds 64 hex digits in a row (a full content hash).
fn has_full_hash(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run >= 64 {
            return true;
        }
    }
    false
}
