//! A fake OpenAI-compatible server and a client configured for it.

use std::time::Duration;

use agents::{Backoff, Message, ModelRequest, OpenAiCompatible, OpenAiConfig};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const ENDPOINT: &str = "/v1/chat/completions";

pub fn config(server: &MockServer) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(format!("{}/v1", server.uri()), "test-model");
    config.timeout = Duration::from_secs(5);
    config.max_retries = 2;
    config.backoff = Backoff {
        initial: Duration::from_millis(10),
        max: Duration::from_secs(2),
    };
    config
}

pub fn model(config: OpenAiConfig) -> OpenAiCompatible {
    OpenAiCompatible::new(config).unwrap()
}

pub fn completion(message: Value, finish_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
    }))
}

pub fn tool_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } })
}

pub fn request() -> ModelRequest {
    ModelRequest {
        system: "You are a test.".into(),
        messages: vec![Message::user("hello")],
        tools: vec![],
        agent: "a".into(),
    }
}

pub async fn mount(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(response)
        .mount(server)
        .await;
}

pub async fn received(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect()
}
