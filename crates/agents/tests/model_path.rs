//! The rules the runtime keeps around a real model server, whatever the
//! model does: played by a fake OpenAI-compatible server answering the way
//! GPT-4o, Ollama and vLLM answer (OpenAI's published response shape, with
//! each server's own fields and habits).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agents::{
    ConversationState, EventKind, FAILED_NOTE, Message, ModelError, OutcomeKind, OutputCapField,
    Provenance, Role, RunError, Runner, ToolOutcome, TurnControl, TurnOutcome, Usage, Workflow,
};
use common::openai::{ENDPOINT, config, model, tool_call};
use common::{FakeTool, agent, run_turn, run_turn_with};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// How each server shapes a completion.
#[derive(Clone, Copy)]
enum Style {
    /// OpenAI: `refusal`, `logprobs`, usage with token details.
    Gpt4o,
    /// Ollama's OpenAI endpoint: `fp_ollama`, plain usage.
    Ollama,
    /// vLLM: `reasoning_content`, `stop_reason`, an empty `tool_calls` list
    /// when it parsed none.
    Vllm,
}

fn completion(style: Style, message: Value, finish_reason: &str, usage: Option<Value>) -> Value {
    let mut message = message;
    let mut body = match style {
        Style::Gpt4o => {
            message["refusal"] = Value::Null;
            json!({
                "id": "chatcmpl-AB12", "object": "chat.completion", "created": 1_733_000_000,
                "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_50cad350e4",
                "choices": [{ "index": 0, "message": message, "logprobs": null,
                              "finish_reason": finish_reason }],
            })
        }
        Style::Ollama => json!({
            "id": "chatcmpl-412", "object": "chat.completion", "created": 1_733_000_000,
            "model": "qwen2.5:7b", "system_fingerprint": "fp_ollama",
            "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
        }),
        Style::Vllm => {
            message["reasoning_content"] = Value::Null;
            if message.get("tool_calls").is_none() {
                message["tool_calls"] = json!([]);
            }
            json!({
                "id": "chatcmpl-9f1c", "object": "chat.completion", "created": 1_733_000_000,
                "model": "mistralai/Mistral-7B-Instruct-v0.3",
                "choices": [{ "index": 0, "message": message, "logprobs": null,
                              "finish_reason": finish_reason, "stop_reason": null }],
                "prompt_logprobs": null,
            })
        }
    };
    if let Some(usage) = usage {
        body["usage"] = usage;
    }
    body
}

fn usage(prompt: u64, completion: u64) -> Value {
    json!({ "prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion })
}

fn text(content: &str) -> Value {
    json!({ "role": "assistant", "content": content })
}

fn calls(calls: Vec<Value>) -> Value {
    json!({ "role": "assistant", "content": null, "tool_calls": calls })
}

/// Answers requests in order from a script. With `strict_roles`, it refuses
/// a conversation whose roles do not alternate, as vLLM does for models
/// whose chat template requires it (Mistral, Gemma).
struct Script {
    answers: Mutex<VecDeque<ResponseTemplate>>,
    strict_roles: bool,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if self.strict_roles {
            let body: Value = request.body_json().unwrap();
            let roles: Vec<&str> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .filter(|role| *role != "system")
                .collect();
            if roles.windows(2).any(|pair| pair == ["user", "user"]) {
                return ResponseTemplate::new(400).set_body_json(json!({
                    "object": "error",
                    "message": "Conversation roles must alternate user/assistant/user/assistant/...",
                    "type": "BadRequestError", "param": null, "code": 400,
                }));
            }
        }
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script exhausted"))
    }
}

async fn server(answers: Vec<ResponseTemplate>, strict_roles: bool) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(Script {
            answers: Mutex::new(answers.into()),
            strict_roles,
        })
        .mount(&server)
        .await;
    server
}

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

fn runner(server: &MockServer) -> Runner {
    let mut config = config(server);
    config.max_retries = 0;
    Runner::new(Arc::new(model(config)))
}

