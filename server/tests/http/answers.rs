//! The approver reads the customer's answer as it was given: quoted, with a
//! link to the very message in the conversation, which the page anchors.

use crate::support::TestApp;
use engine::assistant::{Role, TurnControl};
use reqwest::StatusCode;

async fn actor(app: &TestApp, name: &str) -> engine::Actor {
    let user = storage::users::find_by_name(app.db().conn(), name)
        .await
        .unwrap()
        .unwrap();
    engine::Actor::from(user)
}

#[tokio::test]
async fn the_approver_sees_the_customers_answer_quoted_with_a_link_to_the_message_that_gave_it() {
    let app = TestApp::spawn().await;
    let customer = actor(&app, "customer").await;
    let conversation = app
        .engine
        .chat
        .create_conversation(&customer, None)
        .await
        .unwrap();
    let mut proposal = None;
    for text in [
        "check order 4821 and refund it if it qualifies",
        "hmm, not sure what you mean",
        "no, still sealed",
    ] {
        let turn = app
            .engine
            .chat
            .chat_turn(
                &customer,
                &conversation.id,
                text,
                engine::assistant::Priority::Later,
                TurnControl::new(),
            )
            .await
            .unwrap()
            .answered()
            .expect("no turn was running");
        proposal = proposal.or(turn.proposal_id);
    }
    let proposal = proposal.expect("a proposal once the customer answered");
    let stored = app
        .engine
        .chat
        .conversation(&customer, &conversation.id)
        .await
        .unwrap();
    let index = stored
        .state
        .messages()
        .iter()
        .position(|m| m.role == Role::User && m.content == "no, still sealed")
        .unwrap();
    let link = format!("/chat?conversation={}#m-{index}", conversation.id);

    app.login_ok("approver").await;
    let (status, page) = app.get_page(&format!("/proposals/{proposal}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"<q data-testid="answer">no, still sealed<"#),
        "the answer is quoted, and only it: {}",
        page.find("open-question")
            .map_or("", |at| &page[at..(at + 800).min(page.len())])
    );
    assert!(
        !page.contains("not sure what you mean"),
        "a reply that was not an answer is not shown as one"
    );
    assert!(
        page.contains(&format!(r#"href="{link}""#)),
        "the answer links to its message: {link}"
    );
    // The link lands on that message in the conversation the approver may read.
    let (status, chat) = app
        .get_page(&format!("/chat?conversation={}", conversation.id))
        .await;
    assert_eq!(status, StatusCode::OK);
    let anchor = chat
        .find(&format!(r#"id="m-{index}""#))
        .expect("the conversation page anchors each message");
    let message = &chat[anchor..];
    let end = message.find("</li>").unwrap();
    assert!(
        message[..end].contains("no, still sealed"),
        "{}",
        &message[..end]
    );
}

#[tokio::test]
async fn an_outside_agent_cannot_cite_a_customer_message_for_an_answer_the_customer_did_not_give() {
    let app = TestApp::spawn().await;
    let customer = actor(&app, "customer").await;
    let conversation = app
        .engine
        .chat
        .create_conversation(&customer, None)
        .await
        .unwrap();
    let said = "check order 4821 and refund it if it qualifies";
    app.engine
        .chat
        .chat_turn(
            &customer,
            &conversation.id,
            said,
            engine::assistant::Priority::Later,
            TurnControl::new(),
        )
        .await
        .unwrap()
        .answered()
        .expect("no turn was running");
    let agent = app
        .engine
        .accounts
        .create_token("agent", "tests")
        .await
        .unwrap()
        .secret;
    let propose = |answer: &str| {
        serde_json::json!({
            "order_id": "4821",
            "conversation_id": conversation.id,
            "evidence": [{"reference": "order:4821"}, {"reference": "returns-policy:section-3"}],
            "open_questions": [{
                "question": "Was the item opened?", "ask": "customer", "answer": answer,
                "answered_in": { "conversation_id": conversation.id, "message_index": 0,
                                 "at": "2020-01-01T00:00:00Z" },
            }],
            "recommendation": "Unopened, within 30 days: refund in full under section 3.",
        })
    };
    let post = |body: serde_json::Value| {
        app.bare_client()
            .post(app.url("/api/v1/proposals"))
            .bearer_auth(&agent)
            .json(&body)
            .send()
    };

    let forged = post(propose("no, still sealed")).await.unwrap();
    assert_eq!(forged.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let error = crate::support::json(forged).await;
    assert_eq!(error["error"]["code"], "invalid", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must quote message 0 word for word"),
        "{error}"
    );

    let quoted = post(propose(said)).await.unwrap();
    assert_eq!(quoted.status(), StatusCode::CREATED);
    let created = crate::support::json(quoted).await;
    let answered_in = &created["open_questions"][0]["answered_in"];
    assert_eq!(answered_in["message_index"], 0, "{created}");
    let sent_at = app
        .engine
        .chat
        .conversation(&customer, &conversation.id)
        .await
        .unwrap()
        .state
        .messages()[0]
        .at
        .unwrap();
    assert_eq!(
        answered_in["at"]
            .as_str()
            .map(|at| at.parse::<chrono::DateTime<chrono::Utc>>().unwrap()),
        Some(sent_at),
        "the time is the message's, not the one claimed"
    );
}
