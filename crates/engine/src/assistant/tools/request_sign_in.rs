//! `request_sign_in`: the visitor chatting has not signed in, and the agent
//! needs their orders. The turn asks them to sign in and waits for it,
//! inside the turn: the page shows a sign-in link while the conversation's
//! row says so, and signing in (in any tab, on any replica) resumes this
//! same call with the conversation bound to the person who signed in. The
//! wait holds no thread and no database connection, ends at Stop like any
//! tool call, and gives up after [`SIGN_IN_WAIT`].

use super::{REQUEST_SIGN_IN, scope};
use crate::core::Actor;
use agents::{Tool, ToolContext, ToolOutcome};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How long a turn waits for the visitor to sign in.
pub const SIGN_IN_WAIT: chrono::Duration = chrono::Duration::minutes(10);

#[derive(Debug, Clone, Copy, Default)]
pub struct RequestSignIn;

/// How a wait for the visitor to sign in ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// They signed in as this customer; the conversation is theirs now.
    SignedIn(Actor),
    /// The wait's bound passed first.
    TimedOut,
}

/// What the model reads back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInOutcome {
    /// `signed_in`.
    pub status: String,
    /// The name the customer signed in as.
    pub customer: String,
    /// What to do next.
    pub instruction: String,
}

#[async_trait]
impl Tool for RequestSignIn {
    fn name(&self) -> &str {
        REQUEST_SIGN_IN
    }

    fn description(&self) -> &str {
        "Call this when a tool answers that the customer has not signed in. The customer is asked to sign in and this call waits (up to 10 minutes) until they have; then repeat the call that was refused. If it answers unknown, they did not sign in: tell them to sign in and ask again."
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    async fn call(&self, ctx: &ToolContext, _args: Value) -> ToolOutcome {
        let scope = match scope(ctx) {
            Ok(scope) => scope,
            Err(outcome) => return outcome,
        };
        if scope.customer_id().is_some() {
            return signed_in(&scope.actor(), "The customer is signed in already; go on.");
        }
        let until = scope.tools.now() + SIGN_IN_WAIT;
        match scope
            .tools
            .await_sign_in(&scope.conversation_id, until)
            .await
        {
            Ok(SignIn::SignedIn(customer)) => {
                scope.signed_in(customer.clone());
                signed_in(
                    &customer,
                    "The customer signed in; repeat the call that was refused.",
                )
            }
            Ok(SignIn::TimedOut) => ToolOutcome::unknown(format!(
                "the customer did not sign in within {} minutes, so none of their orders was read",
                SIGN_IN_WAIT.num_minutes()
            )),
            Err(error) => {
                tracing::warn!(%error, "waiting for the visitor to sign in failed");
                ToolOutcome::unknown(
                    "whether the customer has signed in could not be read just now; none of their orders was read",
                )
            }
        }
    }
}

fn signed_in(customer: &Actor, instruction: &str) -> ToolOutcome {
    let outcome = SignInOutcome {
        status: "signed_in".to_owned(),
        customer: customer.name.clone(),
        instruction: instruction.to_owned(),
    };
    ToolOutcome::found(
        serde_json::to_value(&outcome).unwrap_or_default(),
        Vec::new(),
    )
}