fn workflow(tools: Vec<Arc<dyn agents::Tool>>) -> Workflow {
    Workflow::new(vec![agent("specialist", tools, &[])], "specialist").unwrap()
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}

fn assistant_texts(state: &ConversationState) -> Vec<String> {
    state
        .messages()
        .iter()
        .filter(|m| m.role == Role::Assistant && !m.content.is_empty())
        .map(|m| m.content.clone())
        .collect()
}

#[tokio::test]
async fn a_reply_cut_off_at_the_output_cap_is_never_shown_as_a_finished_answer() {
    let server = server(
        vec![ok(completion(
            Style::Ollama,
            text("Order 4821 was delivered 12 days ago (orde"),
            "length",
            Some(usage(2900, 1024)),
        ))],
        false,
    )
    .await;

    let ran = run_turn(&runner(&server), &workflow(vec![]), "check order 4821").await;

    assert!(
        matches!(
            &ran.result,
            Err(RunError::Model {
                source: ModelError::Truncated,
                ..
            })
        ),
        "{:?}",
        ran.result
    );
    // What the customer reads is the failure note, never the fragment.
    assert_eq!(assistant_texts(&ran.state), [FAILED_NOTE]);
    let events = ran.sink.kinds();
    assert!(events.iter().any(|k| matches!(
        k,
        EventKind::ModelCallFinished { finish_reason, .. } if finish_reason == "length"
    )));
    assert!(
        events
            .iter()
            .any(|k| matches!(k, EventKind::TurnFailed { error } if error.contains("cut off"))),
        "{events:?}"
    );
}

#[tokio::test]
async fn tool_call_markup_written_as_text_is_never_shown_and_the_model_is_told_to_call_the_tool() {
    for markup in [
        "<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"4821\"}}\n</tool_call>",
        "[TOOL_CALLS][{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"4821\"}}]",
        "<|python_tag|>{\"name\": \"get_order\", \"parameters\": {\"order_id\": \"4821\"}}",
    ] {
        // vLLM started without a tool-call parser hands the markup back as
        // the content; told once, the model calls the tool properly.
        let server = server(
            vec![
                ok(completion(
                    Style::Vllm,
                    text(markup),
                    "stop",
                    Some(usage(900, 40)),
                )),
                ok(completion(
                    Style::Vllm,
                    calls(vec![tool_call(
                        "chatcmpl-tool-1",
                        "get_order",
                        "{\"order_id\":\"4821\"}",
                    )]),
                    "tool_calls",
                    Some(usage(1000, 30)),
                )),
                ok(completion(
                    Style::Vllm,
                    text("Order 4821 was delivered 12 days ago."),
                    "stop",
                    Some(usage(1100, 20)),
                )),
            ],
            false,
        )
        .await;
        let get_order = FakeTool::new(
            "get_order",
            ToolOutcome::found(json!({ "days": 12 }), vec![]),
        );

        let ran = run_turn(
            &runner(&server),
            &workflow(vec![get_order.clone()]),
            "check order 4821",
        )
        .await;

        assert_eq!(
            ran.result.unwrap(),
            TurnOutcome::Answered {
                agent: "specialist".into(),
                content: "Order 4821 was delivered 12 days ago.".into()
            }
        );
        for shown in assistant_texts(&ran.state) {
            assert!(!shown.contains(markup), "shown to the customer: {shown}");
        }
        // The markup call did not run; the proper one did, once.
        assert_eq!(get_order.calls().len(), 1, "{markup}");
        let requests = bodies(&server).await;
        let correction = requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .unwrap();
        assert!(correction.contains("invalid_arguments"), "{correction}");
        assert!(correction.contains("written as text"), "{correction}");
    }
}

