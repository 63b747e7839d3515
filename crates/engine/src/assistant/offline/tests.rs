use super::*;
use agents::{Message, ToolSpec};

fn request(agent: &str, messages: Vec<Message>, tools: &[&str]) -> ModelRequest {
    ModelRequest {
        system: String::new(),
        messages,
        tools: tools
            .iter()
            .map(|name| ToolSpec {
                name: (*name).to_owned(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect(),
        agent: agent.to_owned(),
    }
}

#[test]
fn its_name_says_it_is_rules_not_a_language_model() {
    assert_eq!(OfflineRules::new().name(), "countersign-offline-rules");
}

#[test]
fn the_coordinator_hands_refund_requests_to_the_specialist() {
    let response = respond(&request(
        COORDINATOR,
        vec![Message::user(
            "check order 4821 and refund it if it qualifies",
        )],
        &["search_policy", HANDOFF_TOOL],
    ));
    let call = &response.tool_calls[0];
    assert_eq!(call.name, HANDOFF_TOOL);
    assert_eq!(call.arguments["to"], REFUND_SPECIALIST);
}

#[test]
fn the_coordinator_searches_the_policy_for_a_policy_question() {
    let response = respond(&request(
        COORDINATOR,
        vec![Message::user(
            "what is your returns policy for unopened items?",
        )],
        &["search_policy", HANDOFF_TOOL],
    ));
    assert_eq!(response.tool_calls[0].name, "search_policy");
}

#[test]
fn it_says_plainly_when_it_does_not_understand() {
    let response = respond(&request(
        COORDINATOR,
        vec![Message::user("purple elephants dance")],
        &["search_policy", HANDOFF_TOOL],
    ));
    assert!(response.tool_calls.is_empty());
    let text = response.content.unwrap_or_default();
    assert!(text.contains("didn't understand"), "{text}");
    assert!(text.contains("not a language model"), "{text}");
}

#[test]
fn the_specialist_asks_for_the_order_number_when_none_was_given() {
    let response = respond(&request(
        REFUND_SPECIALIST,
        vec![Message::user("I want a refund")],
        &[
            "get_order",
            "search_policy",
            "record_unknown",
            "prepare_refund",
            HANDOFF_TOOL,
        ],
    ));
    assert_eq!(response.content.as_deref(), Some(text::WHICH_ORDER));
}

#[test]
fn the_specialist_looks_the_order_up_first() {
    let response = respond(&request(
        REFUND_SPECIALIST,
        vec![Message::user(
            "check order 4821 and refund it if it qualifies",
        )],
        &[
            "get_order",
            "search_policy",
            "record_unknown",
            "prepare_refund",
            HANDOFF_TOOL,
        ],
    ));
    assert_eq!(response.tool_calls[0].name, "get_order");
    assert_eq!(response.tool_calls[0].arguments["order_id"], "4821");
}

#[test]
fn a_tool_the_agent_lacks_is_not_called() {
    let response = respond(&request(
        REFUND_SPECIALIST,
        vec![Message::user("check order 4821")],
        &[],
    ));
    assert!(response.tool_calls.is_empty());
    assert!(
        response
            .content
            .unwrap_or_default()
            .contains("not available")
    );
}