#[tokio::test]
async fn a_server_that_never_parses_tool_calls_fails_the_turn_after_one_correction() {
    let markup = "<tool_call>\n{\"name\": \"get_order\", \"arguments\": {}}\n</tool_call>";
    let server = server(
        vec![
            ok(completion(Style::Vllm, text(markup), "stop", None)),
            ok(completion(Style::Vllm, text(markup), "stop", None)),
            ok(completion(Style::Vllm, text(markup), "stop", None)),
        ],
        false,
    )
    .await;
    let get_order = FakeTool::new("get_order", ToolOutcome::found(json!({}), vec![]));

    let ran = run_turn(&runner(&server), &workflow(vec![get_order.clone()]), "hi").await;

    let Err(RunError::Model {
        source: ModelError::Malformed { message },
        ..
    }) = &ran.result
    else {
        panic!("{:?}", ran.result);
    };
    assert!(message.contains("--tool-call-parser"), "{message}");
    assert_eq!(bodies(&server).await.len(), 2, "one correction, then stop");
    assert!(get_order.calls().is_empty());
    assert_eq!(assistant_texts(&ran.state), [FAILED_NOTE]);
}

#[tokio::test]
async fn a_failed_turn_leaves_a_transcript_a_strict_chat_template_accepts_on_the_resend() {
    let server = server(
        vec![
            ResponseTemplate::new(503).set_body_json(json!({
                "object": "error", "message": "The model is overloaded", "type": "ServiceUnavailableError",
                "param": null, "code": 503,
            })),
            ok(completion(Style::Vllm, text("Hello! How can I help?"), "stop", Some(usage(50, 8)))),
        ],
        true,
    )
    .await;
    let runner = runner(&server);
    let workflow = workflow(vec![]);
    let first = run_turn(&runner, &workflow, "hello").await;
    assert!(first.result.is_err());

    let resend = run_turn_with(
        &runner,
        &workflow,
        first.state,
        "hello",
        &TurnControl::new(),
    )
    .await;

    assert_eq!(
        resend.result.unwrap(),
        TurnOutcome::Answered {
            agent: "specialist".into(),
            content: "Hello! How can I help?".into()
        }
    );
    let roles: Vec<Role> = resend.state.messages().iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
}

#[tokio::test]
async fn a_transcript_stored_by_an_older_version_after_a_failure_is_closed_before_the_next_message()
{
    let server = server(
        vec![ok(completion(
            Style::Vllm,
            text("Hello again."),
            "stop",
            None,
        ))],
        true,
    )
    .await;
    // What an older version stored after a failed turn: the message alone.
    let stored: ConversationState = serde_json::from_value(json!({
        "messages": [{ "role": "user", "content": "hello" }],
        "active_agent": "specialist",
        "turns": 1,
    }))
    .unwrap();
    stored.check_consistency().unwrap();

    let ran = run_turn_with(
        &runner(&server),
        &workflow(vec![]),
        stored,
        "hello?",
        &TurnControl::new(),
    )
    .await;

    ran.result.unwrap();
    assert!(ran.sink.kinds().iter().any(|k| matches!(
        k,
        EventKind::TranscriptRepaired {
            unanswered_message_closed: true,
            ..
        }
    )));
}

#[tokio::test]
async fn requests_carry_a_low_temperature_and_an_output_cap_in_the_field_the_server_wants() {
    let server = server(
        vec![
            ok(completion(Style::Ollama, text("one"), "stop", None)),
            ok(completion(Style::Gpt4o, text("two"), "stop", None)),
            ok(completion(Style::Gpt4o, text("three"), "stop", None)),
        ],
        false,
    )
    .await;
    let workflow = workflow(vec![]);
    let defaults = config(&server);
    run_turn(&runner(&server), &workflow, "hi")
        .await
        .result
        .unwrap();

    let mut reasoning = defaults.clone();
    reasoning.output_cap_field = OutputCapField::MaxCompletionTokens;
    reasoning.max_output_tokens = Some(4000);
    reasoning.temperature = Some(1.0);
    let runner_for = |config| Runner::new(Arc::new(model(config)));
    run_turn(&runner_for(reasoning), &workflow, "hi")
        .await
        .result
        .unwrap();

    let mut unset = defaults;
    unset.temperature = None;
    unset.max_output_tokens = None;
    run_turn(&runner_for(unset), &workflow, "hi")
        .await
        .result
        .unwrap();

    let requests = bodies(&server).await;
    assert_eq!(requests[0]["temperature"], json!(0.2));
    assert_eq!(requests[0]["max_tokens"], json!(1024));
    assert!(requests[0].get("max_completion_tokens").is_none());
    assert_eq!(requests[1]["max_completion_tokens"], json!(4000));
    assert_eq!(requests[1]["temperature"], json!(1.0));
    assert!(requests[1].get("max_tokens").is_none());
    assert!(requests[2].get("temperature").is_none());
    assert!(requests[2].get("max_tokens").is_none());
}

#[tokio::test]
async fn every_model_call_event_carries_its_token_usage_and_unreported_usage_is_unknown_not_zero() {
    let server = server(
        vec![
            ok(completion(
                Style::Gpt4o,
                calls(vec![tool_call("call_1", "get_order", "{}")]),
                "tool_calls",
                Some(
                    json!({ "prompt_tokens": 812, "completion_tokens": 19, "total_tokens": 831,
                             "prompt_tokens_details": { "cached_tokens": 0 },
                             "completion_tokens_details": { "reasoning_tokens": 0 } }),
                ),
            )),
            // A server that reports no usage at all.
            ok(completion(Style::Ollama, text("Done."), "stop", None)),
        ],
        false,
    )
    .await;
    let get_order = FakeTool::new("get_order", ToolOutcome::found(json!({}), vec![]));

    let ran = run_turn(&runner(&server), &workflow(vec![get_order]), "check").await;
    ran.result.unwrap();

    let usages: Vec<Option<Usage>> = ran
        .sink
        .kinds()
        .into_iter()
        .filter_map(|kind| match kind {
            EventKind::ModelCallFinished { usage, .. } => Some(usage),
            _ => None,
        })
        .collect();
    assert_eq!(
        usages,
        [
            Some(Usage {
                prompt_tokens: Some(812),
                completion_tokens: Some(19),
                total_tokens: Some(831),
            }),
            None,
        ]
    );
    // In the journal, unknown is an explicit null, never a 0.
    let recorded: Vec<Value> = ran
        .sink
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|e| e["type"] == "model_call_finished")
        .collect();
    assert_eq!(recorded[0]["usage"]["total_tokens"], 831);
    assert_eq!(recorded[1]["usage"], Value::Null);
    assert!(recorded[1].as_object().unwrap().contains_key("usage"));
}

#[tokio::test]
async fn a_found_result_reaches_the_model_once_without_its_audit_provenance() {
    let hash = "a3f1c2d4e5b6a7980112233445566778899aabbccddeeff00112233445566778";
    let passage = "Unopened items may be returned within 30 days of delivery for a full refund.";
    let found = ToolOutcome::found(
        json!({ "passages": [{ "reference": "returns-policy:section-3",
                               "version": &hash[..12], "passage": passage }] }),
        vec![Provenance {
            source: "returns-policy:section-3".into(),
            title: "Returns policy".into(),
            section: Some("3. Unopened items".into()),
            version: hash.into(),
            quote: Some(passage.into()),
        }],
    );
    let server = server(
        vec![
            ok(completion(
                Style::Gpt4o,
                calls(vec![tool_call("call_1", "search_policy", "{}")]),
                "tool_calls",
                None,
            )),
            ok(completion(
                Style::Gpt4o,
                text("Within 30 days."),
                "stop",
                None,
            )),
        ],
        false,
    )
    .await;

    let ran = run_turn(
        &runner(&server),
        &workflow(vec![FakeTool::new("search_policy", found)]),
        "returns?",
    )
    .await;
    ran.result.unwrap();

    let requests = bodies(&server).await;
    let shown = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap();
    assert_eq!(shown.matches(passage).count(), 1, "{shown}");
    assert!(!shown.contains(hash), "{shown}");
    assert!(shown.contains("returns-policy:section-3"), "{shown}");
    // The stored transcript keeps the full record the evidence cites.
    let stored = ran
        .state
        .messages()
        .iter()
        .find(|m| m.outcome == Some(OutcomeKind::Found))
        .and_then(Message::result_json)
        .unwrap();
    assert_eq!(stored["provenance"][0]["version"], hash);
}
